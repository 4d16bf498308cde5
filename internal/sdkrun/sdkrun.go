// Package sdkrun finds the official Azure SDKs of other languages for the
// tests that run programs with them against a server: Node.js with
// @azure/data-tables (installed by npm ci from a folder's lock file) and
// Debian's python3-azure (azure-data-tables). Package server's SDK tests
// and the command's test-control clients (clients/js, clients/python) use
// it.
//
// Without them a test skips, loudly, unless the environment says CI=true,
// where it fails (tabletest.Missing): CI installs them
// (scripts/test-deps.sh).
package sdkrun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/localtable/localtable/internal/tabletest"
)

// Node returns the path of node, once dir's npm packages are installed
// (npm ci from its package-lock.json, unless dir/node_modules holds
// @azure/data-tables already); what names the test in the message of a
// skip. It skips t (fails it under CI=true) without node or npm, or when
// npm ci fails (offline).
func Node(ctx context.Context, t testing.TB, dir, what string) string {
	t.Helper()
	node, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		tabletest.Missing(t, fmt.Sprintf("node or npm not found on PATH: %s is NOT tested", what))
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", "data-tables")); err != nil {
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			tabletest.Missing(t, fmt.Sprintf("npm ci failed in %s (offline?): %s is NOT tested: %v\n%s", dir, what, err, out))
		}
	}
	return node
}

// SystemPython is the interpreter Debian's python3-azure installs
// azure-data-tables for (a pyenv or venv python3 earlier on PATH lacks it).
const SystemPython = "/usr/bin/python3"

// PythonEnv is the environment to run SystemPython in: without the user's
// site packages, and writing no bytecode into the source tree.
func PythonEnv() []string {
	return append(os.Environ(), "PYTHONNOUSERSITE=1", "PYTHONDONTWRITEBYTECODE=1")
}

// Python returns the version of azure-data-tables that SystemPython
// imports; what names the test in the message of a skip. It skips t
// (fails it under CI=true) when the SDK is not importable.
func Python(ctx context.Context, t testing.TB, what string) string {
	t.Helper()
	probe := exec.CommandContext(ctx, SystemPython, "-c", "import azure.data.tables as t; print(t.__version__)")
	probe.Env = PythonEnv()
	out, err := probe.CombinedOutput()
	version := strings.TrimSpace(string(out))
	if err != nil {
		tabletest.Missing(t, fmt.Sprintf("azure.data.tables is not importable by %s (apt-get install python3-azure): %s is NOT tested: %v\n%s", SystemPython, what, err, version))
	}
	return version
}
