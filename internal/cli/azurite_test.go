package cli

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/server"
)

// azuriteCase is a command line of Azurite's README and what localtable
// must do with it (testdata/azurite-readme.txt).
type azuriteCase struct {
	line  int
	env   []string
	args  []string // the command line, its program name first
	wants [][2]string
}

// readAzuriteCases reads testdata/azurite-readme.txt.
func readAzuriteCases(t *testing.T) []azuriteCase {
	t.Helper()
	f, err := os.Open("testdata/azurite-readme.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []azuriteCase
	var c *azuriteCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
		case strings.TrimSpace(line) == "":
			c = nil
		case strings.HasPrefix(line, "env "):
			if c == nil {
				cases = append(cases, azuriteCase{line: n})
				c = &cases[len(cases)-1]
			}
			c.env = append(c.env, strings.TrimPrefix(line, "env "))
		case strings.HasPrefix(line, "want "):
			what, arg, _ := strings.Cut(strings.TrimPrefix(line, "want "), " ")
			c.wants = append(c.wants, [2]string{what, arg})
		default:
			if c == nil {
				cases = append(cases, azuriteCase{line: n})
				c = &cases[len(cases)-1]
			}
			c.line, c.args = n, strings.Fields(line)
		}
	}
	if len(cases) < 10 {
		t.Fatalf("%d cases in testdata/azurite-readme.txt", len(cases))
	}
	return cases
}

// TestAzuriteCommandLines runs the command lines that start Azurite in
// its README with localtable in the place of azurite and azurite-table
// (see testdata/azurite-readme.txt), as real processes, and talks to each
// with the Azure SDK for Go.
func TestAzuriteCommandLines(t *testing.T) {
	bin := buildBinary(t)
	for _, c := range readAzuriteCases(t) {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if !slices.Contains([]string{"azurite", "azurite-table"}, c.args[0]) {
				t.Fatalf("line %d: %s is not Azurite's command", c.line, c.args[0])
			}
			dir := t.TempDir()
			certFile, keyFile, pool := selfSigned(t)
			for from, to := range map[string]string{certFile: "127.0.0.1.pem", keyFile: "127.0.0.1-key.pem"} {
				b, err := os.ReadFile(from)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range []string{dir, filepath.Join(dir, "workspace")} {
					if err := os.MkdirAll(d, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(d, to), b, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			// /data and /workspace are under dir; the port is any free one.
			local := func(s string) string {
				for _, root := range []string{"/data", "/workspace"} {
					if s == root || strings.HasPrefix(s, root+"/") {
						return dir + s
					}
				}
				return s
			}
			var args []string
			port := false
			for i := 1; i < len(c.args); i++ {
				a := local(c.args[i])
				if a == "--tablePort" && i+1 < len(c.args) {
					args, port = append(args, a, "0"), true
					i++
					continue
				}
				args = append(args, a)
			}
			if !port {
				args = append(args, "--tablePort", "0")
			}
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "AZURITE_ACCOUNTS=", "AZURITE_SKIP_API_VERSION_CHECK=")
			cmd.Env = append(cmd.Env, c.env...)
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
			if i := slices.IndexFunc(c.wants, func(w [2]string) bool { return w[0] == "error" }); i >= 0 {
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.wants[i][1]) {
					t.Fatalf("line %d: %v, want exit 2 saying %q:\n%s", c.line, err, c.wants[i][1], out)
				}
				return
			}
			p := &process{cmd: cmd, client: client}
			p.cmd.Stderr = &p.stderr
			startWith(t, p)
			for _, w := range c.wants {
				if w[0] != "silent" && w[0] != "accesslog" {
					checkAzuriteWant(t, c, w, p, dir, local, client)
				}
			}
			if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			if err := p.cmd.Wait(); err != nil {
				t.Fatalf("exit: %v\n%s", err, p.stderr.String())
			}
			// What the process wrote on stderr, once it has ended.
			for _, w := range c.wants {
				if w[0] == "silent" || w[0] == "accesslog" {
					checkAzuriteWant(t, c, w, p, dir, local, client)
				}
			}
		})
	}
}

// checkAzuriteWant checks one want of a case against the running process.
func checkAzuriteWant(t *testing.T, c azuriteCase, w [2]string, p *process, dir string, local func(string) string, client *http.Client) {
	t.Helper()
	ctx := context.Background()
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: client, Retry: policy.RetryOptions{MaxRetries: -1}}}
	switch w[0] {
	case "serve":
		svc, err := aztables.NewServiceClientFromConnectionString(p.connString, opts)
		if err != nil {
			t.Fatal(err)
		}
		tc := svc.NewClient("azurite")
		if _, err := tc.CreateTable(ctx, nil); err != nil {
			t.Fatalf("line %d: create table: %v", c.line, err)
		}
		b, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": "r", "From": "the README"})
		if _, err := tc.AddEntity(ctx, b, nil); err != nil {
			t.Fatalf("line %d: add entity: %v", c.line, err)
		}
		got, err := tc.GetEntity(ctx, "p", "r", nil)
		if err != nil || !strings.Contains(string(got.Value), `"From":"the README"`) {
			t.Fatalf("line %d: get entity: %v %s", c.line, err, got.Value)
		}
	case "banner":
		if !strings.Contains(p.banner.String(), w[1]) {
			t.Errorf("line %d: the banner does not say %q:\n%s", c.line, w[1], p.banner.String())
		}
	case "debuglog":
		name := local(w[1])
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		b, err := os.ReadFile(name)
		if err != nil || !strings.Contains(string(b), "msg=request") || !strings.Contains(string(b), "level=DEBUG") {
			t.Errorf("line %d: debug log %s (%v):\n%s", c.line, name, err, b)
		}
	case "accesslog": // once the process has ended
		if !strings.Contains(p.stderr.String(), "msg=request") {
			t.Errorf("line %d: no request on the console:\n%s", c.line, p.stderr.String())
		}
	case "silent": // once the process has ended
		if strings.Contains(p.stderr.String(), "msg=request") {
			t.Errorf("line %d: requests logged on the console:\n%s", c.line, p.stderr.String())
		}
	case "anyversion":
		req, _ := http.NewRequest("GET", strings.TrimSuffix(p.endpoint, "/")+"/Tables", nil)
		req.Header.Set("x-ms-version", "2099-01-01")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// 403: served (past the version check), refused for want of
		// credentials; an unknown version would be 400.
		if resp.StatusCode != 403 || resp.Header.Get("x-ms-version") != server.LatestVersion {
			t.Errorf("line %d: x-ms-version 2099-01-01: %d %q", c.line, resp.StatusCode, resp.Header.Get("x-ms-version"))
		}
	case "key":
		account, key, _ := strings.Cut(w[1], " ")
		cred, err := aztables.NewSharedKeyCredential(account, key)
		if err != nil {
			t.Fatal(err)
		}
		base := p.endpoint[:strings.LastIndex(strings.TrimSuffix(p.endpoint, "/"), "/")+1]
		svc, err := aztables.NewServiceClientWithSharedKey(base+account+"/", cred, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CreateTable(ctx, "signedwith"+strings.ReplaceAll(key, "=", ""), nil); err != nil {
			t.Errorf("line %d: %s with %s: %v", c.line, account, key, err)
		}
	default:
		t.Fatalf("line %d: unknown want %q", c.line, w[0])
	}
}

// Azurite's flags and environment give serve's configuration, refuse what
// contradicts serve's own flags, and say in the notes where they differ
// from Azurite.
func TestParseAzuriteFlags(t *testing.T) {
	c := commands["serve"]
	parse := func(vars map[string]string, args ...string) (*serveConfig, error) {
		e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
		return parseServe(e, c, args)
	}
	cfg, err := parse(nil, "--tableHost", "0.0.0.0", "--tablePort", "9999", "--tableKeepAliveTimeout", "7", "-s", "-L", "-d", "x/debug.log", "--oauth", "Basic")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.addr != "0.0.0.0:9999" || cfg.idleTimeout != 7*time.Second || !cfg.azurite.silent || !cfg.azurite.loose || cfg.azurite.debug != "x/debug.log" || cfg.oauth != "basic" {
		t.Errorf("config %+v", cfg)
	}
	if cfg, err = parse(nil, "--tableHost", "::1"); err != nil || cfg.addr != "[::1]:10002" {
		t.Errorf("--tableHost ::1: %v %q", err, cfg.addr)
	}
	if cfg, err = parse(nil); err != nil || cfg.addr != "127.0.0.1:10002" || len(cfg.notes) != 0 {
		t.Errorf("no flags: %v %q %q", err, cfg.addr, cfg.notes)
	}
	for _, bad := range [][]string{
		{"--addr", "127.0.0.1:1", "--tablePort", "2"},
		{"--idle-timeout", "1s", "--tableKeepAliveTimeout", "2"},
		{"--tablePort", "70000"},
		{"--inMemoryPersistence", "-l", "data"},
		{"--cert", "c.pfx", "--pwd", "secret"},
		{"--tableKeepAliveTimeout", "-1"},
	} {
		if _, err := parse(nil, bad...); exitCode(err) != 2 {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
	cfg, err = parse(map[string]string{azuriteAccountsEnv: " acct1:a2V5MQ==:a2V5Mg==;acct2:a2V5Mw==; "})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.accounts) != 2 || string(cfg.accounts[0].Key) != "key1" || string(cfg.accounts[0].SecondaryKey) != "key2" ||
		cfg.accounts[1].Name != "acct2" || string(cfg.accounts[1].Key) != "key3" || cfg.accounts[1].SecondaryKey != nil {
		t.Errorf("AZURITE_ACCOUNTS: %+v", cfg.accounts)
	}
	cfg, err = parse(map[string]string{azuriteAccountsEnv: "acct1:a2V5MQ=="}, "--account", "mine:a2V5MQ==")
	if err != nil || len(cfg.accounts) != 1 || cfg.accounts[0].Name != "mine" || !strings.Contains(strings.Join(cfg.notes, "\n"), "AZURITE_ACCOUNTS is set but not used") {
		t.Errorf("--account and AZURITE_ACCOUNTS: %v %+v %q", err, cfg.accounts, cfg.notes)
	}
	for _, bad := range []string{"acct1", "acct1:k:k:k", ":a2V5MQ==", "acct1:not base64!", "a:a2V5MQ==;a:a2V5MQ==", ";;"} {
		_, err := parse(map[string]string{azuriteAccountsEnv: bad})
		if exitCode(err) != 2 || !strings.Contains(err.Error(), azuriteAccountsEnv) || strings.Contains(err.Error(), "a2V5MQ") {
			t.Errorf("AZURITE_ACCOUNTS=%q: %v, want a usage error naming it and no key", bad, err)
		}
	}
	if cfg, err = parse(map[string]string{azuriteSkipAPIVersionEnv: "TRUE"}); err != nil || cfg.azurite.skipAPIVersion {
		t.Errorf("%s=TRUE (Azurite takes only true): %v %v", azuriteSkipAPIVersionEnv, err, cfg.azurite.skipAPIVersion)
	}
	// Azurite's data under --location is named in the banner, not read.
	dir := t.TempDir()
	if azuriteDataNote(dir, "http://127.0.0.1:10002/devstoreaccount1") != "" {
		t.Errorf("a note for a directory without Azurite's data")
	}
	if err := os.WriteFile(filepath.Join(dir, azuriteTableDB), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The note says steps that work (Azurite has no export command).
	if n := azuriteDataNote(dir, "http://127.0.0.1:10002/devstoreaccount1"); !strings.Contains(n, "WARNING") || !strings.Contains(n, "does not read it") ||
		strings.Contains(n, "export them with Azurite") ||
		!strings.Contains(n, "azurite-table -l "+dir+" --tablePort 10012") ||
		!strings.Contains(n, "localtable export TABLE --endpoint http://127.0.0.1:10012/devstoreaccount1 | localtable import TABLE - --create --endpoint http://127.0.0.1:10002/devstoreaccount1") {
		t.Errorf("note %q", n)
	}
}

// serve defines every flag that Azurite's azurite-table and azurite
// define, with its short form (testdata/azurite-help.txt is their --help,
// from npm's azurite); -h and --help are the flag package's own.
func TestServeHasAzuriteFlags(t *testing.T) {
	b, err := os.ReadFile("testdata/azurite-help.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cfg serveConfig
	fs := serveFlags(commands["serve"], &cfg)
	opt := regexp.MustCompile(`(?m)^\s+-(\w*), --(\w+)`)
	matches := opt.FindAllStringSubmatch(string(b), -1)
	if len(matches) < 30 {
		t.Fatalf("%d options in testdata/azurite-help.txt", len(matches))
	}
	for _, m := range matches {
		for _, name := range []string{m[1], m[2]} {
			if name != "" && name != "h" && name != "help" && fs.Lookup(name) == nil {
				t.Errorf("serve has no flag -%s (Azurite's -%s, --%s)", name, m[1], m[2])
			}
		}
	}
	stdout, _, err := runCmd("--tablePort", "0", "-v")
	if err != nil || !strings.HasPrefix(stdout, "localtable ") {
		t.Errorf("-v after Azurite's flags: %v %q", err, stdout)
	}
}
