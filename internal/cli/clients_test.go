package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable/internal/sdkrun"
	"github.com/localtable/localtable/server"
)

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
// tests, snapshots, a frozen clock's Timestamps. Without node, npm or the
// SDK it skips loudly, except under CI=true, where it fails.
func TestJSClientTestControls(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the clients/js suite in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "clients", "js"))
	node := sdkrun.Node(ctx, t, dir, "clients/js (the test controls from JS)")
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
// serve --test-controls: the same scenarios as the JS suite. Without the
// SDK it skips loudly, except under CI=true, where it fails.
func TestPythonClientTestControls(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the clients/python suite in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	version := sdkrun.Python(ctx, t, "clients/python (the test controls from Python)")
	dir, _ := filepath.Abs(filepath.Join("..", "..", "clients", "python"))
	cmd := exec.CommandContext(ctx, sdkrun.SystemPython, "-m", "unittest", "-v", "test_testcontrols")
	cmd.Dir = dir
	cmd.Env = append(sdkrun.PythonEnv(), "LOCALTABLE_CONNECTION_STRING="+serveForClients(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("azure-data-tables %s: python3 -m unittest: %v\n%s", version, err, out)
	}
	if !strings.Contains(string(out), "\nOK") || strings.Contains(string(out), "skipped") {
		t.Fatalf("python3 -m unittest ran nothing:\n%s", out)
	}
	t.Logf("azure-data-tables %s: python3 -m unittest:\n%s", version, out)
}
