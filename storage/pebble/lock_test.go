//go:build unix

package pebble_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// checkInUse fails the test unless err is ErrInUse naming dir.
func checkInUse(t *testing.T, err error, dir string) {
	t.Helper()
	if err == nil {
		t.Fatal("a second Open of a directory in use succeeded")
	}
	if !errors.Is(err, pebble.ErrInUse) {
		t.Fatalf("second Open: %v; want an error matching ErrInUse", err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Fatalf("second Open: %q does not name the directory %s", err, dir)
	}
	t.Logf("second Open: %v", err)
}

// TestOpenInUse opens one directory twice in one process: the second Open
// fails with ErrInUse naming the directory, and leaves the first one
// working; once the first is closed, the directory opens again.
func TestOpenInUse(t *testing.T) {
	for _, fs := range []struct {
		name string
		fs   vfs.FS
		dir  string
	}{{"disk", nil, t.TempDir()}, {"mem", vfs.NewMem(), "db"}} {
		t.Run(fs.name, func(t *testing.T) {
			opts := &pebble.Options{FS: fs.fs}
			db, err := pebble.Open(fs.dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			db2, err := pebble.Open(fs.dir, opts)
			if err == nil {
				db2.Close()
			}
			checkInUse(t, err, fs.dir)
			commit(t, db, true, func(b storage.Batch) error { return b.Set([]byte("k"), []byte("v")) })
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, err = pebble.Open(fs.dir, opts)
			if err != nil {
				t.Fatalf("Open after the holder closed: %v", err)
			}
			if got := scanAll(t, db); len(got) != 1 {
				t.Fatalf("after reopen: %v", got)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

const lockEnvDir = "LOCALTABLE_PEBBLE_LOCK_DIR"

// TestLockHolderChild is the child of TestOpenInUseOtherProcess: it opens
// the directory, says "ready", and holds it until its stdin closes (or 30
// seconds pass, should the parent die).
func TestLockHolderChild(t *testing.T) {
	dir := os.Getenv(lockEnvDir)
	if dir == "" {
		t.Skip("run by TestOpenInUseOtherProcess")
	}
	db, err := pebble.Open(dir, nil)
	if err != nil {
		os.Stdout.WriteString("E " + err.Error() + "\n")
		os.Exit(3)
	}
	os.Stdout.WriteString("ready\n")
	done := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
	}
	db.Close()
	os.Exit(0)
}

// TestOpenInUseOtherProcess opens a directory that another process (this
// test binary, re-run as TestLockHolderChild) holds open: the Open fails
// with ErrInUse naming the directory; once the other process exits, the
// directory opens.
func TestOpenInUseOtherProcess(t *testing.T) {
	if os.Getenv(lockEnvDir) != "" {
		t.Skip("in the child")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLockHolderChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockEnvDir+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	ready := false
	for !ready && sc.Scan() {
		switch line := sc.Text(); {
		case line == "ready":
			ready = true
		case strings.HasPrefix(line, "E "):
			t.Fatalf("child: %s", line)
		}
	}
	if !ready {
		t.Fatalf("the child exited before it was ready: %v", sc.Err())
	}

	db, err := pebble.Open(dir, nil)
	if err == nil {
		db.Close()
	}
	checkInUse(t, err, dir)

	stdin.Close() // the child closes its database and exits
	for sc.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	db, err = pebble.Open(dir, nil)
	if err != nil {
		t.Fatalf("Open after the other process exited: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
