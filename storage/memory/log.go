package memory

import (
	"bytes"
	"io"
	"slices"

	"github.com/localtable/localtable/storage"
)

// Logs (Options.Logs). The keys under a log prefix are kept, while they
// follow the pattern of a log, in a slice of immutable items in key
// order, out of the B-tree. A slice is multi-version for free: a view
// holds a slice header; an append writes past the end of every header
// handed out (or into a new array, when the capacity runs out); a
// deletion at the front only moves the writer's start; a deletion at the
// back clips the writer's capacity, so that the next append makes a new
// array instead of writing over items that views still see. So the
// writer writes an array only at the index of its own end, which only
// grows while it uses that array, and every view's end is at or below
// it.
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

// logState is the writer's state of one log.
type logState struct {
	ents []item // the log's items, in key order
	off  bool   // fallen back: the prefix's keys are in the tree
}

// logsView is a view's logs: its items of each of defs (a slice each,
// never modified).
type logsView struct {
	defs []logDef
	ents [][]item
}

// logsView returns the writer's logs as they stand, for a view. mu must
// be held.
func (m *memEngine) logsView() logsView {
	if len(m.defs) == 0 {
		return logsView{}
	}
	ents := make([][]item, len(m.wlogs))
	for j := range m.wlogs {
		ents[j] = m.wlogs[j].ents
	}
	return logsView{defs: m.defs, ents: ents}
}

// logOf returns the index of the log whose prefix key has, or -1.
func (m *memEngine) logOf(key []byte) int {
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
		if n := len(l.ents); n == 0 || bytes.Compare(op.it.key(), l.ents[n-1].key()) > 0 {
			if n == cap(l.ents) {
				l.ents = growLog(l.ents)
			}
			l.ents = append(l.ents, op.it)
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
		i, found := logSearch(l.ents, op.it.key())
		switch {
		case !found:
		case len(l.ents) == 1:
			l.ents = nil
		case i == 0:
			l.ents = l.ents[1:]
		case i == len(l.ents)-1:
			l.ents = l.ents[:i:i]
		default:
			m.fallback(j)
			return false
		}
		return true
	case opDeleteRange:
		start, end := op.it.key(), op.end.key()
		for j := range m.wlogs {
			l := &m.wlogs[j]
			if l.off || len(l.ents) == 0 {
				continue
			}
			i, _ := logSearch(l.ents, start)
			k, _ := logSearch(l.ents, end)
			switch {
			case i >= k:
			case i == 0 && k == len(l.ents):
				l.ents = nil
			case i == 0:
				l.ents = l.ents[k:]
			case k == len(l.ents):
				l.ents = l.ents[:i:i]
			default:
				m.fallback(j)
			}
		}
		return m.inLog(start, end)
	}
	return false
}

// growLog returns ents in a new array with room for as many items again.
// A log's front is deleted as its back grows (a feed's retention), which
// takes the room away from the array's end, so that append's growth by a
// quarter, once ents is large, would copy the whole log again every
// quarter of its length: doubling copies it once per length.
func growLog(ents []item) []item {
	grown := make([]item, len(ents), 2*len(ents)+64)
	copy(grown, ents)
	return grown
}

// fallback moves log j's items into the tree: its prefix is an ordinary
// one from now on. Views keep the log's items they hold.
func (m *memEngine) fallback(j int) {
	l := &m.wlogs[j]
	for _, it := range l.ents {
		m.w.Set(it)
	}
	l.ents, l.off = nil, true
}

// logSearch returns the index of the first item of ents whose key is at
// or above key, and whether it is key.
func logSearch(ents []item, key []byte) (int, bool) {
	return slices.BinarySearchFunc(ents, key, func(it item, k []byte) int { return bytes.Compare(it.key(), k) })
}

// logGet reads key in a log's items, as treeGet does in a tree.
func logGet(ents []item, key []byte) ([]byte, io.Closer, error) {
	i, found := logSearch(ents, key)
	if !found {
		return nil, nil, storage.ErrNotFound
	}
	return ents[i].value(), storage.NopCloser, nil
}

// get reads key in v: in the log whose prefix it has if that log holds
// items, and otherwise in the tree.
func (v *view) get(key []byte) ([]byte, io.Closer, error) {
	for j := range v.logs.defs {
		if len(v.logs.ents[j]) > 0 && bytes.HasPrefix(key, v.logs.defs[j].prefix) {
			return logGet(v.logs.ents[j], key)
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
	var lg [][]item
	for _, e := range v.logs.ents {
		if len(e) == 0 ||
			upper != nil && bytes.Compare(e[0].key(), upper) >= 0 ||
			lower != nil && bytes.Compare(e[len(e)-1].key(), lower) < 0 {
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

	lg     [][]item
	lj, li int  // the logs' position: lg[lj][li]
	lOK    bool // the logs' position is a key

	fwd   bool // the sources stand as after a forward move
	inLog bool // cur is the logs'
}

func (i *mergeIter) lItem() item { return i.lg[i.lj][i.li] }

func (i *mergeIter) lFirst() { i.lj, i.li, i.lOK = 0, 0, true }

func (i *mergeIter) lLast() {
	i.lj = len(i.lg) - 1
	i.li, i.lOK = len(i.lg[i.lj])-1, true
}

// lSeekGE moves the logs' position to their first key at or above key.
func (i *mergeIter) lSeekGE(key []byte) {
	for j, e := range i.lg {
		if bytes.Compare(e[len(e)-1].key(), key) >= 0 {
			i.lj = j
			i.li, _ = logSearch(e, key)
			i.lOK = true
			return
		}
	}
	i.lOK = false
}

// lSeekLT moves the logs' position to their last key below key.
func (i *mergeIter) lSeekLT(key []byte) {
	for j := len(i.lg) - 1; j >= 0; j-- {
		if e := i.lg[j]; bytes.Compare(e[0].key(), key) < 0 {
			k, _ := logSearch(e, key)
			i.lj, i.li, i.lOK = j, k-1, true
			return
		}
	}
	i.lOK = false
}

func (i *mergeIter) lNext() {
	if i.li++; i.li == len(i.lg[i.lj]) {
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
		i.li = len(i.lg[i.lj]) - 1
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
