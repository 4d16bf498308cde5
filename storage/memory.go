package storage

// TEMPORARY stand-in, replaced by the btree engine.

import (
	"bytes"
	"io"
	"sort"
	"sync"
)

type tmpMem struct {
	mu sync.RWMutex
	m  map[string][]byte
}

// NewMemory returns an in-memory engine.
func NewMemory() Engine { return &tmpMem{m: map[string][]byte{}} }

func (e *tmpMem) Get(key []byte) ([]byte, io.Closer, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	v, ok := e.m[string(key)]
	if !ok {
		return nil, nil, ErrNotFound
	}
	return v, NopCloser, nil
}

type kv struct{ k, v []byte }

func (e *tmpMem) NewIter(o *IterOptions) (Iterator, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var items []kv
	for k, v := range e.m {
		kb := []byte(k)
		if o != nil && o.LowerBound != nil && bytes.Compare(kb, o.LowerBound) < 0 {
			continue
		}
		if o != nil && o.UpperBound != nil && bytes.Compare(kb, o.UpperBound) >= 0 {
			continue
		}
		items = append(items, kv{kb, v})
	}
	sort.Slice(items, func(i, j int) bool { return bytes.Compare(items[i].k, items[j].k) < 0 })
	return &tmpIter{items: items, i: -1}, nil
}

type tmpIter struct {
	items []kv
	i     int
}

func (it *tmpIter) First() bool { it.i = 0; return it.Valid() }
func (it *tmpIter) Last() bool  { it.i = len(it.items) - 1; return it.Valid() }
func (it *tmpIter) SeekGE(k []byte) bool {
	it.i = sort.Search(len(it.items), func(i int) bool { return bytes.Compare(it.items[i].k, k) >= 0 })
	return it.Valid()
}
func (it *tmpIter) Next() bool    { it.i++; return it.Valid() }
func (it *tmpIter) Prev() bool    { it.i--; return it.Valid() }
func (it *tmpIter) Valid() bool   { return it.i >= 0 && it.i < len(it.items) }
func (it *tmpIter) Key() []byte   { return it.items[it.i].k }
func (it *tmpIter) Value() []byte { return it.items[it.i].v }
func (it *tmpIter) Error() error  { return nil }
func (it *tmpIter) Close() error  { return nil }

type op struct {
	kind     int
	k, v, e2 []byte
}

type tmpBatch struct {
	e   *tmpMem
	ops []op
}

func (e *tmpMem) NewBatch() Batch { return &tmpBatch{e: e} }
func (b *tmpBatch) Set(k, v []byte) error {
	b.ops = append(b.ops, op{0, bytes.Clone(k), bytes.Clone(v), nil})
	return nil
}
func (b *tmpBatch) Delete(k []byte) error {
	b.ops = append(b.ops, op{1, bytes.Clone(k), nil, nil})
	return nil
}
func (b *tmpBatch) DeleteRange(s, e []byte) error {
	b.ops = append(b.ops, op{2, bytes.Clone(s), nil, bytes.Clone(e)})
	return nil
}
func (b *tmpBatch) Len() int { return len(b.ops) }
func (b *tmpBatch) Commit(bool) error {
	b.e.mu.Lock()
	defer b.e.mu.Unlock()
	for _, o := range b.ops {
		switch o.kind {
		case 0:
			b.e.m[string(o.k)] = o.v
		case 1:
			delete(b.e.m, string(o.k))
		case 2:
			for k := range b.e.m {
				if k >= string(o.k) && k < string(o.e2) {
					delete(b.e.m, k)
				}
			}
		}
	}
	return nil
}
func (b *tmpBatch) Close() error { return nil }

type tmpSnap struct{ *tmpMem }

func (s tmpSnap) Close() error { return nil }

func (e *tmpMem) NewSnapshot() (Snapshot, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	c := &tmpMem{m: map[string][]byte{}}
	for k, v := range e.m {
		c.m[k] = v
	}
	return tmpSnap{c}, nil
}
func (e *tmpMem) Close() error { return nil }
