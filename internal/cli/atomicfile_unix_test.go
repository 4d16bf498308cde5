//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/localtable/localtable/localtabletest"
)

// TestWrittenFilesFollowUmask: the files the command writes (an export, a
// backup, an import checkpoint) get 0666 less the umask, as any file a
// command creates (they were 0600, or 0644 for a checkpoint, whatever the
// umask), and no temporary file is left beside them.
func TestWrittenFilesFollowUmask(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	const want = os.FileMode(0o664)
	dir := t.TempDir()
	loc := []string{"--location", filepath.Join(dir, "data")}
	src := writeLines(t, 50, 2)
	if _, stderr, err := runCmd(append([]string{"import", "Things", src, "--create"}, loc...)...); err != nil {
		t.Fatalf("import: %v\n%s", err, stderr)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o777); err != nil {
		t.Fatal(err)
	}
	export, backup := filepath.Join(out, "things.jsonl"), filepath.Join(out, "b.ltbk")
	if _, stderr, err := runCmd(append([]string{"export", "Things", export}, loc...)...); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	if _, stderr, err := runCmd(append([]string{"backup", "--out", backup}, loc...)...); err != nil {
		t.Fatalf("backup: %v\n%s", err, stderr)
	}
	for _, f := range []string{export, backup} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %v", filepath.Base(f), fi.Mode().Perm(), err, want)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 2 {
		t.Errorf("files beside the export and the backup: %v", ents)
	}

	// An import that stops leaves its checkpoint.
	fastRetries(t)
	srv := localtabletest.NewServer(t)
	srv.Inject(localtabletest.Rule{Ops: []localtabletest.Operation{localtabletest.OpBatch}, Action: localtabletest.DropConnection()})
	if _, _, err := runCmd("import", "Things", src, "--create", "--connection-string", srv.ConnectionString); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("import through a failing server: %v", err)
	}
	if fi, err := os.Stat(src + ".checkpoint"); err != nil || fi.Mode().Perm() != want {
		t.Errorf("checkpoint: %v %v, want mode %v", fi.Mode().Perm(), err, want)
	}
}

func TestAtomicFileAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := createAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new, unfinished")
	f.Abort()
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("after Abort: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("Abort left %v", ents)
	}
	if err := writeFileAtomic(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("after writeFileAtomic: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("writeFileAtomic left %v", ents)
	}
}
