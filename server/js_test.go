package server_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/localtable/localtable/internal/sdkrun"
	"github.com/localtable/localtable/localtabletest"
)

// runNodeScript runs testdata/js/<script> with @azure/data-tables against a
// fresh server, its connection string in LOCALTABLE_CONNECTION_STRING, and
// fails the test with the script's output when it exits non-zero. Without
// node, npm or the SDK it skips loudly, except under CI=true, where it
// fails (package sdkrun).
func runNodeScript(t *testing.T, script string, timeout time.Duration) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping the @azure/data-tables test in -short mode")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "js"))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	node := sdkrun.Node(ctx, t, dir, "the official JS SDK (@azure/data-tables)")
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
