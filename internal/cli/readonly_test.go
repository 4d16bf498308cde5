package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage/pebble"
)

// TestCheckWritesNothing: check verifies a data directory's accounts; a
// subdirectory that holds no store (here a Go package beside the account)
// is no account: it is neither made a pebble store nor reported.
func TestCheckWritesNothing(t *testing.T) {
	dir := t.TempDir()
	runOut(t, "tables", "create", "Orders", "--location", dir)
	src := filepath.Join(dir, "tools")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"check", "--location", dir}, &out, &errb)
	entries, _ := os.ReadDir(src)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	if len(names) != 1 {
		t.Errorf("check wrote into %s, which held main.go alone: it now holds %q\ncheck: %v\n%s", src, names, err, out.String())
	}
	if err != nil || strings.Contains(out.String(), "tools") || !strings.Contains(out.String(), "account devstoreaccount1") {
		t.Errorf("check: %v\n%s\nwant the one account, not tools", err, out.String())
	}
}

// TestCheckKeepsStoreFormat: the commands that only read (check, a
// diagnostic, among them) open an older store read-only and leave its
// recorded format as it is; raised (as an Open for writing raises it), the
// localtable that wrote the store would refuse to open it
// (ErrUnknownFormat).
func TestCheckKeepsStoreFormat(t *testing.T) {
	for _, args := range [][]string{{"check"}, {"tables"}, {"stats"}, {"query", "Old", "--top", "1"}, {"get", "Old", "p0", "r003"}, {"index", "list", "Old"}, {"expiry", "show", "Old"}, {"watch", "--from", "0"}} {
		dir := t.TempDir()
		acct := filepath.Join(dir, "devstoreaccount1")
		if err := os.CopyFS(acct, os.DirFS("../../testdata/store-record-v1")); err != nil {
			t.Fatal(err)
		}
		format := func() []byte {
			t.Helper()
			eng, err := pebble.Open(acct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			v, c, err := eng.Get(keyenc.MetaKey("format"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			return append([]byte(nil), v...)
		}
		before := format()
		runOut(t, append(args, "--location", dir)...)
		if after := format(); !bytes.Equal(before, after) {
			t.Errorf("%v changed the store's recorded format from %x to %x", args, before, after)
		}
	}
}
