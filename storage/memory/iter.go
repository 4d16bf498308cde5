package memory

import (
	"bytes"

	"github.com/tidwall/btree"

	"github.com/localtable/localtable/storage"
)

// iterPos is where an iterator stands relative to its bounds.
type iterPos int8

const (
	posUnset  iterPos = iota // not yet positioned
	posValid                 // at a key within bounds
	posBefore                // exhausted backward: before the first key
	posAfter                 // exhausted forward: past the last key
	posClosed                // closed
)

// memIter is the storage.Iterator of the in-memory engine. It walks a published
// (read-only) tree with the B-tree's read-only iterator, which only reads
// shared nodes, and enforces the bounds itself. Whenever it leaves the
// bounds or the tree, it forgets the underlying position and re-seeks on
// the next call, so direction changes at the edges are always correct.
type memIter struct {
	iterBase
	// end is the tree's first item at or past the upper bound, if endOK
	// (looked for once endKnown): a forward move checks that it has not
	// reached it by the item, not by comparing its key with the bound, so
	// that a scan does not read the keys it visits. The tree is
	// published, so never changes.
	end             item
	endKnown, endOK bool
}

// iterBase is what the engine's iterators (memIter, mergeIter) share:
// the tree's read-only iterator, the bounds, where they stand and the
// current item.
type iterBase struct {
	tree         *tree
	it           btree.IterG[item]
	lower, upper []byte // nil means unbounded
	pos          iterPos
	cur          item
	// hint is the path of the last SeekGE: a seek to a key near it (as a
	// read of sorted keys makes, seeking forward from one to the next)
	// compares a key or two per level instead of searching each node.
	hint btree.PathHint
}

func newIterBase(t *tree, opts *storage.IterOptions) iterBase {
	b := iterBase{tree: t, it: t.Iter()}
	if opts != nil {
		b.lower = cloneBound(opts.LowerBound)
		b.upper = cloneBound(opts.UpperBound)
	}
	return b
}

func newMemIter(t *tree, opts *storage.IterOptions) *memIter {
	return &memIter{iterBase: newIterBase(t, opts)}
}

// cloneBound copies b, keeping nil as nil (unbounded) and a non-nil empty
// slice as a non-nil empty slice (the empty key).
func cloneBound(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// settle records the underlying iterator's position after a forward (dir
// > 0) or backward move that returned ok, checking it against the bounds.
func (i *memIter) settle(ok bool, dir int) bool {
	if ok {
		i.cur = i.it.Item()
	}
	return i.check(ok, dir)
}

// next is Next from a position within the bounds: the step forward
// reaches the upper bound exactly at the tree's first item past it, so
// it checks the item, not its key.
func (i *memIter) next() bool {
	ok := i.it.Next()
	if ok {
		i.cur = i.it.Item()
		if i.upper != nil {
			if !i.endKnown {
				i.findEnd()
			}
			ok = !i.endOK || i.cur != i.end
		}
	}
	return i.check(ok, 0)
}

// findEnd finds the tree's first item at or past the upper bound.
func (i *memIter) findEnd() {
	it := i.tree.Iter()
	if it.Seek(probe(i.upper)) {
		i.end, i.endOK = it.Item(), true
	}
	it.Release()
	i.endKnown = true
}

// check records the position after a move in direction dir (> 0:
// forward) that found cur (ok), checking cur against the bounds.
func (i *iterBase) check(ok bool, dir int) bool {
	switch {
	case !ok:
	case dir > 0 && i.upper != nil && bytes.Compare(i.cur.key(), i.upper) >= 0:
		ok = false
	case dir < 0 && i.lower != nil && bytes.Compare(i.cur.key(), i.lower) < 0:
		ok = false
	}
	if !ok {
		i.cur = item{}
		if dir >= 0 { // 0: forward, the bound checked by the caller
			i.pos = posAfter
		} else {
			i.pos = posBefore
		}
		return false
	}
	i.pos = posValid
	return true
}

// First implements storage.Iterator.
func (i *memIter) First() bool {
	if i.pos == posClosed {
		return false
	}
	if i.lower != nil {
		return i.settle(i.it.Seek(probe(i.lower)), +1)
	}
	return i.settle(i.it.First(), +1)
}

// Last implements storage.Iterator.
func (i *memIter) Last() bool {
	if i.pos == posClosed {
		return false
	}
	var ok bool
	if i.upper != nil && i.it.Seek(probe(i.upper)) {
		// At the first key >= upper: the one before it is the answer.
		ok = i.it.Prev()
	} else {
		ok = i.it.Last()
	}
	return i.settle(ok, -1)
}

// SeekGE implements storage.Iterator.
func (i *memIter) SeekGE(key []byte) bool {
	if i.pos == posClosed {
		return false
	}
	key, ok := i.clamp(key)
	if !ok {
		return i.check(false, +1)
	}
	return i.settle(i.it.SeekHint(probe(key), &i.hint), +1)
}

// clamp returns the key a SeekGE(key) seeks, raised to the lower bound,
// and false if it is at or past the upper bound.
func (i *iterBase) clamp(key []byte) ([]byte, bool) {
	if i.lower != nil && bytes.Compare(key, i.lower) < 0 {
		key = i.lower
	}
	return key, i.upper == nil || bytes.Compare(key, i.upper) < 0
}

// Next implements storage.Iterator. On an unpositioned iterator, or one exhausted
// backward, it behaves like First.
func (i *memIter) Next() bool {
	switch i.pos {
	case posValid:
		return i.next()
	case posUnset, posBefore:
		return i.First()
	default:
		return false
	}
}

// Prev implements storage.Iterator. On an unpositioned iterator, or one exhausted
// forward, it behaves like Last.
func (i *memIter) Prev() bool {
	switch i.pos {
	case posValid:
		return i.settle(i.it.Prev(), -1)
	case posUnset, posAfter:
		return i.Last()
	default:
		return false
	}
}

// Valid implements storage.Iterator.
func (i *iterBase) Valid() bool { return i.pos == posValid }

// Key implements storage.Iterator.
func (i *iterBase) Key() []byte { return i.cur.key() }

// Value implements storage.Iterator.
func (i *iterBase) Value() []byte { return i.cur.value() }

// Error implements storage.Iterator.
func (i *iterBase) Error() error {
	if i.pos == posClosed {
		return storage.ErrClosed
	}
	return nil
}

// Close implements storage.Iterator. A second Close returns storage.ErrClosed.
func (i *iterBase) Close() error {
	if i.pos == posClosed {
		return storage.ErrClosed
	}
	i.it.Release()
	i.pos = posClosed
	i.cur = item{}
	return nil
}
