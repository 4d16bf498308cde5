package cli

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/localtable/localtable/server"
)

// The paths of the tools served beside the REST API. No account is named
// "-" (account names are lower-case letters and digits), and the REST API
// answers "/" itself only with an error, so neither shadows it.
const (
	explorerPrefix = "/-/explorer/"
	adminPrefix    = "/-/admin/"
	backupPath     = adminPrefix + "backup"
)

// toolsConfig is what the explorer and the admin endpoints serve.
type toolsConfig struct {
	accounts []server.AccountConfig
	engines  map[string]servedEngine // each account's engine, by name
	noAuth   bool
	explorer bool
	log      *slog.Logger
}

// mountTools serves the explorer at / and /-/explorer/…, the admin
// endpoints at /-/admin/…, and everything else with api.
func mountTools(api http.Handler, cfg *toolsConfig) http.Handler {
	var ui http.Handler
	if cfg.explorer {
		ui = newExplorer(cfg)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		switch {
		case ui != nil && (p == "/" || strings.HasPrefix(p, explorerPrefix)):
			ui.ServeHTTP(w, r)
		case p == backupPath:
			serveBackup(w, r, cfg)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// serveBackup answers GET /-/admin/backup?account=NAME with a backup
// archive of the account, read from one snapshot of its store while it
// serves. The request is signed as Shared Key Lite is, with the account's
// key: Authorization "SharedKeyLite NAME:SIG", SIG the base64 HMAC-SHA256
// of x-ms-date + "\n/" + NAME + "/-/admin/backup", the date within 15
// minutes of the server's clock. With --no-auth no signature is needed.
func serveBackup(w http.ResponseWriter, r *http.Request, cfg *toolsConfig) {
	if r.Method != http.MethodGet {
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	name := r.URL.Query().Get("account")
	var acct *server.AccountConfig
	for i := range cfg.accounts {
		if cfg.accounts[i].Name == name {
			acct = &cfg.accounts[i]
		}
	}
	if acct == nil {
		http.Error(w, fmt.Sprintf("no account %q is served", name), http.StatusNotFound)
		return
	}
	if !cfg.noAuth {
		if err := verifyAdminSignature(r, acct.Name, acct.Key, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
	}
	se := cfg.engines[acct.Name]
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+acct.Name+`.ltbk"`)
	n, err := writeArchive(w, se.eng, acct.Name, se.kind.name)
	if err != nil {
		// The status is sent: the archive stays without its trailer, which
		// the reader refuses.
		cfg.log.Error("backup", "account", acct.Name, "records", n, "err", err)
		return
	}
	cfg.log.Info("backup", "account", acct.Name, "records", n)
}

// adminStringToSign is what an admin request's signature covers.
func adminStringToSign(date, account, path string) string {
	return date + "\n/" + account + path
}

// signAdmin returns the signature of an admin request.
func signAdmin(key []byte, date, account, path string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(adminStringToSign(date, account, path)))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// verifyAdminSignature checks an admin request's Shared Key Lite
// signature and date.
func verifyAdminSignature(r *http.Request, account string, key []byte, now time.Time) error {
	date := r.Header.Get("X-Ms-Date")
	t, err := http.ParseTime(date)
	if err != nil {
		return fmt.Errorf("the request needs an x-ms-date header (RFC 1123)")
	}
	if d := now.Sub(t); d > server.MaxRequestDateSkew || d < -server.MaxRequestDateSkew {
		return fmt.Errorf("the request's date is more than %v from the server's clock", server.MaxRequestDateSkew)
	}
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	name, sig, _ := strings.Cut(cred, ":")
	if scheme != "SharedKeyLite" || name != account {
		return fmt.Errorf("the request needs Authorization: SharedKeyLite %s:SIGNATURE", account)
	}
	want := signAdmin(key, date, account, r.URL.EscapedPath())
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return fmt.Errorf("the signature does not match")
	}
	return nil
}
