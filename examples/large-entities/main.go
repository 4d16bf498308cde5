// Command large-entities shows the large entities pattern: values too big
// for an entity (an entity holds at most 1 MiB, a Binary property 64 KiB)
// are kept in a blob store, and the entity holds the blob's address.
//
// The problem: a document store keeps each document's metadata and its
// content, a few MiB of PDF. The content does not fit an entity.
//
// The pattern: the content goes to a content-addressed blob store (here a
// directory; on Azure, Blob storage), named by its SHA-256, and the entity
// holds the name, the size and the hash. The blob is written first and the
// entity second, so an entity never points at a missing blob; a failure
// between the two leaves an orphan blob, which a sweep removes. Equal
// contents share one blob.
//
// The trade-offs the design guide names: the entity and the blob cannot be
// written in one transaction, so the two stores are consistent only
// eventually (orphans), and reading a document takes two reads.
//
// What the program proves: the entity with the content inline is refused
// with the service's error; through the blob store the document round-trips
// byte for byte with its hash verified; a duplicate costs no new blob; an
// interrupted write leaves an orphan that the sweep finds and removes,
// while every referenced blob survives.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/localtable/localtable"
)

func main() {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer acct.Close()
	dir, err := os.MkdirTemp("", "large-entities-blobs")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := run(ctx, acct, dir, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// BlobStore is a directory of blobs named by the SHA-256 of their content.
type BlobStore struct{ Dir string }

// Put stores content and returns its address. Writing to a temporary file
// and renaming it makes a blob appear whole or not at all; an existing
// blob of the same content is kept.
func (s BlobStore) Put(content []byte) (string, error) {
	sum := sha256.Sum256(content)
	addr := hex.EncodeToString(sum[:])
	path := filepath.Join(s.Dir, addr)
	if _, err := os.Stat(path); err == nil {
		return addr, nil
	}
	f, err := os.CreateTemp(s.Dir, "tmp-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(content); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return addr, os.Rename(f.Name(), path)
}

// Get returns the content at addr, verifying its hash.
func (s BlobStore) Get(addr string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, addr))
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != addr {
		return nil, fmt.Errorf("blob %s is corrupt", addr)
	}
	return b, nil
}

// Sweep removes the blobs no entity references, of those older than
// minAge, and returns how many. A blob is written before its entity, so a
// sweep running beside saves must spare blobs younger than the longest save
// takes: minAge is that grace period.
func (s BlobStore) Sweep(ctx context.Context, tbl *localtable.Table, minAge time.Duration) (int, error) {
	live := map[string]bool{}
	for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Select: []string{"Blob"}}) {
		if err != nil {
			return 0, err
		}
		live[e.Properties["Blob"].String()] = true
	}
	names, err := os.ReadDir(s.Dir)
	if err != nil {
		return 0, err
	}
	n := 0
	cutoff := time.Now().Add(-minAge)
	for _, d := range names {
		info, err := d.Info()
		if err != nil {
			return n, err
		}
		if !live[d.Name()] && !strings.HasPrefix(d.Name(), "tmp-") && info.ModTime().Before(cutoff) {
			if err := os.Remove(filepath.Join(s.Dir, d.Name())); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// Document is a document's metadata; its content is in the blob store.
type Document struct {
	PartitionKey string // the owner
	RowKey       string // the document name
	ContentType  string
	Size         int64
	Blob         string // the SHA-256 of the content: its address
}

// save writes the blob, then the entity that points at it.
func save(ctx context.Context, tbl *localtable.Table, blobs BlobStore, owner, name string, content []byte) error {
	addr, err := blobs.Put(content)
	if err != nil {
		return err
	}
	e, err := localtable.Marshal(Document{PartitionKey: owner, RowKey: name, ContentType: "application/pdf",
		Size: int64(len(content)), Blob: addr})
	if err != nil {
		return err
	}
	_, err = tbl.Upsert(ctx, e, nil)
	return err
}

// load reads the entity, then its blob.
func load(ctx context.Context, tbl *localtable.Table, blobs BlobStore, owner, name string) (Document, []byte, error) {
	doc, err := localtable.GetAs[Document](ctx, tbl, owner, name)
	if err != nil {
		return doc, nil, err
	}
	content, err := blobs.Get(doc.Blob)
	if err == nil && int64(len(content)) != doc.Size {
		err = fmt.Errorf("%s/%s: blob of %d bytes, entity says %d", owner, name, len(content), doc.Size)
	}
	return doc, content, err
}

// pdf returns n bytes of fake document content.
func pdf(n int, seed byte) []byte {
	b := make([]byte, n)
	copy(b, "%PDF-1.7\n")
	for i := 9; i < n; i++ {
		b[i] = byte(i*31) ^ seed
	}
	return b
}

func run(ctx context.Context, acct *localtable.Account, dir string, w io.Writer) error {
	tbl, err := acct.CreateTable(ctx, "Documents")
	if err != nil {
		return err
	}
	blobs := BlobStore{Dir: dir}
	report := pdf(3<<20, 1) // 3 MiB

	// Inline, the content is refused: as one Binary property, and split
	// into 64 KiB properties it is still over the entity's 1 MiB.
	_, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: "alice", RowKey: "report.pdf",
		Properties: localtable.Properties{"Content": localtable.BinaryValue(report)}})
	fmt.Fprintf(w, "3 MiB as one Binary property: %s\n", code(err))
	chunks := localtable.Properties{}
	for i := 0; i*65536 < len(report) && i < 60; i++ {
		chunks[fmt.Sprintf("Part%02d", i)] = localtable.BinaryValue(report[i*65536 : min((i+1)*65536, len(report))])
	}
	_, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: "alice", RowKey: "report.pdf", Properties: chunks})
	fmt.Fprintf(w, "3 MiB as 48 Binary properties of 64 KiB: %s\n\n", code(err))

	// Through the blob store.
	if err := save(ctx, tbl, blobs, "alice", "report.pdf", report); err != nil {
		return err
	}
	doc, content, err := load(ctx, tbl, blobs, "alice", "report.pdf")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "saved alice/report.pdf: entity {Size: %d, Blob: %s…}\n", doc.Size, doc.Blob[:12])
	fmt.Fprintf(w, "loaded it back: %d bytes, identical: %v\n", len(content), string(content) == string(report))

	// The same content again costs no blob.
	if err := save(ctx, tbl, blobs, "bob", "copy-of-report.pdf", report); err != nil {
		return err
	}
	if err := save(ctx, tbl, blobs, "bob", "notes.pdf", pdf(2<<20, 2)); err != nil {
		return err
	}
	fmt.Fprintf(w, "3 documents, %d blobs (equal contents share one)\n\n", countBlobs(dir))

	// A crash between the blob and the entity leaves an orphan blob.
	if _, err := blobs.Put(pdf(1<<20, 3)); err != nil {
		return err
	}
	fmt.Fprintf(w, "an interrupted save left %d blobs for 3 documents\n", countBlobs(dir))
	// Replacing bob's notes orphans the old content as well.
	if err := save(ctx, tbl, blobs, "bob", "notes.pdf", pdf(2<<20, 4)); err != nil {
		return err
	}
	fmt.Fprintf(w, "bob replaced notes.pdf: its old content is an orphan too (%d blobs)\n", countBlobs(dir))
	// No save runs now, so no grace period is needed; beside live saves,
	// pass one longer than a save takes.
	n, err := blobs.Sweep(ctx, tbl, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "the sweep removed %d orphans: %d blobs for 3 documents\n", n, countBlobs(dir))
	for _, k := range [][2]string{{"alice", "report.pdf"}, {"bob", "copy-of-report.pdf"}, {"bob", "notes.pdf"}} {
		if _, _, err := load(ctx, tbl, blobs, k[0], k[1]); err != nil {
			return fmt.Errorf("after the sweep: %w", err)
		}
	}
	fmt.Fprintln(w, "every document still loads with its hash verified")
	return nil
}

func code(err error) string {
	var le *localtable.Error
	if errors.As(err, &le) {
		return "refused, " + string(le.Code)
	}
	return fmt.Sprint("unexpected: ", err)
}

func countBlobs(dir string) int {
	names, _ := os.ReadDir(dir)
	n := 0
	for _, d := range names {
		if !strings.HasPrefix(d.Name(), "tmp-") {
			n++
		}
	}
	return n
}
