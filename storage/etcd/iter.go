package etcd

import (
	"bytes"
	"context"
	"slices"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/localtable/localtable/storage"
)

// iterPos is where an iterator stands.
type iterPos int8

const (
	posUnset  iterPos = iota // not yet positioned
	posValid                 // at page[idx]
	posBefore                // exhausted backward
	posAfter                 // exhausted forward
	posClosed
)

// iter is the storage.Iterator of the engine and its snapshots. It reads
// its range at one revision, a page of keys at a time, and keeps the last
// page: moving within it costs nothing, leaving it reads the next page.
//
// Forward pages are cheap: etcd stops reading at the page's limit.
// Backward pages (Last, and Prev past the start of a page) ask for the
// keys sorted in descending order, for which etcd reads the whole
// remaining range before it applies the limit; the table layer never
// iterates backward.
type iter struct {
	e            *Engine
	ctx          context.Context
	rev          int64
	lower, upper []byte // etcd keys; upper is never nil
	limit        int64

	page []*mvccpb.KeyValue // ascending
	idx  int
	// moreBefore and moreAfter say whether keys within bounds may lie
	// before page[0] and after page[len-1].
	moreBefore, moreAfter bool
	pos                   iterPos
	err                   error
}

func (e *Engine) newIter(ctx context.Context, rev int64, opts *storage.IterOptions) *iter {
	it := &iter{e: e, ctx: ctx, rev: rev, lower: e.prefix, upper: e.end, limit: int64(e.opts.PageSize)}
	if opts != nil {
		it.lower = e.bound(opts.LowerBound, false)
		it.upper = e.bound(opts.UpperBound, true)
	}
	return it
}

// fetch reads one page: ascending from start (inclusive) to the upper
// bound, or descending from end (exclusive) down to the lower bound. It
// returns false on an error, which it records.
func (it *iter) fetch(from []byte, descending bool) bool {
	var kvs []*mvccpb.KeyValue
	var more bool
	err := it.e.read(it.ctx, "range", func(ctx context.Context) error {
		var resp *clientv3.GetResponse
		var err error
		if descending {
			resp, err = it.e.cli.Get(ctx, string(it.lower), clientv3.WithRange(string(from)),
				clientv3.WithRev(it.rev), clientv3.WithLimit(it.limit),
				clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend))
		} else {
			resp, err = it.e.cli.Get(ctx, string(from), clientv3.WithRange(string(it.upper)),
				clientv3.WithRev(it.rev), clientv3.WithLimit(it.limit))
		}
		if err == nil {
			kvs, more = resp.Kvs, resp.More
		}
		return err
	})
	if err != nil {
		it.fail(err)
		return false
	}
	it.resize(kvs)
	if descending {
		slices.Reverse(kvs)
		it.page, it.moreBefore, it.moreAfter = kvs, more, bytes.Compare(from, it.upper) < 0
	} else {
		it.page, it.moreBefore, it.moreAfter = kvs, bytes.Compare(from, it.lower) > 0, more
	}
	return true
}

// resize adapts the page size to the values' size, aiming at pageBytes
// per response.
func (it *iter) resize(kvs []*mvccpb.KeyValue) {
	n := 0
	for _, kv := range kvs {
		n += len(kv.Key) + len(kv.Value)
	}
	switch {
	case n > pageBytes && it.limit > 1:
		it.limit /= 2
	case n < pageBytes/4 && it.limit < int64(it.e.opts.PageSize) && len(kvs) == int(it.limit):
		it.limit = min(2*it.limit, int64(it.e.opts.PageSize))
	}
}

func (it *iter) fail(err error) {
	it.err = err
	it.pos = posAfter
	it.page = nil
}

// at settles on page[i], or exhausts the iterator in the direction of
// dir if i is outside the page.
func (it *iter) at(i, dir int) bool {
	if i < 0 || i >= len(it.page) {
		if dir > 0 {
			it.pos = posAfter
		} else {
			it.pos = posBefore
		}
		return false
	}
	it.idx, it.pos = i, posValid
	return true
}

func (it *iter) usable() bool { return it.pos != posClosed && it.err == nil }

// First implements storage.Iterator.
func (it *iter) First() bool {
	if !it.usable() || !it.fetch(it.lower, false) {
		return false
	}
	return it.at(0, +1)
}

// Last implements storage.Iterator.
func (it *iter) Last() bool {
	if !it.usable() || !it.fetch(it.upper, true) {
		return false
	}
	return it.at(len(it.page)-1, -1)
}

// SeekGE implements storage.Iterator.
func (it *iter) SeekGE(key []byte) bool {
	if !it.usable() {
		return false
	}
	k := it.e.key(key)
	if bytes.Compare(k, it.lower) < 0 {
		k = it.lower
	}
	if bytes.Compare(k, it.upper) >= 0 {
		it.page = nil
		return it.at(0, +1)
	}
	// Within the current page, no read is needed.
	if len(it.page) > 0 && bytes.Compare(k, it.page[0].Key) >= 0 && (it.pos == posValid || it.pos == posAfter) {
		i, _ := slices.BinarySearchFunc(it.page, k, func(kv *mvccpb.KeyValue, k []byte) int { return bytes.Compare(kv.Key, k) })
		if i < len(it.page) || !it.moreAfter {
			return it.at(i, +1)
		}
	}
	if !it.fetch(k, false) {
		return false
	}
	return it.at(0, +1)
}

// Next implements storage.Iterator.
func (it *iter) Next() bool {
	if !it.usable() {
		return false
	}
	switch it.pos {
	case posUnset:
		return it.First()
	case posBefore:
		if len(it.page) > 0 && !it.moreBefore {
			return it.at(0, +1)
		}
		return it.First()
	case posAfter:
		return false
	}
	if it.idx+1 < len(it.page) {
		return it.at(it.idx+1, +1)
	}
	if !it.moreAfter {
		return it.at(len(it.page), +1)
	}
	last := it.page[len(it.page)-1].Key
	if !it.fetch(append(bytes.Clone(last), 0), false) {
		return false
	}
	return it.at(0, +1)
}

// Prev implements storage.Iterator.
func (it *iter) Prev() bool {
	if !it.usable() {
		return false
	}
	switch it.pos {
	case posUnset:
		return it.Last()
	case posAfter:
		if len(it.page) > 0 && !it.moreAfter {
			return it.at(len(it.page)-1, -1)
		}
		return it.Last()
	case posBefore:
		return false
	}
	if it.idx > 0 {
		return it.at(it.idx-1, -1)
	}
	if !it.moreBefore {
		return it.at(-1, -1)
	}
	if !it.fetch(it.page[0].Key, true) {
		return false
	}
	return it.at(len(it.page)-1, -1)
}

// Valid implements storage.Iterator.
func (it *iter) Valid() bool { return it.pos == posValid }

// Key implements storage.Iterator: the key without the engine's prefix.
func (it *iter) Key() []byte {
	if it.pos != posValid {
		return nil
	}
	return it.page[it.idx].Key[len(it.e.prefix):]
}

// Value implements storage.Iterator.
func (it *iter) Value() []byte {
	if it.pos != posValid {
		return nil
	}
	if v := it.page[it.idx].Value; v != nil {
		return v
	}
	return []byte{}
}

// Error implements storage.Iterator.
func (it *iter) Error() error {
	if it.pos == posClosed {
		return storage.ErrClosed
	}
	return it.err
}

// Close implements storage.Iterator. A second Close returns
// storage.ErrClosed.
func (it *iter) Close() error {
	if it.pos == posClosed {
		return storage.ErrClosed
	}
	err := it.err
	it.pos, it.page = posClosed, nil
	return err
}
