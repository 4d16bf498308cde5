package pebble_test

import (
	"path/filepath"
	"testing"

	"github.com/localtable/localtable/storage/pebble"
)

// A checkpoint holds what was committed before it and nothing after, and
// opens as a database of its own.
func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(filepath.Join(dir, "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := db.NewBatch()
	b.Set([]byte("before"), []byte("1"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(dir, "cp")
	if err := db.Checkpoint(cp); err != nil {
		t.Fatal(err)
	}
	b = db.NewBatch()
	b.Set([]byte("after"), []byte("2"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := db.Checkpoint(cp); err == nil {
		t.Fatal("a checkpoint over an existing directory: no error")
	}
	c, err := pebble.Open(cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, cl, err := c.Get([]byte("before")); err != nil || string(v) != "1" {
		t.Fatalf("before: %q %v", v, err)
	} else {
		cl.Close()
	}
	if _, _, err := c.Get([]byte("after")); err == nil {
		t.Fatal("the checkpoint holds a later write")
	}
}
