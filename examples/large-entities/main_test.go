package main

import (
	"bytes"
	"context"
	"github.com/localtable/localtable"
	"os"
	"testing"
)

// want is the program's whole output: the data is fixed, so the costs and
// counts are exact.
const want = `3 MiB as one Binary property: refused, PropertyValueTooLarge
3 MiB as 48 Binary properties of 64 KiB: refused, EntityTooLarge

saved alice/report.pdf: entity {Size: 3145728, Blob: 7d1ebc58fd23…}
loaded it back: 3145728 bytes, identical: true
3 documents, 2 blobs (equal contents share one)

an interrupted save left 3 blobs for 3 documents
bob replaced notes.pdf: its old content is an orphan too (4 blobs)
the sweep removed 2 orphans: 2 blobs for 3 documents
every document still loads with its hash verified
`

func TestLargeEntities(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	var out bytes.Buffer
	dir := t.TempDir()
	if err := run(ctx, acct, dir, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}

	// The final state: exactly the two referenced blobs remain, each named
	// by its content's hash, and every entity points at one of them.
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	blobs := BlobStore{Dir: dir}
	onDisk := map[string]bool{}
	for _, d := range names {
		if _, err := blobs.Get(d.Name()); err != nil {
			t.Fatal(err)
		}
		onDisk[d.Name()] = true
	}
	if len(onDisk) != 2 {
		t.Fatalf("%d blobs on disk, want 2", len(onDisk))
	}
	n := 0
	for e, err := range acct.Table("Documents").QueryAll(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if !onDisk[e.Properties["Blob"].String()] {
			t.Errorf("%s/%s points at a missing blob", e.PartitionKey, e.RowKey)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d documents, want 3", n)
	}
}
