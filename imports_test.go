package localtable_test

import (
	"os/exec"
	"strings"
	"testing"
)

// goList runs the go tool's list command with args, skipping the test
// when there is no go tool to run.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("SKIPPED: no go tool on PATH to list the imports with (%v)", err)
	}
	out, err := exec.Command(gotool, append([]string{"list"}, args...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// TestEmbeddedImports: a program that embeds the store links no network,
// HTTP, TLS or template code, and no on-disk engine: the root package's
// transitive imports (its own, not its tests') hold none of them. HTTP
// belongs to package server, which maps error codes to statuses.
func TestEmbeddedImports(t *testing.T) {
	forbidden := func(p string) bool {
		switch {
		case p == "net", strings.HasPrefix(p, "net/"): // net/http, net/url, net/netip…
			return true
		case strings.HasPrefix(p, "crypto/tls"), strings.HasPrefix(p, "crypto/x509"):
			return true
		case p == "html/template", p == "text/template", p == "encoding/json", p == "os/exec":
			return true
		case strings.HasPrefix(p, "github.com/cockroachdb/"): // pebble: storage/pebble's
			return true
		case strings.HasPrefix(p, "github.com/localtable/localtable/server"),
			strings.HasPrefix(p, "github.com/localtable/localtable/batch"):
			return true
		}
		return false
	}
	deps := strings.Fields(goList(t, "-deps", "."))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %q", deps)
	}
	for _, p := range deps {
		if forbidden(p) {
			t.Errorf("package localtable imports %s", p)
		}
	}
}

// TestNoProductionHTTPTest: no package of the module imports
// net/http/httptest, directly or not, but localtabletest, which is for
// tests as httptest is (its Server.HTTP is an *httptest.Server).
func TestNoProductionHTTPTest(t *testing.T) {
	if testing.Short() {
		t.Skip("lists every package of the module")
	}
	out := goList(t, "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		n++
		if f[0] == "github.com/localtable/localtable/localtabletest" {
			continue
		}
		for _, d := range f[1:] {
			if d == "net/http/httptest" {
				t.Errorf("%s imports net/http/httptest", f[0])
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list listed %d packages:\n%s", n, out)
	}
}
