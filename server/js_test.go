package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/localtabletest"
)

// runNodeScript runs testdata/js/<script> with @azure/data-tables against a
// fresh server, its connection string in LOCALTABLE_CONNECTION_STRING, and
// fails the test with the script's output when it exits non-zero. When node
// or npm are missing or npm ci cannot install the SDK, it skips loudly,
// except under CI=true, where it fails (tabletest.Missing).
func runNodeScript(t *testing.T, script string, timeout time.Duration) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping the @azure/data-tables test in -short mode")
	}
	node, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		tabletest.Missing(t, "node or npm not found on PATH: the official JS SDK (@azure/data-tables) is NOT tested (install the Debian packages nodejs and npm)")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "js"))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", "data-tables")); err != nil {
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			tabletest.Missing(t, fmt.Sprintf("npm ci failed (offline?): the official JS SDK (@azure/data-tables) is NOT tested: %v\n%s", err, out))
		}
	}
	srv := localtabletest.NewServer(t)
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LOCALTABLE_CONNECTION_STRING="+srv.ConnectionString)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	t.Logf("node %s:\n%s", script, out)
}

// TestJSSmoke runs testdata/js/script.mjs with @azure/data-tables against
// the server.
func TestJSSmoke(t *testing.T) {
	runNodeScript(t, "script.mjs", 2*time.Minute)
}

// TestJSEndToEnd runs testdata/js/e2e.mjs: every Edm type read back with
// its JS type, an odata-template filter paged at 1000, a transaction whose
// sub-response ETags match the entities, a failing transaction, a
// generateTableSas read-only client, a stale ETag, and table deletion.
func TestJSEndToEnd(t *testing.T) {
	runNodeScript(t, "e2e.mjs", 5*time.Minute)
}
