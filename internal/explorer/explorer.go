// Package explorer is localtable's web explorer: a small set of
// server-rendered pages (html/template, a little JavaScript, everything
// embedded) to browse and edit the tables of localtable accounts in a
// browser. The command mounts it beside the REST API.
//
// # Security
//
// Unless Options.NoAuth, every page but the login asks for a session: the
// login form takes an account's name and key, checks the key, and sets a
// cookie (HttpOnly, SameSite=Strict, Secure over HTTPS) holding the
// account, an expiry and an HMAC of both under a key drawn at start, so
// sessions end with the process. A session opens its own account only.
// The one login without a key is devstoreaccount1's under the emulator's
// well-known key (no secret), and only for a request from a loopback
// address that no proxy forwarded (see oneClick): a server reachable from
// elsewhere still asks every remote browser for the key.
// Every form that changes something carries a token that must equal a
// second cookie (double submit; that cookie is SameSite=Strict too), and a
// POST whose Origin is not the server's own is refused, so another site
// cannot drive the explorer even with --no-auth. Responses forbid framing
// and inline scripts (Content-Security-Policy), and are not cached.
// The Changes view's stream (changes.go) is a GET under the same session,
// read by the page's own script with fetch(): it changes nothing.
package explorer

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// Account is an account the explorer shows.
type Account struct {
	Name string              // the account name, as the explorer shows it
	Key  []byte              // the key the login form checks
	Data *localtable.Account // the account's tables
}

// Options configure the explorer.
type Options struct {
	Accounts []Account // the accounts shown, in order
	// NoAuth opens every account without a login.
	NoAuth bool
	// Prefix is the path the explorer is mounted at, ending in "/", such
	// as "/-/explorer/". It also answers "/" with a redirect there.
	Prefix string
	// Logger receives errors; nil means slog.Default().
	Logger *slog.Logger
	// Clock is the time source for sessions; nil means time.Now.
	Clock func() time.Time
}

// SessionTTL is how long a login lasts.
const SessionTTL = 12 * time.Hour

const (
	sessionCookie = "lt_session"
	csrfCookie    = "lt_csrf"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Explorer is the explorer's http.Handler.
type Explorer struct {
	opts     Options
	accounts map[string]*Account
	names    []string
	secret   []byte
	pages    map[string]*template.Template
	static   http.Handler
	log      *slog.Logger
	now      func() time.Time
}

// countOf is n and its noun: "1 entity", "2 entities", "0 entities".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// New returns the explorer for opts.
func New(opts Options) *Explorer {
	x := &Explorer{opts: opts, accounts: map[string]*Account{}, secret: make([]byte, 32), log: opts.Logger, now: opts.Clock}
	if x.opts.Prefix == "" {
		x.opts.Prefix = "/-/explorer/"
	}
	if x.log == nil {
		x.log = slog.Default()
	}
	if x.now == nil {
		x.now = time.Now
	}
	rand.Read(x.secret)
	for i := range opts.Accounts {
		a := &opts.Accounts[i]
		x.accounts[a.Name] = a
		x.names = append(x.names, a.Name)
	}
	funcs := template.FuncMap{
		"text":      valueText,
		"short":     shortText,
		"edmKinds":  func() []string { return edmKinds },
		"add":       func(a, b int) int { return a + b },
		"join":      strings.Join,
		"in":        func(s string, list []string) bool { return slices.Contains(list, s) },
		"blankProp": func() propForm { return propForm{Type: "Edm.String"} },
		"count":     countOf,
	}
	x.pages = map[string]*template.Template{}
	for _, p := range []string{"login", "accounts", "tables", "table", "entity", "changes", "error"} {
		x.pages[p] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+p+".html"))
	}
	sub, _ := fs.Sub(staticFS, "static")
	x.static = http.StripPrefix(x.opts.Prefix+"static/", http.FileServer(http.FS(sub)))
	return x
}

// ServeHTTP serves the explorer's pages.
func (x *Explorer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	p := r.URL.EscapedPath()
	if p == "/" || p+"/" == x.opts.Prefix {
		http.Redirect(w, r, x.opts.Prefix, http.StatusSeeOther)
		return
	}
	rest, ok := strings.CutPrefix(p, x.opts.Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if strings.HasPrefix(rest, "static/") {
		h.Set("Cache-Control", "max-age=300")
		x.static.ServeHTTP(w, r)
		return
	}
	if r.Method == http.MethodPost && !x.sameOrigin(r) {
		http.Error(w, "cross-origin form refused", http.StatusForbidden)
		return
	}
	token := x.csrfToken(w, r)
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(token)) {
			x.render(w, r, http.StatusForbidden, "error", &page{CSRF: token, Error: "The form has expired or did not come from this page: reload it and try again."})
			return
		}
	}
	switch {
	case rest == "login":
		x.serveLogin(w, r, token)
		return
	case rest == "logout" && r.Method == http.MethodPost:
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: x.opts.Prefix, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		http.Redirect(w, r, x.opts.Prefix+"login", http.StatusSeeOther)
		return
	case rest == "":
		x.serveAccounts(w, r, token)
		return
	}
	// a/{account}/…
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 || parts[0] != "a" {
		http.NotFound(w, r)
		return
	}
	name, err := url.PathUnescape(parts[1])
	acct := x.accounts[name]
	if err != nil || acct == nil {
		x.render(w, r, http.StatusNotFound, "error", &page{CSRF: token, Error: "No account " + strconv.Quote(name) + " is served here."})
		return
	}
	if !x.authorized(r, name) {
		http.Redirect(w, r, x.opts.Prefix+"login?account="+url.QueryEscape(name), http.StatusSeeOther)
		return
	}
	sub := ""
	if len(parts) == 3 {
		sub = parts[2]
	}
	x.serveAccount(w, r, acct, sub, token)
}

// sameOrigin reports whether a POST comes from the explorer's own origin:
// its Origin header (or, without one, its Referer) names this host.
func (x *Explorer) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		o = r.Header.Get("Referer")
	}
	if o == "" || o == "null" {
		return o == "" // a client that sends neither is not a browser on another site
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// csrfToken returns the request's form token, setting its cookie if the
// browser has none.
func (x *Explorer) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	b := make([]byte, 24)
	rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: v, Path: x.opts.Prefix, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return v
}

// sign returns the MAC of a session payload.
func (x *Explorer) sign(payload string) string {
	m := hmac.New(sha256.New, x.secret)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// session returns a cookie value for account, valid for SessionTTL.
func (x *Explorer) session(account string) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(account)) + "." + strconv.FormatInt(x.now().Add(SessionTTL).Unix(), 10)
	return payload + "." + x.sign(payload)
}

// authorized reports whether the request may open account.
func (x *Explorer) authorized(r *http.Request, account string) bool {
	if x.opts.NoAuth {
		return true
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(c.Value, '.')
	if i < 0 {
		return false
	}
	payload, mac := c.Value[:i], c.Value[i+1:]
	if !hmac.Equal([]byte(mac), []byte(x.sign(payload))) {
		return false
	}
	enc, exp, ok := strings.Cut(payload, ".")
	name, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok || err != nil || string(name) != account {
		return false
	}
	t, err := strconv.ParseInt(exp, 10, 64)
	return err == nil && x.now().Unix() < t
}

// devKey is the emulator's well-known key.
var devKey, _ = base64.StdEncoding.DecodeString(server.DevAccountKey)

// oneClick reports whether the login may open acct without its key: only
// the emulator's account (devstoreaccount1) under its well-known key,
// which is no secret, and only for a request over loopback that no proxy
// forwarded, so that a server reachable from elsewhere still asks every
// remote browser for the key.
func oneClick(r *http.Request, acct *Account) bool {
	if acct == nil || acct.Name != server.DevAccountName || !hmac.Equal(acct.Key, devKey) {
		return false
	}
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Real-Ip"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	ip, perr := netip.ParseAddr(host)
	return err == nil && perr == nil && ip.Unmap().IsLoopback()
}

func (x *Explorer) serveLogin(w http.ResponseWriter, r *http.Request, token string) {
	pg := &page{CSRF: token, Accounts: x.names, Selected: r.FormValue("account")}
	if pg.Selected == "" && len(x.names) > 0 {
		pg.Selected = x.names[0]
	}
	if a := x.accounts[server.DevAccountName]; oneClick(r, a) {
		pg.OneClick = a.Name
	}
	if r.Method == http.MethodPost {
		acct := x.accounts[pg.Selected]
		if r.PostForm.Get("oneclick") == "1" && !oneClick(r, acct) {
			pg.Error = "Only the emulator's account, " + server.DevAccountName + " with its well-known key, opens without a key, and only from this machine (loopback)."
			x.render(w, r, http.StatusForbidden, "login", pg)
			return
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(r.PostForm.Get("key")))
		if acct != nil && (r.PostForm.Get("oneclick") == "1" || err == nil && hmac.Equal(key, acct.Key)) {
			http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: x.session(acct.Name), Path: x.opts.Prefix,
				MaxAge: int(SessionTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
			http.Redirect(w, r, x.accountURL(acct.Name), http.StatusSeeOther)
			return
		}
		pg.Error = "That is not the key of account " + strconv.Quote(pg.Selected) + "."
		x.render(w, r, http.StatusForbidden, "login", pg)
		return
	}
	x.render(w, r, http.StatusOK, "login", pg)
}

func (x *Explorer) serveAccounts(w http.ResponseWriter, r *http.Request, token string) {
	if len(x.names) == 1 {
		http.Redirect(w, r, x.accountURL(x.names[0]), http.StatusSeeOther)
		return
	}
	x.render(w, r, http.StatusOK, "accounts", &page{CSRF: token, Accounts: x.names})
}

// accountURL is the tables page of an account.
func (x *Explorer) accountURL(name string) string {
	return x.opts.Prefix + "a/" + url.PathEscape(name) + "/"
}

// render writes a page.
func (x *Explorer) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	p.Prefix = x.opts.Prefix
	p.NoAuth = x.opts.NoAuth
	if p.AccountURL == "" && p.Account != "" {
		p.AccountURL = x.accountURL(p.Account)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := x.pages[name].Execute(w, p); err != nil {
		x.log.Error("explorer: rendering", "page", name, "err", err)
	}
}
