package etcd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestPublishedModules runs scripts/publish-check.sh: the library and this
// module, published from the work tree into a file-based module proxy as a
// release would publish them, installed (both commands @latest) and
// go-gotten from a new module with GOWORK=off, as users get them. It
// compiles both commands and their dependencies from scratch in a fresh
// module cache (minutes), so -short skips it.
func TestPublishedModules(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles both commands from a fresh module cache (minutes): run without -short")
	}
	for _, tool := range []string{"go", "git", "bash", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not on PATH: %v", tool, err)
			}
			t.Skipf("SKIPPED LOUDLY: %s is not on PATH (%v): the published modules are not checked", tool, err)
		}
	}
	script, err := filepath.Abs("../../scripts/publish-check.sh")
	must(t, err)
	status := func() string {
		out, err := exec.Command("git", "-C", "../..", "status", "--porcelain").CombinedOutput()
		if err != nil {
			t.Fatalf("git status: %v\n%s", err, out)
		}
		return string(out)
	}
	before := status()
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	t.Logf("%s", out)
	if after := status(); after != before {
		t.Errorf("the script changed the repository's files (a go.sum?): git status before\n%s\nafter\n%s", before, after)
	}
}
