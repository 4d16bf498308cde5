// Package pebble is the persistent storage engine: a storage.Engine over
// CockroachDB's Pebble LSM (github.com/cockroachdb/pebble/v2). It is the
// only package of localtable that imports Pebble.
//
// Open a database with Open; it implements storage.Engine and
// storage.Syncer. Tests can run it entirely in memory by passing
// vfs.NewMem() as Options.FS.
package pebble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	pdb "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/localtable/localtable/internal/keyenc"

	"github.com/localtable/localtable/storage"
)

// DefaultCacheSize is the block cache size used when Options.CacheSize is
// zero: 64 MiB. Pebble fills its cache as blocks are read, so a store
// smaller than the cache holds only what it reads; a larger one holds
// the cache full.
const DefaultCacheSize = 64 << 20

// BloomBitsPerKey is the size of the Bloom filter every table file of a
// database carries, in bits per key: 10 bits give about 1% false
// positives. A read of a key the database does not hold (each insert
// checks its key is absent first) is then answered from the filters
// without reading the files' data blocks.
const BloomBitsPerKey = 10

// Options configures Open. The zero value (or a nil *Options) is ready to
// use. Open copies the options; later changes have no effect.
type Options struct {
	// NoSync makes every Commit skip the fsync of the write-ahead log, even
	// Commit(true); it is meant for bulk loads and tests. Each batch is
	// still written to the log atomically, so after a crash the database
	// recovers to a consistent state that holds a prefix of the committed
	// batches — but the most recent batches, acknowledged by Commit, may be
	// missing (after a process crash, those still in Pebble's log buffer;
	// after an OS crash or power loss, everything not yet written back by
	// the kernel). Call Sync (storage.Syncer) to make all acknowledged
	// commits durable. Without NoSync, Commit(true) returns only once the
	// batch is durable, and Commit(false) behaves as above for that batch.
	NoSync bool

	// FS is the file system the database lives in; nil means the
	// operating system's (vfs.Default). vfs.NewMem() keeps everything in
	// memory, which suits tests.
	FS vfs.FS

	// CacheSize is the size in bytes of Pebble's block cache (the
	// uncompressed blocks of the table files read recently); zero means
	// DefaultCacheSize. It bounds most of the memory a database holds
	// beyond its memtables (4 MiB each, at most two of them busy). A
	// cache that holds the whole store lets a full-table scan run from
	// memory; a small one makes each scan read and decompress the files
	// again.
	CacheSize int64

	// ReadOnly opens an existing database to read it, and writes nothing
	// to its directory: Open fails with an error matching ErrNoDatabase
	// when the directory holds none (rather than create one), its
	// write-ahead log is replayed in memory only, and every Commit fails.
	// The directory is still locked, as for writing: a database a process
	// writes is not read beside it.
	ReadOnly bool

	// Logger receives Pebble's log messages. Nil means a quiet logger that
	// drops informational messages, writes errors with the standard log
	// package, and exits the process on fatal errors (as Pebble's default
	// logger does).
	Logger pdb.Logger
}

// quietLogger drops Pebble's informational chatter.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	log.Output(2, "pebble: "+fmt.Sprintf(format, args...))
}
func (quietLogger) Fatalf(format string, args ...any) { pdb.DefaultLogger.Fatalf(format, args...) }

// ErrInUse is the error of Open on a directory that is already open: by
// another process, or by an earlier Open in this process that has not been
// closed. One directory is one database, and only one DB may write it.
var ErrInUse = errors.New("storage/pebble: database directory in use")

// inUseError is ErrInUse for one directory.
type inUseError struct {
	dir   string
	cause error // what the lock said
}

func (e *inUseError) Error() string {
	return "storage/pebble: open " + e.dir + ": the directory is in use: another process has it open, or this process does and has not closed it (" + e.cause.Error() + ")"
}

// HasDatabase reports whether directory dir of the operating system's
// file system holds a database (one Open would open rather than create),
// without opening it or writing anything.
func HasDatabase(dir string) bool {
	desc, err := pdb.Peek(dir, vfs.Default)
	return err == nil && desc.Exists
}

// ErrNoDatabase is the error of a read-only Open (Options.ReadOnly) of a
// directory that holds no database.
var ErrNoDatabase = errors.New("storage/pebble: no database in the directory")

func (e *inUseError) Is(target error) bool { return target == ErrInUse }
func (e *inUseError) Unwrap() error        { return e.cause }

// openDirs holds the directories of the operating system's file system
// that this process has open, by their absolute path with symbolic links
// resolved. File locks exclude other processes but not this one, so Open
// checks here first.
var openDirs struct {
	sync.Mutex
	m map[string]bool
}

// DB is a Pebble-backed storage.Engine. It is safe for concurrent use, but
// Close must not run concurrently with other calls.
type DB struct {
	db     *pdb.DB
	lock   *pdb.Lock         // the directory's lock, released by Close
	dirKey string            // the key of openDirs, if any
	commit *pdb.WriteOptions // for Commit(true)
	closed atomic.Bool
}

var (
	_ storage.Engine = (*DB)(nil)
	_ storage.Syncer = (*DB)(nil)
)

// Open opens the database in directory dir, creating it if it does not
// exist. opts may be nil. A directory holds one open database at a time:
// if another process has it open, or this one does and has not closed it,
// Open fails with an error matching ErrInUse that names the directory.
func Open(dir string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	po := NativeOptions(&o)
	d := &DB{commit: pdb.Sync}
	if o.ReadOnly {
		po.ReadOnly = true
		desc, err := pdb.Peek(dir, po.FS)
		if err != nil || !desc.Exists {
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				err = ErrNoDatabase
			}
			return nil, fmt.Errorf("storage/pebble: open %s: %w", dir, err)
		}
	}
	if err := d.lockDir(dir, po.FS); err != nil {
		return nil, err
	}
	po.Lock = d.lock
	db, err := pdb.Open(dir, po)
	if err != nil {
		d.unlockDir()
		return nil, fmt.Errorf("storage/pebble: open %s: %w", dir, err)
	}
	d.db = db
	if o.NoSync {
		d.commit = pdb.NoSync
	}
	return d, nil
}

// NativeOptions returns the Pebble options Open uses for opts (nil means
// the zero Options), without the directory lock Open adds: the settings
// localtable tunes (the block cache, Bloom filters on every level) on
// Pebble's defaults. Baselines that open a bare pebble.DB to compare
// with this engine use it, so that both sides run with the same
// settings; NoSync is not a Pebble option and has no effect here.
func NativeOptions(opts *Options) *pdb.Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.CacheSize <= 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.Logger == nil {
		o.Logger = quietLogger{}
	}
	po := &pdb.Options{
		FS:        o.FS,
		CacheSize: o.CacheSize,
		Logger:    o.Logger,
	}
	// L1 to L6 take L0's filter policy (Pebble's EnsureDefaults).
	po.Levels[0].FilterPolicy = bloom.FilterPolicy(BloomBitsPerKey)
	// Each table file holds keys of one first byte: see fileSpans.
	po.Experimental.SpanPolicyFunc = fileSpans
	return po
}

// lockDir takes the directory's lock (creating the directory) before
// Pebble opens it, so that a directory in use is told apart from other
// failures.
func (d *DB) lockDir(dir string, fsys vfs.FS) error {
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("storage/pebble: open %s: %w", dir, err)
	}
	inUse := func(cause error) error { return &inUseError{dir: dir, cause: cause} }
	if fsys == vfs.Default {
		key, err := filepath.Abs(dir)
		if err == nil {
			key, err = filepath.EvalSymlinks(key)
		}
		if err != nil {
			return fmt.Errorf("storage/pebble: open %s: %w", dir, err)
		}
		openDirs.Lock()
		if openDirs.m[key] {
			openDirs.Unlock()
			return inUse(errors.New("opened by this process"))
		}
		if openDirs.m == nil {
			openDirs.m = make(map[string]bool)
		}
		openDirs.m[key] = true
		openDirs.Unlock()
		d.dirKey = key
	}
	lock, err := pdb.LockDirectory(dir, fsys)
	if err != nil {
		d.unlockDir()
		// A lock held elsewhere is EAGAIN or EACCES from fcntl; the same
		// numbers inside a *fs.PathError come from creating the LOCK file.
		var pe *fs.PathError
		if !errors.As(err, &pe) && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES)) {
			return inUse(err)
		}
		return fmt.Errorf("storage/pebble: open %s: lock: %w", dir, err)
	}
	d.lock = lock
	return nil
}

// unlockDir releases what lockDir took.
func (d *DB) unlockDir() error {
	var err error
	if d.lock != nil {
		err = d.lock.Close()
		d.lock = nil
	}
	if d.dirKey != "" {
		openDirs.Lock()
		delete(openDirs.m, d.dirKey)
		openDirs.Unlock()
		d.dirKey = ""
	}
	return err
}

// Get implements storage.Reader. The value is valid until the returned
// closer is closed.
func (d *DB) Get(key []byte) ([]byte, io.Closer, error) {
	if d.closed.Load() {
		return nil, nil, storage.ErrClosed
	}
	return get(d.db, key)
}

// getter is the Get of pebble.DB and pebble.Snapshot.
type getter interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

func get(g getter, key []byte) ([]byte, io.Closer, error) {
	v, c, err := g.Get(key)
	if err != nil {
		if errors.Is(err, pdb.ErrNotFound) {
			return nil, nil, storage.ErrNotFound
		}
		return nil, nil, fmt.Errorf("storage/pebble: get: %w", err)
	}
	if v == nil {
		v = []byte{} // present with an empty value, not absent
	}
	return v, c, nil
}

// NewIter implements storage.Reader. The iterator reads a consistent view
// of the database as of this call.
func (d *DB) NewIter(opts *storage.IterOptions) (storage.Iterator, error) {
	if d.closed.Load() {
		return nil, storage.ErrClosed
	}
	return newIter(d.db, opts)
}

// NewBatch implements storage.Engine. On a closed engine it returns a
// batch whose every method returns storage.ErrClosed (Close: nil).
func (d *DB) NewBatch() storage.Batch {
	if d.closed.Load() {
		return &batch{d: d, done: true}
	}
	return &batch{d: d, b: d.db.NewBatch()}
}

// NewSnapshot implements storage.Engine.
func (d *DB) NewSnapshot() (storage.Snapshot, error) {
	if d.closed.Load() {
		return nil, storage.ErrClosed
	}
	return &snapshot{s: d.db.NewSnapshot()}, nil
}

// Sync implements storage.Syncer: it makes every batch committed so far
// durable, whatever its sync flag and Options.NoSync.
func (d *DB) Sync() error {
	if d.closed.Load() {
		return storage.ErrClosed
	}
	if err := d.db.LogData(nil, pdb.Sync); err != nil {
		return fmt.Errorf("storage/pebble: sync: %w", err)
	}
	return nil
}

// Flush writes the in-memory table to on-disk tables and waits for it.
// Reads never need it; it is useful for tests and before backups.
func (d *DB) Flush() error {
	if d.closed.Load() {
		return storage.ErrClosed
	}
	if err := d.db.Flush(); err != nil {
		return fmt.Errorf("storage/pebble: flush: %w", err)
	}
	return nil
}

// Compact compacts every key the database holds into its last level and
// waits for it: deleted and overwritten values are dropped, and the
// tables are rewritten as few and as tight as Pebble makes them. Reads
// never need it; it gives the database's size once its history is gone
// (after a bulk load or a large deletion), and a steady layout to
// measure. Writes may go on during it.
func (d *DB) Compact(ctx context.Context) error {
	if d.closed.Load() {
		return storage.ErrClosed
	}
	it, err := d.db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("storage/pebble: compact: %w", err)
	}
	var first, last []byte
	if it.First() {
		first = append(first, it.Key()...)
		if it.Last() {
			last = append(last, it.Key()...)
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("storage/pebble: compact: %w", err)
	}
	if first == nil {
		return nil // nothing to compact
	}
	// The end of Pebble's range is exclusive: the key just after last.
	if err := d.db.Compact(ctx, first, append(last, 0), true); err != nil {
		return fmt.Errorf("storage/pebble: compact: %w", err)
	}
	return nil
}

// Close implements storage.Engine: it closes the database, and returns
// ErrClosed if it was already closed. Snapshots and iterators must be
// closed first.
func (d *DB) Close() error {
	if d.closed.Swap(true) {
		return storage.ErrClosed
	}
	err := d.db.Close()
	// The lock is released even if Close failed: the DB is unusable.
	if uerr := d.unlockDir(); err == nil {
		err = uerr
	}
	if err != nil {
		return fmt.Errorf("storage/pebble: close: %w", err)
	}
	return nil
}

// snapshot is a storage.Snapshot over a pebble.Snapshot.
type snapshot struct {
	s      *pdb.Snapshot
	closed atomic.Bool
}

func (s *snapshot) Get(key []byte) ([]byte, io.Closer, error) {
	if s.closed.Load() {
		return nil, nil, storage.ErrClosed
	}
	return get(s.s, key)
}

func (s *snapshot) NewIter(opts *storage.IterOptions) (storage.Iterator, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	return newIter(s.s, opts)
}

func (s *snapshot) Close() error {
	if s.closed.Swap(true) {
		return storage.ErrClosed
	}
	return s.s.Close()
}

// batch is a storage.Batch over a pebble.Batch. DeleteRange becomes a
// Pebble range deletion.
type batch struct {
	d    *DB
	b    *pdb.Batch
	done bool // committed or closed
}

func (b *batch) Set(key, value []byte) error {
	if b.done {
		return storage.ErrClosed
	}
	return b.b.Set(key, value, nil)
}

func (b *batch) Delete(key []byte) error {
	if b.done {
		return storage.ErrClosed
	}
	return b.b.Delete(key, nil)
}

func (b *batch) DeleteRange(start, end []byte) error {
	if b.done {
		return storage.ErrClosed
	}
	if string(start) >= string(end) {
		return nil // empty range; Pebble rejects inverted ranges
	}
	return b.b.DeleteRange(start, end, nil)
}

func (b *batch) Len() int {
	if b.done {
		return 0
	}
	return int(b.b.Count())
}

func (b *batch) Commit(sync bool) error {
	if b.done {
		return storage.ErrClosed
	}
	b.done = true
	defer b.release()
	if b.d.closed.Load() {
		return storage.ErrClosed
	}
	wo := pdb.NoSync
	if sync {
		wo = b.d.commit
	}
	if err := b.b.Commit(wo); err != nil {
		return fmt.Errorf("storage/pebble: commit: %w", err)
	}
	return nil
}

func (b *batch) release() {
	if b.b != nil {
		b.b.Close()
		b.b = nil
	}
}

func (b *batch) Close() error {
	b.done = true
	b.release()
	return nil
}

// fileSpans is the engine's span policy (Pebble's SpanPolicyFunc):
// Pebble's default policy everywhere, but a span ends where the keys'
// first byte changes, and, under a log's prefix, where the segment of
// its sequence changes (logSpans); a flush or compaction ends its table
// file there. So no table file holds keys of two first bytes, nor of two
// segments of a log.
//
// localtable's key spaces differ in their first byte (entities, the change
// feed, index entries, the catalog: internal/keyenc), and they grow apart:
// a transaction that inserts entities after all others also appends to the
// feed, after all its records. A flush that put both in one file made a
// file whose key range spans every older file of the feed and of the
// entities between them, so each compaction of it rewrote those. Split by
// first byte, the new files lie after the older ones of their own space.
// BenchmarkFeedWriteAmp (10,000 such transactions of 100): write
// amplification 2.60 with the feed on and 2.42 off before, 2.31 and 2.24
// with the split; the process's CPU per transaction 0.84× and 0.80× what it
// was (BenchmarkFeedWrite's Transact100NewPartition in tests/, medians of 6
// alternating runs of each build).
func fileSpans(start []byte) (pdb.SpanPolicy, []byte, error) {
	if len(start) == 0 {
		return pdb.SpanPolicy{}, []byte{0}, nil
	}
	if end := logSpanEnd(start); end != nil {
		return pdb.SpanPolicy{}, end, nil
	}
	if start[0] == 0xff {
		return pdb.SpanPolicy{}, nil, nil
	}
	return pdb.SpanPolicy{}, []byte{start[0] + 1}, nil
}

// logSpans: the keys under a log's prefix (internal/keyenc.LogPrefixes:
// the change feed's records and its images' markers) are the prefix then
// a big-endian revision, appended in order and deleted from the oldest by
// a range deletion, the pruning. A table file of a log holds the keys of
// one segment, those whose revision's first logSegmentBytes bytes are the
// same: 65,536 revisions.
//
// The pruning's range deletion, flushed with the newest records, made a
// file that spanned every record the feed keeps: each new file of the
// feed overlapped all the older ones, Pebble's level 0 stacked up, and
// its compactions rewrote the feed's files, and the entities' files
// beside them, again and again. With the pruning's range starting where
// the previous one ended (so it spans only what it deletes) and the
// files cut at segments, the range deletion lies in a file of the oldest
// segments, which a delete-only compaction drops whole, and the new
// records in files after all the others. BenchmarkFeedWriteAmp (5,000
// transactions of 100, the feed on): 20 compactions and write
// amplification 2.28 before, 14 and 1.72 after (the feed off: 1 and
// 2.1, compactions that fall later).
const logSegmentBytes = 6

// logPrefixes are the prefixes of the keys that logSpans splits.
var logPrefixes = keyenc.LogPrefixes()

// logSpanEnd returns the end of the segment of a log that start is in,
// or nil if start is under no log's prefix.
func logSpanEnd(start []byte) []byte {
	for _, p := range logPrefixes {
		n := len(p) + logSegmentBytes
		if len(start) < n || !bytes.HasPrefix(start, p) {
			continue
		}
		end := bytes.Clone(start[:n])
		for i := n - 1; i >= len(p); i-- {
			if end[i]++; end[i] != 0 {
				return end
			}
		}
		return nil // the last segment: the span ends with the first byte
	}
	return nil
}
