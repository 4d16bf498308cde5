package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/localtable/localtable"
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
	if err == nil || !strings.Contains(err.Error(), "index Nope of Orders") || !strings.Contains(err.Error(), "IndexNotFound") {
		t.Fatalf("repair of no index: %v", err)
	}
	if err := run(context.Background(), append([]string{"index", "repair", "Orders"}, loc...), io.Discard, io.Discard); exitCode(err) != 2 {
		t.Fatalf("repair without a name: %v, want a usage error", err)
	}
}

// failingEngine fails every commit after the first n.
type failingEngine struct {
	storage.Engine
	n atomic.Int32
}

func (e *failingEngine) NewBatch() storage.Batch { return &failingBatch{e.Engine.NewBatch(), e} }

type failingBatch struct {
	storage.Batch
	e *failingEngine
}

func (b *failingBatch) Commit(sync bool) error {
	if b.e.n.Add(-1) < 0 {
		return errors.New("injected: the process ends here")
	}
	return b.Batch.Commit(sync)
}

// serve --index on an index declared on its properties whose build
// stopped (the process ended mid-build) resumes the build: the server
// starts with the index ready.
func TestServeIndexResumesABuild(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := pebble.Open(filepath.Join(dir, "devstoreaccount1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	eng := &failingEngine{Engine: db}
	eng.n.Store(1 << 30)
	a, err := localtable.Open(&localtable.Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := a.CreateTable(ctx, "Orders")
	if err != nil {
		t.Fatal(err)
	}
	for start := 0; start < 3000; start += 100 {
		var acts []localtable.Action
		for i := start; i < start+100; i++ {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%05d", i), Properties: localtable.Properties{"Total": localtable.DoubleValue(float64(i) + 0.5)}}})
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	eng.n.Store(2) // the declaration and one step of 1,000 entities
	if err := tbl.CreateIndex(ctx, "Total", "Total"); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("CreateIndex with its third commit failing: %v", err)
	}
	eng.n.Store(1 << 30)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(runOut(t, "index", "list", "Orders", "--location", dir)), " "); got != "NAME PROPERTIES STATE COVERING Total Total building no" {
		t.Fatalf("after the stopped build: %s", got)
	}
	stop, _ := serveUntilReady(t, "--location", dir, "--index", "Orders:Total")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(runOut(t, "index", "list", "Orders", "--location", dir)), " "); got != "NAME PROPERTIES STATE COVERING Total Total ready no" {
		t.Fatalf("after serve --index: %s", got)
	}
	if got := runOut(t, "check", "--location", dir); !strings.Contains(got, "ok:") {
		t.Fatalf("check:\n%s", got)
	}
}
