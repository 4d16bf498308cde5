package server_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/localtable/localtable/localtabletest"
)

// TestJSSmoke runs testdata/js/script.mjs with @azure/data-tables against
// the server. It skips when node or npm are missing or npm cannot install.
func TestJSSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the JS smoke test in -short mode")
	}
	node, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		t.Skip("node or npm not found: skipping the @azure/data-tables smoke test")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "js"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", "data-tables")); err != nil {
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("npm ci failed (offline?): skipping the JS smoke test: %v\n%s", err, out)
		}
	}
	srv := localtabletest.NewServer(t)
	cmd := exec.CommandContext(ctx, node, "script.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LOCALTABLE_CONNECTION_STRING="+srv.ConnectionString)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node script.mjs: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
