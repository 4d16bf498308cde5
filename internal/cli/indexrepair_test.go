package cli

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// damageIndex deletes the first index entry of the account's store in
// dir and writes a stray one beside it, behind localtable's back.
func damageIndex(t *testing.T, dir string) {
	t.Helper()
	db, err := pebble.Open(filepath.Join(dir, "devstoreaccount1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	it, err := db.NewIter(&storage.IterOptions{LowerBound: []byte{keyenc.PrefixIndex}, UpperBound: []byte{keyenc.PrefixIndex + 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !it.First() {
		t.Fatal("no index entry to damage")
	}
	entry := bytes.Clone(it.Key())
	it.Close()
	b := db.NewBatch()
	b.Delete(entry)
	b.Set(append(entry[:keyenc.IndexPrefixLen:keyenc.IndexPrefixLen], "\x05stray"...), []byte{})
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
}

// index repair rebuilds an index check finds wrong: check names it and
// the command that repairs it, and is clean after the repair; the query
// reads the index again.
func TestIndexRepairCommand(t *testing.T) {
	dir := t.TempDir()
	loc := []string{"--location", dir}
	runOut(t, append([]string{"tables", "create", "Orders"}, loc...)...)
	for i := range 20 {
		runOut(t, append([]string{"put", "Orders", "p", string(rune('a' + i)), "Total@Edm.Double=" + string(rune('0'+i%10)) + ".5"}, loc...)...)
	}
	runOut(t, append([]string{"index", "create", "Orders", "ByTotal", "Total"}, loc...)...)
	runOut(t, append([]string{"check"}, loc...)...)
	damageIndex(t, dir)
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"check"}, loc...), &out, io.Discard)
	if err == nil || !strings.Contains(out.String(), "missing entry") || !strings.Contains(out.String(), "localtable index repair Orders ByTotal") {
		t.Fatalf("check of a damaged index: %v\n%s", err, out.String())
	}
	if got := runOut(t, append([]string{"index", "repair", "Orders", "ByTotal"}, loc...)...); got != "rebuilt index ByTotal of Orders\n" {
		t.Fatalf("repair: %q", got)
	}
	if got := runOut(t, append([]string{"check"}, loc...)...); !strings.Contains(got, "ok:") {
		t.Fatalf("check after the repair:\n%s", got)
	}
	if got := runOut(t, append([]string{"query", "Orders", "--filter", "Total eq 9.5", "--explain"}, loc...)...); !strings.Contains(got, "read through index ByTotal") || !strings.Contains(got, "returned 2,") {
		t.Fatalf("query after the repair:\n%s", got)
	}
	err = run(context.Background(), append([]string{"index", "repair", "Orders", "Nope"}, loc...), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "index Nope of Orders") || !strings.Contains(err.Error(), "ResourceNotFound") {
		t.Fatalf("repair of no index: %v", err)
	}
	if err := run(context.Background(), append([]string{"index", "repair", "Orders"}, loc...), io.Discard, io.Discard); exitCode(err) != 2 {
		t.Fatalf("repair without a name: %v, want a usage error", err)
	}
}
