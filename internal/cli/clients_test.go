package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable/server"
)

// missing skips the test, loudly, for want of what it names, except under
// CI=true, where it fails: CI installs it (scripts/test-deps.sh).
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf("SKIPPED: "+format, args...)
}

// serveForClients runs serve --test-controls and returns its connection
// string, as a suite in another language is given it.
func serveForClients(t *testing.T) string {
	t.Helper()
	base := serveHTTPTest(t, "--test-controls", "--no-explorer")
	return server.ConnectionString(base+"/"+server.DevAccountName, server.DevAccountName, server.DevAccountKey)
}

// TestJSClientTestControls runs clients/js's node:test suite, which uses
// @azure/data-tables for the data and clients/js/testcontrols.mjs for the
// test controls, against serve --test-controls: two ServerBusy then
// success, a SAS past its expiry after advancing the clock, reset between
// tests, snapshots, a frozen clock's Timestamps.
func TestJSClientTestControls(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the clients/js suite in -short mode")
	}
	node, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		missing(t, "node or npm not found on PATH: clients/js (the test controls from JS) is NOT tested")
	}
	dir, _ := filepath.Abs(filepath.Join("..", "..", "clients", "js"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", "data-tables")); err != nil {
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			missing(t, "npm ci failed in clients/js (offline?): the test controls from JS are NOT tested: %v\n%s", err, out)
		}
	}
	cmd := exec.CommandContext(ctx, node, "--test", "test/")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LOCALTABLE_CONNECTION_STRING="+serveForClients(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "# fail 0") || strings.Contains(string(out), "# pass 0") {
		t.Fatalf("node --test passed nothing:\n%s", out)
	}
	t.Logf("node --test:\n%s", out)
}

// TestPythonClientTestControls runs clients/python's unittest suite, which
// uses azure-data-tables (Debian's python3-azure) for the data and
// clients/python/localtable_testcontrols.py for the test controls, against
// serve --test-controls: the same scenarios as the JS suite.
func TestPythonClientTestControls(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the clients/python suite in -short mode")
	}
	const python = "/usr/bin/python3" // Debian's, which python3-azure installs for
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env := append(os.Environ(), "PYTHONNOUSERSITE=1", "PYTHONDONTWRITEBYTECODE=1")
	probe := exec.CommandContext(ctx, python, "-c", "import azure.data.tables")
	probe.Env = env
	if out, err := probe.CombinedOutput(); err != nil {
		missing(t, "azure.data.tables is not importable by %s (apt-get install python3-azure): clients/python (the test controls from Python) is NOT tested: %v\n%s", python, err, out)
	}
	dir, _ := filepath.Abs(filepath.Join("..", "..", "clients", "python"))
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "-v", "test_testcontrols")
	cmd.Dir = dir
	cmd.Env = append(env, "LOCALTABLE_CONNECTION_STRING="+serveForClients(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "\nOK") || strings.Contains(string(out), "skipped") {
		t.Fatalf("python3 -m unittest ran nothing:\n%s", out)
	}
	t.Logf("python3 -m unittest:\n%s", out)
}
