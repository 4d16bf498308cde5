package server_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/localtable/localtable/internal/sdkrun"
	"github.com/localtable/localtable/localtabletest"
)

// TestPythonEndToEnd runs testdata/py/e2e.py with azure-data-tables against
// the server: every Edm type read back with its Python type, a parameters=
// filter paged at 1000, a transaction whose sub-response ETags match the
// entities, a failing transaction and its index, a generate_table_sas
// read-only client, a stale ETag, and table deletion. Without the SDK it
// skips loudly, except under CI=true, where it fails.
func TestPythonEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the azure-data-tables test in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	version := sdkrun.Python(ctx, t, "the official Python SDK")
	srv := localtabletest.NewServer(t)
	dir, _ := filepath.Abs(filepath.Join("testdata", "py"))
	cmd := exec.CommandContext(ctx, sdkrun.SystemPython, "e2e.py")
	cmd.Dir = dir
	cmd.Env = append(sdkrun.PythonEnv(), "LOCALTABLE_CONNECTION_STRING="+srv.ConnectionString)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("azure-data-tables %s: python3 e2e.py: %v\n%s", version, err, out)
	}
	t.Logf("azure-data-tables %s:\n%s", version, out)
}
