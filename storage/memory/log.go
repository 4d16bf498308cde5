package memory

import (
	"bytes"
	"io"
	"slices"

	"github.com/localtable/localtable/storage"
)

// Logs (Options.Logs). The keys under a log prefix are kept, while they
// follow the pattern of a log, out of the B-tree, as immutable items in
// key order in chunks of logChunkLen() (logItems). A log is multi-version
// for free: a view holds a copy of the writer's logItems (its chunks'
// slice header, its start and its length); an append writes past the end
// of every copy handed out, into the last chunk or a new one; a deletion
// at the front only moves the writer's start (and drops the chunks before
// it from the writer's list); a deletion at the back marks the writer's
// last chunk and its list as shared (cow), so that the next append copies
// them instead of writing over items that views still see. So the writer
// writes a chunk only at the position of its own end, which only grows
// while it uses that chunk, and every view's end is at or below it.
//
// Chunks, not one array: an array would be copied whole each time it
// grows (and, as a feed's retention deletes its front while its back
// grows, every time it fills), and each new array is fresh memory, whose
// pages the kernel maps at their first touch. A chunk is an allocation of
// the runtime's size classes, which the collector recycles once pruning
// and views let go of it.
//
// While a log holds items, the tree holds no key under its prefix; once
// a write breaks the pattern (fallback), the log's items move into the
// tree and the prefix is an ordinary one from then on. Readers need not
// know which: a view's keys are its tree's merged with its logs'.

// logDef is one log prefix and the end of its range: [prefix, end),
// with a nil end for a prefix of 0xff bytes only (unbounded).
type logDef struct {
	prefix, end []byte
}

// newLogDefs returns the sorted log definitions of prefixes, without
// those that another covers.
func newLogDefs(prefixes [][]byte) []logDef {
	ps := make([][]byte, 0, len(prefixes))
	for _, p := range prefixes {
		ps = append(ps, bytes.Clone(p))
	}
	slices.SortFunc(ps, bytes.Compare)
	var defs []logDef
	for _, p := range ps {
		if n := len(defs); n > 0 && bytes.HasPrefix(p, defs[n-1].prefix) {
			continue // covered by the previous one (or a duplicate)
		}
		if p == nil {
			p = []byte{}
		}
		defs = append(defs, logDef{prefix: p, end: prefixEnd(p)})
	}
	return defs
}

// prefixEnd returns the smallest key above every key that begins with
// p, or nil if there is none (p is empty or all 0xff).
func prefixEnd(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			end := bytes.Clone(p[:i+1])
			end[i]++
			return end
		}
	}
	return nil
}

// logChunkShift is the log of how many items a chunk of a log holds
// (logChunkLen): 1,024, 16 KiB of them. A variable for the tests, which
// make chunks small to cross their edges.
var logChunkShift = 10

// logChunkLen is how many items a chunk of a log holds.
func logChunkLen() int { return 1 << logChunkShift }

// logItems is a log's items in key order: n of them from position off of
// chunks (item i at chunks[(off+i)/logChunkLen()][(off+i)%logChunkLen()]).
// A copy is a view of the items as they stand (see Logs above).
type logItems struct {
	chunks [][]item
	off, n int
}

// at returns item i.
func (l *logItems) at(i int) item {
	p := l.off + i
	return l.chunks[p>>logChunkShift][p&(1<<logChunkShift-1)]
}

// last returns the last item; l must hold one.
func (l *logItems) last() item { return l.at(l.n - 1) }

// search returns the index of the first item whose key is at or above
// key, and whether it is key.
func (l *logItems) search(key []byte) (int, bool) {
	lo, hi := 0, l.n
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if bytes.Compare(l.at(h).key(), key) < 0 {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, lo < l.n && bytes.Equal(l.at(lo).key(), key)
}

// logState is the writer's state of one log.
type logState struct {
	items logItems // the log's items, in key order
	// cow: the writer's last chunk and its list of chunks may be a
	// view's beyond the writer's end (after a deletion at the back, or
	// a Restore): the next append copies them first.
	cow bool
	off bool // fallen back: the prefix's keys are in the tree
	// last holds the key of the last item when lastOK (set by push, for
	// a key of at most 16 bytes: a feed record's has 9): each append
	// compares its key with the last, whose own bytes would likely be a
	// cache miss.
	last    [16]byte
	lastLen uint8
	lastOK  bool
}

// lastKey returns the key of the last item; l must hold one.
func (l *logState) lastKey() []byte {
	if l.lastOK {
		return l.last[:l.lastLen]
	}
	return l.items.last().key()
}

// push appends it to the log's items.
func (l *logState) push(it item) {
	items := &l.items
	p := items.off + items.n
	c := p >> logChunkShift
	switch {
	case c == len(items.chunks):
		if l.cow {
			items.chunks = slices.Clip(items.chunks)
		}
		items.chunks = append(items.chunks, make([]item, logChunkLen()))
	case l.cow:
		items.chunks = slices.Clone(items.chunks)
		items.chunks[c] = slices.Clone(items.chunks[c])
	}
	l.cow = false
	items.chunks[c][p&(1<<logChunkShift-1)] = it
	items.n++
	k := it.key()
	l.lastOK = len(k) <= len(l.last)
	if l.lastOK {
		l.lastLen = uint8(copy(l.last[:], k))
	}
}

// dropFront deletes the first k items (fewer than all).
func (l *logState) dropFront(k int) {
	items := &l.items
	items.off += k
	items.n -= k
	if d := items.off >> logChunkShift; d > 0 {
		items.chunks = items.chunks[d:]
		items.off -= d << logChunkShift
	}
}

// keep deletes every item from index i on (not all).
func (l *logState) keep(i int) {
	items := &l.items
	items.n = i
	items.chunks = items.chunks[:(items.off+i+logChunkLen()-1)>>logChunkShift]
	l.cow, l.lastOK = true, false
}

// logsView is a view's logs: its items of each of defs (never modified).
type logsView struct {
	defs  []logDef
	items []logItems
}

// logsView returns the writer's logs as they stand, for a view. mu must
// be held.
func (m *memEngine) logsView() logsView {
	if len(m.defs) == 0 {
		return logsView{}
	}
	items := make([]logItems, len(m.wlogs))
	for j := range m.wlogs {
		items[j] = m.wlogs[j].items
	}
	return logsView{defs: m.defs, items: items}
}

// logOf returns the index of the log whose prefix key has, or -1.
func (m *memEngine) logOf(key []byte) int {
	if len(key) > 0 && m.firsts[key[0]>>6]&(1<<(key[0]&63)) == 0 {
		return -1 // most keys: no log's prefix begins with its first byte
	}
	for j := range m.defs {
		if bytes.HasPrefix(key, m.defs[j].prefix) {
			return j
		}
	}
	return -1
}

// inLog reports whether [start, end) lies within the range of a log that
// has not fallen back, so that the tree holds none of its keys. mu must
// be held.
func (m *memEngine) inLog(start, end []byte) bool {
	for j := range m.defs {
		d := &m.defs[j]
		if !m.wlogs[j].off && bytes.Compare(start, d.prefix) >= 0 && (d.end == nil || bytes.Compare(end, d.end) <= 0) {
			return true
		}
	}
	return false
}

// logApply applies op to the writer's logs and reports whether that is
// all of it: false means the tree must apply it too. A write that breaks
// a log's pattern makes the log fall back first. mu must be held.
func (m *memEngine) logApply(op *memOp) bool {
	switch op.kind {
	case opSet:
		j := m.logOf(op.it.key())
		if j < 0 || m.wlogs[j].off {
			return false
		}
		l := &m.wlogs[j]
		if n := l.items.n; n == 0 || bytes.Compare(op.it.key(), l.lastKey()) > 0 {
			l.push(op.it)
			return true
		}
		m.fallback(j)
		return false
	case opDelete:
		j := m.logOf(op.it.key())
		if j < 0 || m.wlogs[j].off {
			return false
		}
		l := &m.wlogs[j]
		i, found := l.items.search(op.it.key())
		switch {
		case !found:
		case l.items.n == 1:
			*l = logState{}
		case i == 0:
			l.dropFront(1)
		case i == l.items.n-1:
			l.keep(i)
		default:
			m.fallback(j)
			return false
		}
		return true
	case opDeleteRange:
		start, end := op.it.key(), op.end.key()
		for j := range m.wlogs {
			l := &m.wlogs[j]
			if l.off || l.items.n == 0 {
				continue
			}
			i, _ := l.items.search(start)
			k, _ := l.items.search(end)
			switch {
			case i >= k:
			case i == 0 && k == l.items.n:
				*l = logState{}
			case i == 0:
				l.dropFront(k)
			case k == l.items.n:
				l.keep(i)
			default:
				m.fallback(j)
			}
		}
		return m.inLog(start, end)
	}
	return false
}

// fallback moves log j's items into the tree: its prefix is an ordinary
// one from now on. Views keep the log's items they hold.
func (m *memEngine) fallback(j int) {
	l := &m.wlogs[j]
	for i := range l.items.n {
		m.w.Set(l.items.at(i))
	}
	*l = logState{off: true}
}

// logGet reads key in a log's items, as treeGet does in a tree.
func logGet(l *logItems, key []byte) ([]byte, io.Closer, error) {
	i, found := l.search(key)
	if !found {
		return nil, nil, storage.ErrNotFound
	}
	return l.at(i).value(), storage.NopCloser, nil
}

// get reads key in v: in the log whose prefix it has if that log holds
// items, and otherwise in the tree.
func (v *view) get(key []byte) ([]byte, io.Closer, error) {
	for j := range v.logs.defs {
		if v.logs.items[j].n > 0 && bytes.HasPrefix(key, v.logs.defs[j].prefix) {
			return logGet(&v.logs.items[j], key)
		}
	}
	return treeGet(v.t, key)
}

// newIter returns an iterator over v: the tree's alone when no log with
// items meets the bounds, the tree's merged with those logs' otherwise.
func (v *view) newIter(opts *storage.IterOptions) storage.Iterator {
	var lower, upper []byte
	if opts != nil {
		lower, upper = opts.LowerBound, opts.UpperBound
	}
	var lg []logItems
	for _, e := range v.logs.items {
		if e.n == 0 ||
			upper != nil && bytes.Compare(e.at(0).key(), upper) >= 0 ||
			lower != nil && bytes.Compare(e.last().key(), lower) < 0 {
			continue
		}
		lg = append(lg, e)
	}
	if lg == nil {
		return newMemIter(v.t, opts)
	}
	return &mergeIter{iterBase: newIterBase(v.t, opts), lg: lg}
}

// mergeIter is the storage.Iterator of a view whose logs hold items
// within its bounds: it merges two sources, the tree's read-only
// iterator and the logs' items (one sorted sequence: the logs' ranges
// are disjoint and in order), which never hold the same key. Both
// sources are unbounded; the iterator enforces the bounds, as memIter
// does.
//
// Moving forward, the source of the current key (inLog) stands at it
// and the other at its first key above it, or is exhausted; moving
// backward, the other stands at its last key below it. A change of
// direction moves the other source across the current key first.
type mergeIter struct {
	iterBase      // it is the tree's iterator
	tOK      bool // it stands at a key

	lg     []logItems
	lj, li int  // the logs' position: item li of lg[lj]
	lOK    bool // the logs' position is a key

	fwd   bool // the sources stand as after a forward move
	inLog bool // cur is the logs'
}

func (i *mergeIter) lItem() item { return i.lg[i.lj].at(i.li) }

func (i *mergeIter) lFirst() { i.lj, i.li, i.lOK = 0, 0, true }

func (i *mergeIter) lLast() {
	i.lj = len(i.lg) - 1
	i.li, i.lOK = i.lg[i.lj].n-1, true
}

// lSeekGE moves the logs' position to their first key at or above key.
func (i *mergeIter) lSeekGE(key []byte) {
	for j := range i.lg {
		if e := &i.lg[j]; bytes.Compare(e.last().key(), key) >= 0 {
			i.lj = j
			i.li, _ = e.search(key)
			i.lOK = true
			return
		}
	}
	i.lOK = false
}

// lSeekLT moves the logs' position to their last key below key.
func (i *mergeIter) lSeekLT(key []byte) {
	for j := len(i.lg) - 1; j >= 0; j-- {
		if e := &i.lg[j]; bytes.Compare(e.at(0).key(), key) < 0 {
			k, _ := e.search(key)
			i.lj, i.li, i.lOK = j, k-1, true
			return
		}
	}
	i.lOK = false
}

func (i *mergeIter) lNext() {
	if i.li++; i.li == i.lg[i.lj].n {
		i.lj, i.li = i.lj+1, 0
		i.lOK = i.lj < len(i.lg)
	}
}

func (i *mergeIter) lPrev() {
	if i.li--; i.li < 0 {
		if i.lj--; i.lj < 0 {
			i.lOK = false
			return
		}
		i.li = i.lg[i.lj].n - 1
	}
}

// tSeekLT moves the tree's iterator to its last key below key.
func (i *mergeIter) tSeekLT(key []byte) {
	if i.it.Seek(probe(key)) {
		i.tOK = i.it.Prev()
	} else {
		i.tOK = i.it.Last()
	}
}

// pickFwd makes the lower of the sources' keys the current one, after a
// forward move.
func (i *mergeIter) pickFwd() bool {
	i.fwd = true
	switch {
	case i.lOK && (!i.tOK || bytes.Compare(i.lItem().key(), i.it.Item().key()) < 0):
		i.cur, i.inLog = i.lItem(), true
	case i.tOK:
		i.cur, i.inLog = i.it.Item(), false
	default:
		return i.check(false, +1)
	}
	return i.check(true, +1)
}

// pickBack makes the higher of the sources' keys the current one, after
// a backward move.
func (i *mergeIter) pickBack() bool {
	i.fwd = false
	switch {
	case i.lOK && (!i.tOK || bytes.Compare(i.lItem().key(), i.it.Item().key()) > 0):
		i.cur, i.inLog = i.lItem(), true
	case i.tOK:
		i.cur, i.inLog = i.it.Item(), false
	default:
		return i.check(false, -1)
	}
	return i.check(true, -1)
}

func (i *mergeIter) seekGE(key []byte) bool {
	i.tOK = i.it.SeekHint(probe(key), &i.hint)
	i.lSeekGE(key)
	return i.pickFwd()
}

// First implements storage.Iterator.
func (i *mergeIter) First() bool {
	if i.pos == posClosed {
		return false
	}
	if i.lower != nil {
		return i.seekGE(i.lower)
	}
	i.tOK = i.it.First()
	i.lFirst()
	return i.pickFwd()
}

// Last implements storage.Iterator.
func (i *mergeIter) Last() bool {
	if i.pos == posClosed {
		return false
	}
	if i.upper != nil {
		i.tSeekLT(i.upper)
		i.lSeekLT(i.upper)
	} else {
		i.tOK = i.it.Last()
		i.lLast()
	}
	return i.pickBack()
}

// SeekGE implements storage.Iterator.
func (i *mergeIter) SeekGE(key []byte) bool {
	if i.pos == posClosed {
		return false
	}
	key, ok := i.clamp(key)
	if !ok {
		return i.check(false, +1)
	}
	return i.seekGE(key)
}

// Next implements storage.Iterator. On an unpositioned iterator, or one
// exhausted backward, it behaves like First.
func (i *mergeIter) Next() bool {
	switch i.pos {
	case posValid:
		if !i.fwd {
			// The other source stands below cur: move it above.
			if i.inLog {
				i.tOK = i.it.Seek(probe(i.cur.key()))
			} else {
				i.lSeekGE(i.cur.key())
			}
		}
		if i.inLog {
			i.lNext()
		} else {
			i.tOK = i.it.Next()
		}
		return i.pickFwd()
	case posUnset, posBefore:
		return i.First()
	default:
		return false
	}
}

// Prev implements storage.Iterator. On an unpositioned iterator, or one
// exhausted forward, it behaves like Last.
func (i *mergeIter) Prev() bool {
	switch i.pos {
	case posValid:
		if i.fwd {
			// The other source stands above cur: move it below.
			if i.inLog {
				i.tSeekLT(i.cur.key())
			} else {
				i.lSeekLT(i.cur.key())
			}
		}
		if i.inLog {
			i.lPrev()
		} else {
			i.tOK = i.it.Prev()
		}
		return i.pickBack()
	case posUnset, posAfter:
		return i.Last()
	default:
		return false
	}
}
