package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage/pebble"
)

// TestLocationIsAStore: --location naming a store itself (an account's
// directory, as a Go program's pebble.Open makes it) says so, with the
// command that reads it, for the data commands and check; that command
// reads it. The store is left as it was: no account directory is made in
// it.
func TestLocationIsAStore(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "data")
	eng, err := pebble.Open(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := localtable.Open(&localtable.Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acct.CreateTable(context.Background(), "Orders"); err != nil {
		t.Fatal(err)
	}
	acct.Close()
	eng.Close()
	want := "is itself a store (an account's directory, as a Go program's pebble.Open makes it), not a data directory of accounts: use --location " + dir + " --account data"
	for _, args := range [][]string{
		{"tables", "--location", store},
		{"check", "--location", store},
		{"put", "Orders", "p", "r", "--location", store},
		{"serve", "--addr", "127.0.0.1:0", "--location", store},
	} {
		err := run(context.Background(), args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v\nwant it to hold %q", args, err, want)
		}
	}
	if got := runOut(t, "tables", "--location", dir, "--account", "data"); !strings.Contains(got, "Orders") {
		t.Fatalf("tables --location %s --account data: %q", dir, got)
	}
	entries, _ := os.ReadDir(store)
	for _, en := range entries {
		if en.IsDir() {
			t.Errorf("the store holds a directory %s after the commands", en.Name())
		}
	}
}
