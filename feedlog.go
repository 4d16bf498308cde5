package localtable

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang/snappy"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// The feed's storage. Each commit that changes entities or tables writes
// one feed record under keyenc.FeedKey(its first revision):
//
//	byte     version (1)
//	int64    the commit's time in ticks, by the account's clock (retention)
//	uvarint  change count n (1 to 200)
//	per change:
//	  byte    kind (ChangeKind)
//	  uvarint len, table name
//	  uvarint len, the entity's keys as its engine key encodes them
//	          (keyenc.DecodePair; empty for a table's changes)
//	  uvarint len, the entity's record after the change (empty for a
//	          delete and a table's changes)
//
// On an engine whose batches can nest writes in another
// (storage.NestedSetter: the memory engine), every commit writes version 2
// instead, where each change ends with the entity's whole engine key,
// table prefix included, then its record, one after the other, as the
// entity's own write stores them: the entity writes of the commit, one or
// a transaction's hundred, are nested in the record's (write.inner, at,
// next), the engine stores them all in one buffer, and the feed keeps no
// copy of them (but of an entity whose write is nested in its first
// covering index's entry: see indexMaintainer). An entity stored there
// keeps the record's buffer alive as long as it lives, after the feed
// has pruned the record: a record of a transaction lives until the last
// of its entities is overwritten or deleted. Its change is
//
//	  byte    kind (ChangeKind)
//	  uvarint len, table name
//	  uvarint len k, the entity's engine key (keyenc.AppendEntityKey;
//	          empty for a table's changes)
//	  uvarint len r, the entity's record after the change (empty for a
//	          delete and a table's changes)
//	  k bytes, the key, then r bytes, the record
//
// Version 1 elsewhere keeps the feed's bytes per change as they were
// (the table prefix would add 9 to each, for nothing to share).
//
// On an engine that does not keep its data in memory as written (whose
// reads are not stable, storage.StableReader: pebble, etcd), a record of
// version 1 whose changes take feedCompressMin bytes or more (a
// transaction's) is written as version 3 instead: the same header
// (version 3, the time, the change count), then the changes of version 1
// compressed as one snappy block, if that saves an eighth at least. There
// every byte of the record costs again after the commit: on pebble it is
// written to the write-ahead log, fills the memtable (whose flushes come
// sooner) and is rewritten by each compaction that takes it, which made a
// transaction of 100 entities cost a third more with the feed on; etcd
// sends it to every member and keeps it in its log. Snappy keeps little
// more than what differs from one entity to the next (the property names
// each entity's record repeats, for one, compress away). The memory
// engine keeps version 1: a record there is read as stored, and
// compressing it would cost the write for no I/O saved.
//
// On such an engine that the account owns alone (pebble), where the
// entity's own write and its copy in the feed both cost their bytes
// again, a record names its entities instead of copying them: version 4
// has the same head, then per change
//
//	  byte    kind (ChangeKind)
//	  uvarint len, table name
//	  uvarint len k, the entity's engine key (empty for a table's changes)
//	  k bytes, the key
//
// (version 5 is version 4 compressed, as version 3 is version 1), and an
// entity change stands for the entity under that key as it was at
// the record's time, which is its Timestamp (a commit stamps its entities
// with its time, and no two writes of an entity share one). A reader
// finds it there while it is not overwritten; a commit that overwrites or
// deletes an entity, deletes its table or restores the account first
// keeps an image of what it replaces (feedimage.go), which the reader
// finds instead, until the feed no longer keeps the change.
//
// Each commit raises the next revision by the n changes of its record,
// which have the revisions first … first+n-1. On a shared engine the next revision is stored,
// metaFeedRev, read and written by every commit, which is conditioned on
// it: revisions follow commit order across processes. On an engine the
// account owns alone, the commits that write the feed are serialized
// (commitContext.hold) and the next revision is kept in memory: it is
// the end of the last record, or metaFeedRev if higher, which each
// pruning writes (a pruning by age may leave no record).

// The versions of the feed record (see above).
const (
	feedRecordV1 = 1 // keys without their table's prefix
	feedRecordV2 = 2 // the engine key, then the record, at each change's end
	feedRecordV3 = 3 // version 1 with its changes compressed
	feedRecordV4 = 4 // the entities' keys, not their records
	feedRecordV5 = 5 // version 4 with its changes compressed
)

// feedCompressMin is the size of the changes of a record of version 1
// from which they are compressed, where the engine wants it
// (feedLog.compress): a transaction's, or an entity's of some size.
// Smaller ones would save too little for the cost.
const feedCompressMin = 1024

// maxFeedRecordBody bounds the changes of a record of version 3 once
// decompressed: a transaction's entities, at most 4 MiB of payload
// (checkTransactionSize), take less than this with their names and keys.
const maxFeedRecordBody = 64 << 20

// compressFeedRecord turns the record of version 1 (or 4) that ends buf,
// from byte at, into one of version 3 (or 5), in the commit's scratch, unless its
// changes are small or compress badly: it returns buf with the record
// replaced (or buf as it was).
func compressFeedRecord(c *commitContext, buf []byte, at int) []byte {
	rec := buf[at:]
	_, w := uvarint(rec[9:])
	head := 9 + w // the version, the time, the change count
	body := rec[head:]
	if len(body) < feedCompressMin {
		return buf
	}
	out := c.scratch(at + head + snappy.MaxEncodedLen(len(body)))
	out = append(append(out, buf[:at]...), rec[:head]...)
	out[at] = compressed(rec[0])
	z := snappy.Encode(out[len(out):cap(out)], body)
	if len(z) > len(body)-len(body)/8 {
		return buf // not worth a decompression at each read
	}
	return out[:len(out)+len(z)]
}

// compressed returns the version of a feed record of version v with its
// changes compressed: 3 for 1, 5 for 4.
func compressed(v byte) byte {
	if v == feedRecordV4 {
		return feedRecordV5
	}
	return feedRecordV3
}

// uncompressed is compressed's inverse.
func uncompressed(v byte) byte {
	if v == feedRecordV5 {
		return feedRecordV4
	}
	return feedRecordV1
}

// metaFeedRev holds the next revision of the feed.
var (
	metaFeedRev     = keyenc.MetaKey("feedrev")
	metaFeedRevKeys = [][]byte{metaFeedRev} // what the contributor reads
)

// feedPruneEvery is how many revisions go by between two prunings of the
// feed: each is one range deletion, not one per commit.
const feedPruneEvery = 1024

// feedLog is an account's change feed: the contributor that writes it, and
// what its watchers wait on.
type feedLog struct {
	a      *Account
	opts   FeedOptions
	b      *broadcaster
	wake   func() // b.wake, made once
	closed chan struct{}
	once   sync.Once

	// alone: the account owns its engine (strategy.alone), kept so
	// that each commit need not ask the strategy.
	alone bool
	// nests: the engine's batches are storage.NestedSetters (see
	// feedRecordV2).
	nests bool
	// compress: the engine's reads are not stable (storage.StableReader:
	// the memory engine's are), so it does not keep its data in memory
	// as written, and large records are compressed (feedRecordV3).
	compress bool
	// refs: compress, and the engine is the account's alone; records
	// name their entities (feedRecordV4), and images keep what their
	// overwrites replace (feedimage.go).
	refs bool
	// off: the account has the feed off (Account.keeper), and this one
	// only keeps the images that the records of version 4 a store holds
	// from earlier opens need, those of the versions stamped within win,
	// their times (nil: there are no such records). A Restore sets win
	// again while writes into the restored tables may run.
	off bool
	win atomic.Pointer[tickSpan]

	// rev is, on an engine the account owns alone, the next revision: set
	// at open (load), raised once a commit is made (advance, which sets it
	// to pending: both happen under the commits' exclusive hold).
	rev     atomic.Uint64
	pending Revision
	advance func()
	// pruned and markFrom are, on an engine the account owns alone, the
	// revisions below which no record and no image marker is left (set
	// at load, raised once a pruning is committed; 0: not known). A
	// pruning deletes from there, not from revision 0: so its range
	// deletion does not span the records and markers the feed keeps
	// (which, on pebble, would tie the next table file of the feed to
	// every older one: see storage/pebble's logSpans).
	pruned, markFrom Revision
}

func newFeedLog(a *Account, opts FeedOptions) *feedLog {
	if opts.KeepChanges <= 0 {
		opts.KeepChanges = DefaultFeedChanges
	}
	f := &feedLog{a: a, opts: opts, b: newBroadcaster(), closed: make(chan struct{})}
	f.wake = f.b.wake
	b := a.eng.NewBatch()
	_, f.nests = b.(storage.NestedSetter)
	b.Close()
	f.compress = !stableReads(a.eng)
	f.alone = a.strategy.alone()
	f.refs = f.compress && f.alone
	f.advance = func() {
		f.rev.Store(uint64(f.pending))
		f.b.wake()
	}
	return f
}

// load sets the next revision kept in memory, on an engine the account
// owns alone, from the store: at open, and after a Restore, where it
// never goes down (a revision handed out is never handed out again).
func (f *feedLog) load(ctx context.Context) error {
	if !f.a.strategy.alone() {
		return nil
	}
	next, err := f.stored(ctx)
	if err != nil {
		return err
	}
	it, err := storage.NewIterContext(ctx, f.a.eng, feedBounds)
	if err != nil {
		return err
	}
	defer it.Close()
	if it.Last() {
		first, _, ok := feedRecordHead(it.Key(), it.Value())
		n, w := uvarint(it.Value()[min(9, len(it.Value())):])
		if !ok || w <= 0 {
			return fmt.Errorf("%w (key %q)", errCorruptFeed, it.Key())
		}
		next = max(next, first+Revision(n))
	}
	if err := it.Error(); err != nil {
		return err
	}
	f.rev.Store(max(f.rev.Load(), uint64(next)))
	// Where the records and the markers begin (read again after a
	// Restore, which keeps the feed: the prunings go on from there).
	f.pruned, f.markFrom = 0, 0
	if it.First() {
		first, _, ok := feedRecordHead(it.Key(), it.Value())
		if !ok {
			return fmt.Errorf("%w (key %q)", errCorruptFeed, it.Key())
		}
		f.pruned = first
	}
	if err := it.Error(); err != nil {
		return err
	}
	marks, err := storage.NewIterContext(ctx, f.a.eng, feedMarkBounds)
	if err != nil {
		return err
	}
	defer marks.Close()
	if marks.First() {
		rev, ok := keyenc.FeedImageGCRev(marks.Key())
		if !ok {
			return fmt.Errorf("%w: bad image marker %q", errCorruptFeed, marks.Key())
		}
		f.markFrom = Revision(rev)
	}
	return marks.Error()
}

// inFeed reports whether a change of kind k goes in the feed.
func inFeed(k changeKind) bool {
	return k >= changeInsert && k <= changeTableDeleted || k == changeRestored || k == changeExpired
}

// feedEntries is how many changes of the feed c makes: an insert over an
// expired entity makes two, the expired change then the insert.
func feedEntries(c *change) int {
	switch {
	case !inFeed(c.kind):
		return 0
	case c.expired:
		return 2
	}
	return 1
}

// maxFeedRecordChanges is the most changes one feed record holds: a
// transaction's actions, each of which may be an insert over an expired
// entity.
const maxFeedRecordChanges = 2 * MaxTransactionActions

// wants: every entity change goes in the feed (with the feed off, it
// may replace what the feed kept names).
func (f *feedLog) wants(*liveTable) bool { return !f.off || f.win.Load() != nil }

func (f *feedLog) contribute(c *commitContext) error {
	if f.off {
		return f.keepOff(c)
	}
	n := 0
	for i := range c.changes {
		n += feedEntries(&c.changes[i])
	}
	if n == 0 {
		return nil
	}
	alone := f.alone
	var first Revision
	if alone {
		c.hold()
		first = Revision(f.rev.Load())
	} else {
		vals, found, err := c.read(metaFeedRevKeys...)
		if err != nil {
			return err
		}
		first = 1
		if found[0] {
			v, ok := decodeTicks(vals[0])
			if !ok {
				return fmt.Errorf("localtable: corrupt metadata %q", metaFeedRev)
			}
			first = Revision(v)
		}
	}
	now := c.now()
	next := first + Revision(n)
	pruning := (next-1)/feedPruneEvery != (first-1)/feedPruneEvery
	// The key, the next revision and the record in one buffer.
	size := 9 + 8 + 1 + 8 + 2
	for i := range c.changes {
		size += 2 * (3*binary.MaxVarintLen32 + 1 + len(c.changes[i].table) + len(c.changes[i].key))
		size += len(c.changes[i].new)
	}
	buf := c.scratch(size)
	buf = binary.BigEndian.AppendUint64(append(buf, keyenc.PrefixFeed), uint64(first))
	buf = binary.BigEndian.AppendUint64(buf, uint64(next))
	// On an engine that can, the record holds each entity the commit
	// writes, its key then its record, and the entity's write is nested
	// in the record's: one buffer holds them all, and the record's value
	// leaves them out (the engine puts it together).
	v := byte(feedRecordV1)
	var nest, ats []int32 // see appendFeedRecord
	switch {
	case f.nests:
		v = feedRecordV2
		var inline [2][8]int32 // a single write's, or a small transaction's
		nest, ats = inline[0][:0], inline[1][:0]
		if len(c.changes) > len(inline[0]) {
			nest, ats = make([]int32, 0, len(c.changes)), make([]int32, 0, len(c.changes))
		}
		nest, ats = nest[:len(c.changes)], ats[:len(c.changes)]
		from := 0 // where the search for the next entity's write starts
		for i := range c.changes {
			ch := &c.changes[i]
			nest[i] = -1
			if !inFeed(ch.kind) || len(ch.key) == 0 || ch.new == nil {
				continue
			}
			p, ok := findWrite(c.writes, ch.key, from)
			if p >= 0 {
				from = p + 1
			}
			if ok {
				nest[i] = int32(p)
			}
		}
	case f.refs && stampedAt(c.changes, now):
		v = feedRecordV4
	}
	buf = appendFeedRecord(buf, v, now, c.changes, n, nest, ats)
	if f.compress && v != feedRecordV2 {
		buf = compressFeedRecord(c, buf, 17)
	}
	c.set(buf[:9:9], buf[17:])
	for i, p := range nest {
		if p >= 0 {
			nestIn(c.writes, int(p), int(ats[i]))
		}
	}
	if f.refs {
		if err := f.keepImages(c, first); err != nil {
			return err
		}
	}
	if !alone || pruning {
		c.set(metaFeedRev, buf[9:17:17])
	}
	if pruning {
		if err := f.prune(c, next-1, now); err != nil {
			return err
		}
	}
	if alone {
		f.pending = next
		c.afterCommit(f.advance)
	} else {
		c.afterCommit(f.wake)
	}
	return nil
}

// prune adds to c the deletion of the feed records that retention lets
// go, the last revision being last and the time now.
func (f *feedLog) prune(c *commitContext, last Revision, now int64) error {
	// By count: a record holds at most maxFeedRecordChanges changes, so
	// the records that start below the cut minus that hold none of the
	// KeepChanges latest changes.
	var cut Revision
	if keep := Revision(f.opts.KeepChanges) + maxFeedRecordChanges; last > keep {
		cut = last - keep
	}
	if f.opts.KeepFor > 0 {
		old := now - int64(f.opts.KeepFor/100) // ticks are 100 ns
		it, err := storage.NewIterContext(c.ctx, f.a.eng, feedBounds)
		if err != nil {
			return err
		}
		for it.First(); it.Valid(); it.Next() {
			first, ticks, ok := feedRecordHead(it.Key(), it.Value())
			if !ok || ticks >= old {
				break
			}
			cut = max(cut, first+1) // this record goes
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	var from, markFrom Revision // where the records and markers begin
	alone := f.alone
	if alone {
		from, markFrom = f.pruned, f.markFrom
	}
	if cut <= max(from, 1) {
		return nil
	}
	c.delRange(keyenc.FeedKey(uint64(from)), keyenc.FeedKey(uint64(cut)))
	if f.refs {
		// Only a feed whose records name their entities keeps
		// images: elsewhere (memory) the iterator would be for
		// nothing, and on the memory engine it would make the next
		// commits copy the tree paths they change.
		if err := f.pruneImages(c, min(markFrom, cut), cut); err != nil {
			return err
		}
	}
	if alone {
		c.afterCommit(func() { f.pruned, f.markFrom = cut, max(f.markFrom, cut) })
	}
	return nil
}

// feedCopy appends to ws the writes that make the feed's records and
// images those of snap: the deletion of the feed's, then a copy of each
// of snap's.
func feedCopy(ws []write, snap storage.Snapshot) ([]write, error) {
	ws = append(ws, write{key: feedDataBounds.LowerBound, del: true, end: feedDataBounds.UpperBound})
	it, err := snap.NewIter(feedDataBounds)
	if err != nil {
		return nil, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		ws = append(ws, write{key: bytes.Clone(it.Key()), value: bytes.Clone(it.Value())})
	}
	return ws, it.Close()
}

// feedBounds are the bounds of the feed's records.
var feedBounds = &storage.IterOptions{
	LowerBound: []byte{keyenc.PrefixFeed},
	UpperBound: []byte{keyenc.PrefixFeed + 1},
}

// feedDataBounds are the bounds of the feed's records and images
// (feedimage.go): what a Restore keeps of the account's data.
var feedDataBounds = &storage.IterOptions{
	LowerBound: []byte{keyenc.PrefixFeed},
	UpperBound: []byte{keyenc.PrefixFeedImage + 1},
}

// inFeedData reports whether key is one of the feed's records or images.
func inFeedData(key []byte) bool {
	return len(key) > 0 && key[0] >= keyenc.PrefixFeed && key[0] <= keyenc.PrefixFeedImage
}

// appendFeedRecord appends the feed record, of version v, of the first n
// changes that go in the feed, made at ticks now. nest, if not nil (of
// version 2), has an entry for each of changes: where it is not -1, the
// change's entity key and record are left out, to be nested (see write),
// and ats gets where the record (from its version byte) takes them.
func appendFeedRecord(dst []byte, v byte, now int64, changes []change, n int, nest, ats []int32) []byte {
	start := len(dst)
	dst = append(dst, v)
	dst = binary.BigEndian.AppendUint64(dst, uint64(now))
	dst = binary.AppendUvarint(dst, uint64(n))
	for i := range changes {
		ch := &changes[i]
		if !inFeed(ch.kind) {
			continue
		}
		if ch.expired {
			dst = appendFeedChange(dst, v, changeExpired, ch.table, ch.key, nil, false)
		}
		hole := nest != nil && nest[i] >= 0
		dst = appendFeedChange(dst, v, ch.kind, ch.table, ch.key, ch.new, hole)
		if hole {
			ats[i] = int32(len(dst) - start)
		}
	}
	return dst
}

// appendFeedChange appends one change of a feed record of version v: of
// the entity under engine key key (nil for a table's change), rec after
// it. With hole (version 2), the key and the record are left out.
func appendFeedChange(dst []byte, v byte, kind changeKind, table string, key, rec []byte, hole bool) []byte {
	dst = append(dst, byte(kind))
	dst = appendString(dst, table)
	switch v {
	case feedRecordV1:
		var keys []byte
		if len(key) > keyenc.TablePrefixLen {
			keys = key[keyenc.TablePrefixLen:]
		}
		dst = binary.AppendUvarint(dst, uint64(len(keys)))
		dst = append(dst, keys...)
		dst = binary.AppendUvarint(dst, uint64(len(rec)))
		return append(dst, rec...)
	case feedRecordV4:
		dst = binary.AppendUvarint(dst, uint64(len(key)))
		return append(dst, key...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = binary.AppendUvarint(dst, uint64(len(rec)))
	if hole {
		return dst
	}
	dst = append(dst, key...)
	return append(dst, rec...)
}

// readFeedChange reads the keys and record of a change of a feed record
// of version v, from b after the kind and table name, and the entity's
// engine key where the record holds it (versions 2 and 4); it returns the
// rest of b.
func readFeedChange(v byte, b []byte) (keys, key, rec, rest []byte, ok bool) {
	switch v {
	case feedRecordV1:
		l, w := uvarint(b)
		if w <= 0 || l > uint64(len(b)-w) {
			return nil, nil, nil, nil, false
		}
		keys, b = b[w:w+int(l)], b[w+int(l):]
		l, w = uvarint(b)
		if w <= 0 || l > uint64(len(b)-w) {
			return nil, nil, nil, nil, false
		}
		return keys, nil, b[w : w+int(l)], b[w+int(l):], true
	case feedRecordV4:
		k, w := uvarint(b)
		if w <= 0 || k > uint64(len(b)-w) {
			return nil, nil, nil, nil, false
		}
		key, b = b[w:w+int(k)], b[w+int(k):]
	default:
		k, w := uvarint(b)
		if w <= 0 {
			return nil, nil, nil, nil, false
		}
		b = b[w:]
		r, w := uvarint(b)
		if w <= 0 || k > uint64(len(b)-w) || r > uint64(len(b)-w)-k {
			return nil, nil, nil, nil, false
		}
		b = b[w:]
		key, rec, b = b[:k], b[k:k+r], b[k+r:]
	}
	switch {
	case len(key) == 0:
		key = nil
	case len(key) <= keyenc.TablePrefixLen || key[0] != keyenc.PrefixEntity:
		return nil, nil, nil, nil, false
	default:
		keys = key[keyenc.TablePrefixLen:]
	}
	return keys, key, rec, b, true
}

var errCorruptFeed = errors.New("localtable: corrupt feed record")

// feedRecordHead returns the first revision and the time of a feed
// record.
func feedRecordHead(key, rec []byte) (first Revision, ticks int64, ok bool) {
	if len(key) != 9 || len(rec) < 9 || rec[0] < feedRecordV1 || rec[0] > feedRecordV5 {
		return 0, 0, false
	}
	return Revision(binary.BigEndian.Uint64(key[1:])), int64(binary.BigEndian.Uint64(rec[1:9])), true
}

// feedChange is one change of a feed record as walkFeedRecord reads it:
// views of the record's bytes (or of its decompressed changes).
type feedChange struct {
	rev   Revision
	last  bool // the record's last change
	kind  changeKind
	table string
	// keys are the entity's keys as its engine key encodes them after
	// its table's prefix; key the whole engine key, where the record
	// holds it (versions 2 and 4); rec the entity's record, where the
	// record holds it (versions 1 to 3, not after a delete).
	keys, key, rec []byte
}

// walkFeedRecord calls fn with each change of the feed record under key,
// in order, until fn returns false; it reports whether fn always returned
// true. Every change is checked, whatever fn says of those before.
func walkFeedRecord(key, rec []byte, fn func(c *feedChange) bool) (bool, error) {
	first, _, ok := feedRecordHead(key, rec)
	if !ok {
		return false, errCorruptFeed
	}
	b := rec[9:]
	n, w := uvarint(b)
	if w <= 0 || n == 0 || n > maxFeedRecordChanges {
		return false, errCorruptFeed
	}
	b = b[w:]
	v := rec[0]
	if v == feedRecordV3 || v == feedRecordV5 {
		// A fresh buffer: what the changes read from it is copied
		// (decodeSelected, keyenc.DecodePair), but a buffer reused
		// across records would not be worth the risk.
		l, err := snappy.DecodedLen(b)
		if err != nil || l > maxFeedRecordBody {
			return false, errCorruptFeed
		}
		if b, err = snappy.Decode(make([]byte, l), b); err != nil {
			return false, errCorruptFeed
		}
		v = uncompressed(v)
	}
	more := true
	for i := range n {
		if len(b) < 1 {
			return false, errCorruptFeed
		}
		c := feedChange{rev: first + Revision(i), last: i == n-1, kind: changeKind(b[0])}
		if !inFeed(c.kind) {
			return false, errCorruptFeed
		}
		var ok bool
		if c.table, b, ok = readString(b[1:]); !ok {
			return false, errCorruptFeed
		}
		if c.keys, c.key, c.rec, b, ok = readFeedChange(v, b); !ok {
			return false, errCorruptFeed
		}
		if more {
			more = fn(&c)
		}
	}
	if len(b) != 0 {
		return false, errCorruptFeed
	}
	return more, nil
}

// decodeFeedRecord calls fn with each change after revision after of the
// feed record under key (the record's changes are numbered from its first
// revision), until fn returns false; it reports whether fn always returned
// true. The changes up to after are checked but not decoded. An entity
// change of a record of version 4, which names its entity, has its keys
// alone unless look is set, which finds the entity.
func decodeFeedRecord(key, rec []byte, after Revision, fn func(c *Change) bool) (bool, error) {
	return decodeFeed(nil, key, rec, after, fn)
}

// decodeFeed is decodeFeedRecord with the entities of a record of version
// 4 found by look (nil: not found).
func decodeFeed(look *feedLookup, key, rec []byte, after Revision, fn func(c *Change) bool) (bool, error) {
	commit, ticks, _ := feedRecordHead(key, rec)
	var err error
	more, werr := walkFeedRecord(key, rec, func(fc *feedChange) bool {
		var pk, rk string
		if len(fc.keys) > 0 {
			if pk, rk, err = keyenc.DecodePair(fc.keys); err != nil {
				err = errCorruptFeed
				return false
			}
		}
		if fc.rev <= after {
			return true
		}
		c := Change{Revision: fc.rev, Commit: commit, Last: fc.last, Kind: ChangeKind(fc.kind), Table: fc.table}
		if c.Kind.IsEntity() {
			c.Entity = Entity{PartitionKey: pk, RowKey: rk}
			entity := fc.rec
			if look != nil && namesEntities(rec) && fc.kind != changeDelete && fc.kind != changeExpired {
				var cl io.Closer
				if entity, cl, err = look.entity(fc.key, ticks, fc.rev); err != nil {
					return false
				}
				defer cl.Close()
			}
			if len(entity) > 0 {
				var at int64
				var props Properties
				if at, props, err = decodeSelected(entity, selection{}); err != nil {
					return false
				}
				c.Entity = makeEntity(pk, rk, at, props)
			}
		}
		return fn(&c)
	})
	if werr != nil {
		return false, werr
	}
	if err != nil {
		return false, err
	}
	return more, nil
}

// next returns the feed's next revision.
func (f *feedLog) next(ctx context.Context) (Revision, error) {
	if f.a.strategy.alone() {
		return Revision(f.rev.Load()), nil
	}
	return f.stored(ctx)
}

// stored returns the next revision as metaFeedRev holds it (1 if absent).
func (f *feedLog) stored(ctx context.Context) (Revision, error) {
	v, c, err := storage.GetContext(ctx, f.a.eng, metaFeedRev)
	if errors.Is(err, storage.ErrNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	defer c.Close()
	n, ok := decodeTicks(v)
	if !ok {
		return 0, fmt.Errorf("localtable: corrupt metadata %q", metaFeedRev)
	}
	return Revision(n), nil
}

// read calls fn with each change of the feed after revision after, in
// order, until fn returns false (read then returns -1) or the changes
// stored run out (it returns how many it handed over). A revision the
// feed no longer keeps is a *FeedCompactedError.
func (f *feedLog) read(ctx context.Context, after Revision, fn func(c *Change) bool) (int, error) {
	a := f.a
	if err := a.enter(ctx); err != nil {
		return 0, err
	}
	defer a.exit()
	it, err := storage.NewIterContext(ctx, a.eng, feedBounds)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	if after > 0 && it.First() {
		if oldest, _, ok := feedRecordHead(it.Key(), it.Value()); ok && oldest > after+1 {
			return 0, &FeedCompactedError{After: after, Oldest: oldest}
		}
	}
	// The change after `after` is in the record that starts at it, or in
	// the one before.
	if it.SeekGE(keyenc.FeedKey(uint64(after + 1))) {
		if first, _, ok := feedRecordHead(it.Key(), it.Value()); ok && first > after+1 && !it.Prev() {
			it.First()
		}
	} else {
		it.Last()
	}
	var look *feedLookup
	if f.refs {
		look = &feedLookup{ctx: ctx, r: a.eng}
		defer look.close()
	}
	n := 0
	for ; it.Valid(); it.Next() {
		more, err := decodeFeed(look, it.Key(), it.Value(), after, func(c *Change) bool {
			n++
			return fn(c)
		})
		var gone *imageGoneError
		if errors.As(err, &gone) {
			return 0, f.gone(ctx, gone)
		}
		if err != nil {
			return 0, fmt.Errorf("%w (key %q)", err, it.Key())
		}
		if !more {
			return -1, nil
		}
	}
	return n, it.Error()
}

// wait returns a channel that the next commit to the feed closes.
func (f *feedLog) wait() <-chan struct{} { return f.b.wait() }

// waitFor waits until wake is closed, ctx ends (its error), the account
// closes (ErrClosed), or, on a shared engine that cannot tell of other
// processes' commits at the moment, it is time to look for them. Other
// processes' commits wake the watchers when it can (strategy.follow).
func (f *feedLog) waitFor(ctx context.Context, wake <-chan struct{}) error {
	var poll <-chan time.Time
	if d := f.a.strategy.follow(metaFeedRev, f.wake, f.closed); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		poll = t.C
	}
	select {
	case <-wake:
		return nil
	case <-poll:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-f.closed:
		return ErrClosed
	}
}

// shut ends the waits of the watchers: the account is closing.
func (f *feedLog) shut() { f.once.Do(func() { close(f.closed) }) }
