// Package memory is the in-memory storage engine: a copy-on-write B-tree
// (github.com/tidwall/btree) with lock-free readers. It is the default
// engine of localtable.Open. Create one with New.
package memory

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tidwall/btree"

	"github.com/localtable/localtable/storage"
)

// Options configures an in-memory engine. The zero value is ready to
// use.
type Options struct {
	// Degree is the B-tree degree: a node holds up to 2*Degree-1 items.
	// Zero selects 16. Every commit copies the nodes on the paths it
	// changes, so smaller nodes than the B-tree library's default (32)
	// make writes cheaper, at no measurable cost to reads.
	Degree int

	// Logs are key prefixes under which keys are written as a log: each
	// key set under a prefix is greater than every key under it, and
	// keys go from the front, by a Delete of the first or a DeleteRange
	// from the prefix's start (a change feed's records, under a
	// revision in big-endian order, pruned from the oldest). The engine
	// keeps such keys out of its B-tree, in append-only chunks of
	// immutable entries, so that a write to the log costs an append
	// instead of a second root-to-leaf path of copy-on-write nodes, and
	// the log never moves as it grows. A snapshot of it stays O(1): a
	// copy of the chunks' list and the log's bounds in them.
	//
	// Any write that does not fit the pattern (a key set below the last
	// under its prefix or over it, a Delete or DeleteRange that removes
	// keys neither at the front nor at the back) is still applied
	// correctly: the engine moves that prefix's keys into the B-tree and
	// from then on treats it as any other keys. Every read sees the
	// same keys in the same order either way. Prefixes that begin with
	// another of them are covered by it; nil means none.
	Logs [][]byte
}

// defaultDegree is the B-tree degree unless Options say otherwise.
const defaultDegree = 16

// New returns an empty in-memory engine configured by opts (nil
// means the defaults). opts is not retained.
//
// The engine is a copy-on-write B-tree with multi-version concurrency
// control, in the manner of go-memdb: writers serialize on one lock and
// apply each batch to a private tree, in place. Readers read an O(1)
// copy of that tree, published through an atomic pointer, and never
// lock, so they never block writers nor each other, and a Snapshot
// costs O(1).
//
// A copy is published lazily: not after every commit, but when a
// reader needs one newer than the last published (an iterator or a
// snapshot taken after a commit). A published copy shares its nodes
// with the writer's tree, and the writer's next change copies the nodes
// on the path it changes: publishing after every commit made every
// commit pay for that path copying, although a run of writes with no
// reader in between needs none of it. A Get that finds the published
// copy older than the last commit reads the writer's tree under a
// shared lock instead, without publishing; it waits only for a commit
// being applied (a batch with a range deletion, which may take long,
// publishes the tree as it stands first, so that Gets need not wait for
// it). After many such Gets with no commit in between (a
// read-mostly phase), one of them publishes, and the Gets that follow
// are lock-free again. Either way every read sees every batch whose
// commit returned before the read began.
//
// Keys under the prefixes of Options.Logs are kept beside the tree, in
// append-only logs, while they are written as a log: see Options.Logs.
//
// The returned engine is safe for concurrent use. Values it returns (from
// Get and Iterator.Value) are the engine's own immutable copies; they stay
// valid for as long as the caller holds them, although the interface only
// promises validity until the next positioning call or Close. Callers must
// not modify them.
func New(opts *Options) storage.Engine {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Degree == 0 {
		o.Degree = defaultDegree
	}
	w := btree.NewBTreeGOptions(itemLess, btree.Options{Degree: o.Degree, NoLocks: true})
	m := &memEngine{w: w, defs: newLogDefs(o.Logs)}
	if len(m.defs) > 0 {
		m.wlogs = make([]logState, len(m.defs))
	}
	for _, d := range m.defs {
		if len(d.prefix) == 0 {
			m.firsts = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
			break
		}
		m.firsts[d.prefix[0]>>6] |= 1 << (d.prefix[0] & 63)
	}
	m.pub.Store(&view{t: w.Copy(), logs: m.logsView()})
	return m
}

// item is one key-value pair in the tree: a pointer to one buffer holding
// the key followed by the value, and their lengths. The buffer is owned by
// the engine and never modified once inserted.
//
// The layout is what makes commits cheap: every commit copies the nodes on
// the paths it changes (copy-on-write), so the bytes and pointers of an
// item are paid for on every commit. Sixteen bytes with one pointer is a
// third of two slices (48 bytes, two pointers), and a lookup needs no item
// of its own: probe points at the caller's key.
type item struct {
	p          *byte // the key's first byte; when both are empty, nil or the start of any buffer (never a buffer's end)
	klen, vlen uint32
}

// maxLen bounds keys and values, whose lengths an item holds in 32 bits.
const maxLen = math.MaxUint32

// emptyValue is the value of an item whose value is empty: present, so
// not nil.
var emptyValue = []byte{}

func (it item) key() []byte { return unsafe.Slice(it.p, it.klen) }

func (it item) value() []byte {
	if it.vlen == 0 {
		// p+klen may point past the buffer: not a pointer to make.
		return emptyValue
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(it.p), it.klen)), it.vlen)
}

// probe returns an item to look key up by. It points at key, which must
// not change while the item is used, and has no value. Keys longer than
// maxLen are never stored, so their lookups are not needed.
func probe(key []byte) item {
	return item{p: unsafe.SliceData(key), klen: uint32(min(uint64(len(key)), maxLen))}
}

// newItem copies key and value into one new buffer.
func newItem(key, value []byte) item {
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	return item{p: unsafe.SliceData(buf), klen: uint32(len(key)), vlen: uint32(len(value))}
}

func itemLess(a, b item) bool { return string(a.key()) < string(b.key()) }

type tree = btree.BTreeG[item]

// memEngine is the in-memory storage.Engine.
type memEngine struct {
	// mu guards w. Writers (commits, publishing, checkpoints) hold it
	// exclusively; a Get that reads w holds it shared.
	mu sync.RWMutex
	w  *tree // the writer's private tree; nil once the engine is closed

	// defs are the log prefixes (Options.Logs), sorted, none a prefix
	// of another; never modified. wlogs are the writer's logs, one per
	// def, guarded by mu as w is.
	defs  []logDef
	wlogs []logState
	// firsts has bit b set if a log's prefix may begin with byte b
	// (every bit, for an empty prefix): logOf rejects most keys by it.
	firsts [4]uint64

	// seq counts the changes applied to w (commits and restores). It is
	// written under mu held exclusively, before mu is released.
	seq atomic.Uint64

	// pub is the last published view; nil once the engine is closed. A
	// published tree is never modified and never Copy()'d (Copy writes
	// the receiver's isoid), so any number of goroutines may read it.
	pub atomic.Pointer[view]

	// staleGets counts the Gets that read w since the last commit or
	// publication; the one that reaches publishAfter publishes.
	staleGets atomic.Int32
}

// view is a published tree and logs: w and wlogs as they were after
// seq changes.
type view struct {
	t    *tree
	logs logsView
	seq  uint64
}

// publishAfter is how many Gets in a row, with no commit between them,
// read the writer's tree under the lock before one publishes a copy.
// It is above the reads of a transaction of the table layer (at most
// 100, all made before its commit), so that a write workload publishes
// nothing, and low enough that a read-mostly phase soon reads without
// the lock.
const publishAfter = 256

// current returns a published view that holds every change applied so
// far, publishing one if the last is older.
func (m *memEngine) current() (*view, error) {
	v := m.pub.Load()
	if v == nil {
		return nil, storage.ErrClosed
	}
	if v.seq == m.seq.Load() {
		return v, nil
	}
	return m.publish()
}

// publish publishes a copy of w, unless the published view is current.
func (m *memEngine) publish() (*view, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.pub.Load()
	if v == nil {
		return nil, storage.ErrClosed
	}
	if seq := m.seq.Load(); v.seq != seq {
		// Copy gives w a fresh isoid, so its next change copies the
		// nodes it touches instead of writing into the ones it now
		// shares with the published tree.
		v = &view{t: m.w.Copy(), logs: m.logsView(), seq: seq}
		m.pub.Store(v)
		m.staleGets.Store(0)
	}
	return v, nil
}

// Get implements storage.Reader. The returned closer is storage.NopCloser.
func (m *memEngine) Get(key []byte) ([]byte, io.Closer, error) {
	v := m.pub.Load()
	if v == nil {
		return nil, nil, storage.ErrClosed
	}
	if v.seq == m.seq.Load() {
		return v.get(key)
	}
	if m.staleGets.Add(1) >= publishAfter {
		v, err := m.publish()
		if err != nil {
			return nil, nil, err
		}
		return v.get(key)
	}
	// The published view misses a commit: read the writer's tree, which
	// changes only under mu held exclusively. Its items are never
	// modified, so the value stays valid after the lock is released.
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.w == nil {
		return nil, nil, storage.ErrClosed
	}
	if j := m.logOf(key); j >= 0 && m.wlogs[j].items.n > 0 {
		return logGet(&m.wlogs[j].items, key)
	}
	return treeGet(m.w, key)
}

// NewIter implements storage.Reader.
func (m *memEngine) NewIter(opts *storage.IterOptions) (storage.Iterator, error) {
	v, err := m.current()
	if err != nil {
		return nil, err
	}
	return v.newIter(opts), nil
}

// StableReads implements StableReader: the engine's items are never
// modified once inserted, so the keys and values it returns stay valid.
func (m *memEngine) StableReads() bool { return true }

// NewBatch implements storage.Engine.
func (m *memEngine) NewBatch() storage.Batch { return &memBatch{m: m} }

// NewSnapshot implements storage.Engine. It is O(1): the snapshot holds a
// published tree, published now if the last one is older than the last
// commit.
func (m *memEngine) NewSnapshot() (storage.Snapshot, error) {
	v, err := m.current()
	if err != nil {
		return nil, err
	}
	return &memSnapshot{v: v}, nil
}

// Close implements storage.Engine. A second Close returns storage.ErrClosed. Snapshots and
// iterators opened before Close keep working (they hold their own tree), but
// every call on the engine itself returns storage.ErrClosed.
func (m *memEngine) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pub.Swap(nil) == nil {
		return storage.ErrClosed
	}
	m.w = nil
	clear(m.wlogs)
	return nil
}

// commit applies ops to the writer tree, in place. It publishes
// nothing: the next reader that needs the change does.
func (m *memEngine) commit(ops []memOp) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.w == nil {
		return storage.ErrClosed
	}
	w := m.w
	if v := m.pub.Load(); v.seq != m.seq.Load() {
		for i := range ops {
			if ops[i].kind == opDeleteRange && !m.inLog(ops[i].it.key(), ops[i].end.key()) {
				// A range deletion may take long (a table's deletion):
				// Gets that find the published tree stale would wait for
				// it under the lock. Publish the tree as it stands, so
				// that they read without it meanwhile.
				m.pub.Store(&view{t: w.Copy(), logs: m.logsView(), seq: m.seq.Load()})
				break
			}
		}
	}
	for i := range ops {
		op := &ops[i]
		if m.defs != nil && m.logApply(op) {
			continue
		}
		switch op.kind {
		case opSet:
			w.Set(op.it)
		case opDelete:
			w.Delete(op.it)
		case opDeleteRange:
			w.DeleteRange(op.it, op.end, &btree.DeleteRangeOptions{NoReturn: true})
		}
	}
	m.seq.Add(1)
	m.staleGets.Store(0)
	return nil
}

func treeGet(t *tree, key []byte) ([]byte, io.Closer, error) {
	it, ok := t.Get(probe(key))
	if !ok {
		return nil, nil, storage.ErrNotFound
	}
	return it.value(), storage.NopCloser, nil
}

// memSnapshot is a storage.Snapshot of the in-memory engine: a published view.
type memSnapshot struct {
	v      *view
	closed atomic.Bool
}

// Get implements storage.Reader.
func (s *memSnapshot) Get(key []byte) ([]byte, io.Closer, error) {
	if s.closed.Load() {
		return nil, nil, storage.ErrClosed
	}
	return s.v.get(key)
}

// NewIter implements storage.Reader. The iterator stays valid after the snapshot
// is closed.
func (s *memSnapshot) NewIter(opts *storage.IterOptions) (storage.Iterator, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	return s.v.newIter(opts), nil
}

// Close implements storage.Snapshot; a second Close returns storage.ErrClosed.
func (s *memSnapshot) Close() error {
	if s.closed.Swap(true) {
		return storage.ErrClosed
	}
	return nil
}

type opKind uint8

const (
	opSet opKind = iota
	opDelete
	opDeleteRange // it holds the start, end the end
)

// memOp is one write of a batch: for opSet the item to store, for
// opDelete an item holding the key, for opDeleteRange the items of the
// range's start and end keys.
type memOp struct {
	kind    opKind
	it, end item
}

// errTooLong is the error for a key or value longer than maxLen.
var errTooLong = errors.New("storage: key or value longer than 4 GiB")

// memBatch is a storage.Batch of the in-memory engine: a list of operations with
// copied arguments.
type memBatch struct {
	m      *memEngine
	ops    []memOp
	pooled *[]memOp // where ops came from, to go back to at release
	done   bool     // committed or closed
}

// add appends the operation of kind on it (and end) to the batch.
func (b *memBatch) add(kind opKind, it, end item) error {
	if b.done {
		return storage.ErrClosed
	}
	if b.pooled == nil {
		b.pooled = opsPool.Get().(*[]memOp)
		b.ops = (*b.pooled)[:0]
	}
	// Field by field: a memOp literal is built on the stack and copied
	// by loads wider than its stores, a stall each time.
	b.ops = append(b.ops, memOp{})
	op := &b.ops[len(b.ops)-1]
	op.kind, op.it, op.end = kind, it, end
	return nil
}

// opsPool holds the emptied operation lists of committed and closed
// batches, whose growth would otherwise be paid by every batch.
var opsPool = sync.Pool{New: func() any { s := make([]memOp, 0, 4); return &s }}

// release empties the batch's operations, dropping their items, and
// returns the list to opsPool unless it grew large.
func (b *memBatch) release() {
	if b.pooled != nil && cap(b.ops) <= 1024 {
		clear(b.ops)
		*b.pooled = b.ops[:0]
		opsPool.Put(b.pooled)
	}
	b.ops, b.pooled = nil, nil
}

// Set implements storage.Writer. The key and the value are copied into one buffer:
// the item the commit stores.
func (b *memBatch) Set(key, value []byte) error {
	if uint64(len(key)) > maxLen || uint64(len(value)) > maxLen {
		return errTooLong
	}
	if b.done {
		return storage.ErrClosed
	}
	return b.add(opSet, newItem(key, value), item{})
}

// SetNested implements storage.NestedSetter. The outer key and value,
// with the inner writes inserted, are written into one new buffer, and
// each inner write gets an item that points into it: one allocation, and
// one copy of each byte, for them all. The buffer lives as long as any of
// its items: an inner one keeps the outer key and value alive with it,
// the bytes of every other write nested there included (a transaction's
// feed record, once the feed no longer keeps it, lives on until the last
// of its entities is overwritten or deleted).
//
// The buffer starts with up to nestAlign-1 bytes of padding, so that the
// first inner write's key starts at a multiple of nestAlign bytes from
// the buffer's start, as a key that Set stores does (at the start): see
// nestAlign.
func (b *memBatch) SetNested(key, value []byte, inner []storage.Nested) error {
	if b.done {
		return storage.ErrClosed
	}
	size, err := storage.NestedSize(value, inner)
	if err != nil {
		return err
	}
	if uint64(len(key)) > maxLen || size > maxLen-nestAlign {
		return errTooLong
	}
	pad := 0
	if len(inner) > 0 {
		pad = -(len(key) + inner[0].At) & (nestAlign - 1)
	}
	// A strings.Builder allocates its buffer without zeroing it: each
	// byte is written once, here.
	var buf strings.Builder
	buf.Grow(pad + len(key) + int(size))
	buf.Write(zeroPad[:pad])
	buf.Write(key)
	from := 0
	for i := range inner {
		n := &inner[i]
		buf.Write(value[from:n.At])
		buf.Write(n.Key)
		buf.Write(n.Value)
		from = n.At
	}
	buf.Write(value[from:])
	base := unsafe.Pointer(unsafe.StringData(buf.String()))
	if err := b.add(opSet, bufItem(base, pad, len(key), int(size)), item{}); err != nil {
		return err
	}
	at, from := pad+len(key), 0 // where inner write i starts in the buffer
	for i := range inner {
		n := &inner[i]
		at += n.At - from
		from = n.At
		if err := b.add(opSet, bufItem(base, at, len(n.Key), len(n.Value)), item{}); err != nil {
			return err
		}
		at += len(n.Key) + len(n.Value)
	}
	return nil
}

// bufItem returns the item of a key of klen bytes then a value of vlen
// bytes at byte at of the buffer at base. An empty one points nowhere: at
// may be the buffer's end, and a pointer there would point past it.
func bufItem(base unsafe.Pointer, at, klen, vlen int) item {
	if klen+vlen == 0 {
		return item{}
	}
	return item{p: (*byte)(unsafe.Add(base, at)), klen: uint32(klen), vlen: uint32(vlen)}
}

// nestAlign is where SetNested places the key of the first write nested
// in a buffer: at a multiple of 32 bytes from the buffer's start. The
// runtime allocates a buffer of 256 bytes or more (a record of a few
// properties with its key) at a multiple of 32 bytes, so such a key of up
// to 32 bytes lies in one 64-byte cache line, not two, as the key of an
// item that Set stores does (at its buffer's start). Every write's
// B-tree search compares the keys of the items on its path, each a likely
// cache miss in a large tree: a key across two lines costs a second.
// Measured, turn by turn against the feed off, on single inserts of
// entities of a dozen properties with the change feed on (whose record
// holds each entity after its own head): the feed cost 2 points less.
const nestAlign = 32

// zeroPad is the padding SetNested writes.
var zeroPad [nestAlign]byte

// Delete implements storage.Writer.
func (b *memBatch) Delete(key []byte) error {
	if b.done {
		return storage.ErrClosed
	}
	return b.add(opDelete, newItem(key, nil), item{})
}

// DeleteRange implements storage.Writer.
func (b *memBatch) DeleteRange(start, end []byte) error {
	if b.done {
		return storage.ErrClosed
	}
	if bytes.Compare(start, end) >= 0 {
		return nil // empty range
	}
	return b.add(opDeleteRange, newItem(start, nil), newItem(end, nil))
}

// Len implements storage.Batch.
func (b *memBatch) Len() int { return len(b.ops) }

// Commit implements storage.Batch. Committing a batch twice, or after Close, returns
// storage.ErrClosed.
func (b *memBatch) Commit(sync bool) error {
	if b.done {
		return storage.ErrClosed
	}
	b.done = true
	err := b.m.commit(b.ops)
	b.release()
	return err
}

// Close implements storage.Batch. It always returns nil, so that a deferred Close
// after Commit is harmless.
func (b *memBatch) Close() error {
	b.done = true
	b.release()
	return nil
}
