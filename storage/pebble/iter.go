package pebble

import (
	"bytes"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/localtable/localtable/storage"
)

type iterPos int8

const (
	posUnset  iterPos = iota // not yet positioned
	posValid                 // at a key within bounds
	posBefore                // exhausted backward
	posAfter                 // exhausted forward
	posError                 // failed; err is set
	posClosed
)

// iter is a storage.Iterator over a pebble.Iterator. Pebble enforces the
// bounds; iter adds the exhaustion state machine the storage package
// documents (turning around at the ends, Next/Prev on an unpositioned
// iterator) and sticky errors.
type iter struct {
	it    *pdb.Iterator
	lower []byte
	upper []byte
	pos   iterPos
	err   error
}

// newIterer is the NewIter of pebble.DB and pebble.Snapshot.
type newIterer interface {
	NewIter(*pdb.IterOptions) (*pdb.Iterator, error)
}

func newIter(r newIterer, opts *storage.IterOptions) (*iter, error) {
	i := &iter{}
	po := &pdb.IterOptions{}
	if opts != nil {
		// Pebble retains the bound slices: give it copies.
		// An empty lower bound is the smallest key, the same as none;
		// dropping it avoids empty seek keys, which Pebble's invariant
		// checks (enabled by -race) trip over.
		if len(opts.LowerBound) > 0 {
			i.lower = cloneBound(opts.LowerBound)
		}
		i.upper = cloneBound(opts.UpperBound)
		po.LowerBound, po.UpperBound = i.lower, i.upper
		if i.upper != nil && len(i.upper) == 0 {
			// The empty key bounds nothing below it. Pebble copies bounds
			// into a pooled buffer and, while that is still nil, makes an
			// empty bound nil: unbounded. Give it an empty range it keeps.
			po.LowerBound, po.UpperBound = []byte{0}, []byte{0}
		}
	}
	it, err := r.NewIter(po)
	if err != nil {
		return nil, err
	}
	i.it = it
	return i, nil
}

func cloneBound(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// settle records the result of a Pebble positioning call.
func (i *iter) settle(ok bool, forward bool) bool {
	if ok {
		i.pos = posValid
		return true
	}
	if err := i.it.Error(); err != nil {
		i.err, i.pos = err, posError
		return false
	}
	if forward {
		i.pos = posAfter
	} else {
		i.pos = posBefore
	}
	return false
}

func (i *iter) usable() bool { return i.pos != posError && i.pos != posClosed }

func (i *iter) First() bool {
	if !i.usable() {
		return false
	}
	return i.settle(i.it.First(), true)
}

func (i *iter) Last() bool {
	if !i.usable() {
		return false
	}
	return i.settle(i.it.Last(), false)
}

func (i *iter) SeekGE(key []byte) bool {
	if !i.usable() {
		return false
	}
	if i.lower != nil && bytes.Compare(key, i.lower) < 0 {
		key = i.lower
	}
	if i.upper != nil && bytes.Compare(key, i.upper) >= 0 {
		i.pos = posAfter
		return false
	}
	if len(key) == 0 {
		return i.First() // the empty key is the smallest: see newIter
	}
	return i.settle(i.it.SeekGE(key), true)
}

func (i *iter) Next() bool {
	switch i.pos {
	case posValid:
		return i.settle(i.it.Next(), true)
	case posUnset, posBefore:
		return i.First()
	default:
		return false
	}
}

func (i *iter) Prev() bool {
	switch i.pos {
	case posValid:
		return i.settle(i.it.Prev(), false)
	case posUnset, posAfter:
		return i.Last()
	default:
		return false
	}
}

func (i *iter) Valid() bool { return i.pos == posValid }

func (i *iter) Key() []byte {
	if i.pos != posValid {
		return nil
	}
	return i.it.Key()
}

func (i *iter) Value() []byte {
	if i.pos != posValid {
		return nil
	}
	v, err := i.it.ValueAndErr()
	if err != nil {
		i.err, i.pos = err, posError
		return nil
	}
	if v == nil {
		v = []byte{}
	}
	return v
}

func (i *iter) Error() error {
	if i.pos == posClosed {
		return storage.ErrClosed
	}
	return i.err
}

// Close closes the Pebble iterator and returns the first error met.
func (i *iter) Close() error {
	if i.pos == posClosed {
		return storage.ErrClosed
	}
	err := i.it.Close()
	if i.err != nil {
		err = i.err
	}
	i.pos, i.err = posClosed, nil
	return err
}
