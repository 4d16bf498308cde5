package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/localtabletest"
)

// systemPython is the interpreter Debian's python3-azure installs
// azure-data-tables for (a pyenv or venv python3 earlier on PATH lacks it).
const systemPython = "/usr/bin/python3"

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
	probe := exec.CommandContext(ctx, systemPython, "-c", "import azure.data.tables as t; print(t.__version__)")
	probe.Env = append(os.Environ(), "PYTHONNOUSERSITE=1")
	out, err := probe.CombinedOutput()
	version := strings.TrimSpace(string(out))
	if err != nil {
		msg := "azure.data.tables is not importable by " + systemPython + " (apt-get install python3-azure): the official Python SDK is NOT tested"
		tabletest.Missing(t, fmt.Sprintf("%s: %v\n%s", msg, err, version))
	}
	srv := localtabletest.NewServer(t)
	dir, _ := filepath.Abs(filepath.Join("testdata", "py"))
	cmd := exec.CommandContext(ctx, systemPython, "e2e.py")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONNOUSERSITE=1", "PYTHONDONTWRITEBYTECODE=1",
		"LOCALTABLE_CONNECTION_STRING="+srv.ConnectionString)
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("azure-data-tables %s: python3 e2e.py: %v\n%s", version, err, out)
	}
	t.Logf("azure-data-tables %s:\n%s", version, out)
}
