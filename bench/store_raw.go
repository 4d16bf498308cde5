package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	pdb "github.com/cockroachdb/pebble/v2"
	"github.com/tidwall/btree"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	lpebble "github.com/localtable/localtable/storage/pebble"
)

// The bare engines do what localtable's table layer asks of its engine,
// with the same bytes: the keys and records localtable stores, taken from
// a localtable store holding the same data set (see records). A read finds
// the bytes and copies them, as any reader that keeps a value must; an
// insert first checks that the key is absent; a transaction checks its
// keys and commits one batch. Nothing is decoded, validated or
// timestamped: that is the table layer's work, which the ratio measures.
// It is the pairing of the library's own BenchmarkVsRaw.

// records are the engine records of a loaded localtable store: the
// records of data set s by entity index, the record of the template
// entity, and the table's ID in the keys.
type records struct {
	vals    [][]byte
	tmpl    []byte
	tableID uint64
}

// captureRecords reads the entity records of table tableName out of a
// localtable memory store holding data set s, checking that they are its
// entities in key order.
func captureRecords(lt *ltStore, s shape) (*records, error) {
	eng := lt.eng
	it, err := eng.NewIter(&storage.IterOptions{LowerBound: []byte{keyenc.PrefixEntity}, UpperBound: []byte{keyenc.PrefixEntity + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	rec := &records{vals: make([][]byte, 0, s.n())}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		p, r, err := keyenc.DecodeEntityKey(k)
		if err != nil {
			return nil, err
		}
		i := len(rec.vals)
		if wp, wr := s.keys(i); p != wp || r != wr {
			return nil, fmt.Errorf("captured record %d is %s/%s, want %s/%s", i, p, r, wp, wr)
		}
		rec.tableID = binary.BigEndian.Uint64(k[1:keyenc.TablePrefixLen])
		rec.vals = append(rec.vals, bytes.Clone(it.Value()))
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if len(rec.vals) != s.n() {
		return nil, fmt.Errorf("captured %d records, want %d", len(rec.vals), s.n())
	}
	// The template's record: write it under a key of its own, read it
	// back, and remove it.
	tp, tr := "template", "template"
	if err := lt.insert(tp, tr); err != nil {
		return nil, err
	}
	v, c, err := eng.Get(keyenc.AppendEntityKey(nil, rec.tableID, tp, tr))
	if err != nil {
		return nil, err
	}
	rec.tmpl = bytes.Clone(v)
	c.Close()
	if err := lt.tbl.Delete(ctx, tp, tr, nil); err != nil {
		return nil, err
	}
	return rec, nil
}

// rawEngine is the part of a bare engine the workloads differ in.
type rawEngine interface {
	// get appends the value of key to dst and returns it, or ok false:
	// a fresh copy when dst is nil, a copy into a reused buffer when it
	// is one's [:0].
	get(dst, key []byte) (val []byte, ok bool, err error)
	// commit writes a batch of sets atomically (durably on disk).
	commit(keys, vals [][]byte) error
	// del deletes keys in one atomic batch (durably on disk).
	del(keys [][]byte) error
	// scan calls f with each value in [lo, hi), in order.
	scan(lo, hi []byte, f func(v []byte)) error
	close() error
}

// rawStore runs the workloads on a bare engine.
type rawStore struct {
	label string
	eng   rawEngine
	rec   *records
	kbuf  []byte
	keys  [][]byte
	vals  [][]byte
}

func (s *rawStore) name() string  { return s.label }
func (s *rawStore) filters() bool { return false }

func (s *rawStore) key(pk, rk string) []byte {
	s.kbuf = keyenc.AppendEntityKey(s.kbuf[:0], s.rec.tableID, pk, rk)
	return s.kbuf
}

// load writes data set s in the given order, one key per commit.
func (s *rawStore) load(sh shape, order []int) error {
	for _, i := range order {
		p, r := sh.keys(i)
		if err := s.eng.commit([][]byte{s.key(p, r)}, [][]byte{s.rec.vals[i]}); err != nil {
			return err
		}
	}
	return nil
}

func (s *rawStore) get(pk, rk string) error {
	v, err := s.read(nil, pk, rk)
	sink = v
	return err
}

// read appends the value of entity (pk, rk) to dst (see rawEngine.get).
func (s *rawStore) read(dst []byte, pk, rk string) ([]byte, error) {
	v, ok, err := s.eng.get(dst, s.key(pk, rk))
	if err != nil {
		return dst, err
	}
	if !ok {
		return dst, fmt.Errorf("get %s/%s: absent", pk, rk)
	}
	return v, nil
}

func (s *rawStore) insert(pk, rk string) error { return s.tx100(pk, []string{rk}) }

func (s *rawStore) tx100(pk string, rks []string) error {
	for len(s.keys) < len(rks) {
		s.keys = append(s.keys, nil)
	}
	keys, vals := s.keys[:len(rks)], s.vals[:0]
	for i, rk := range rks {
		keys[i] = keyenc.AppendEntityKey(keys[i][:0], s.rec.tableID, pk, rk)
		if _, ok, err := s.eng.get(nil, keys[i]); err != nil || ok {
			return fmt.Errorf("insert %s/%s: exists or %v", pk, rk, err)
		}
		vals = append(vals, s.rec.tmpl)
	}
	s.vals = vals
	return s.eng.commit(keys, vals)
}

func (s *rawStore) remove(pk string, rks []string) error {
	keys := make([][]byte, len(rks))
	for i, rk := range rks {
		keys[i] = keyenc.AppendEntityKey(nil, s.rec.tableID, pk, rk)
	}
	return s.eng.del(keys)
}

// count copies each value in [lo, hi) and counts them: each into a fresh
// copy when buf is nil, else into *buf, reused.
func (s *rawStore) count(lo, hi []byte, buf *[]byte) (int, error) {
	n := 0
	err := s.eng.scan(lo, hi, func(v []byte) {
		if buf != nil {
			*buf = append((*buf)[:0], v...)
		} else {
			sink = bytes.Clone(v)
		}
		n++
	})
	return n, err
}

func (s *rawStore) rangeQuery(pk, lo, hi string) (int, error) {
	return s.rangeInto(nil, pk, lo, hi)
}

// rangeInto is rangeQuery copying into buf (see count).
func (s *rawStore) rangeInto(buf *[]byte, pk, lo, hi string) (int, error) {
	return s.count(keyenc.AppendEntityKey(nil, s.rec.tableID, pk, lo), keyenc.AppendEntityKey(nil, s.rec.tableID, pk, hi), buf)
}

func (s *rawStore) partitionFilter(pk string) (int, error) {
	prefix := keyenc.AppendString(keyenc.AppendTableID(nil, s.rec.tableID), pk)
	return s.count(prefix, keyenc.StringEnd(prefix), nil)
}

func (s *rawStore) fullFilter() (int, error) { return s.fullInto(nil) }

// fullInto is fullFilter copying into buf (see count).
func (s *rawStore) fullInto(buf *[]byte) (int, error) {
	prefix := keyenc.AppendTableID(nil, s.rec.tableID)
	return s.count(prefix, keyenc.PrefixEnd(prefix), buf)
}

func (s *rawStore) close() error { return s.eng.close() }

// rawBTree is tidwall/btree used directly, with the memory engine's item.
type rawBTree struct{ t *btree.BTreeG[item] }

type item struct{ key, value []byte }

func newRawBTree() *rawBTree {
	return &rawBTree{btree.NewBTreeGOptions(func(a, b item) bool { return string(a.key) < string(b.key) }, btree.Options{NoLocks: true})}
}

func (r *rawBTree) get(dst, key []byte) ([]byte, bool, error) {
	it, ok := r.t.Get(item{key: key})
	if !ok {
		return dst, false, nil
	}
	return append(dst, it.value...), true, nil
}

func (r *rawBTree) commit(keys, vals [][]byte) error {
	for i := range keys {
		// Copy, as any engine must: the caller reuses its buffers.
		buf := make([]byte, len(keys[i])+len(vals[i]))
		copy(buf, keys[i])
		copy(buf[len(keys[i]):], vals[i])
		r.t.Set(item{key: buf[:len(keys[i]):len(keys[i])], value: buf[len(keys[i]):]})
	}
	return nil
}

func (r *rawBTree) del(keys [][]byte) error {
	for _, k := range keys {
		r.t.Delete(item{key: k})
	}
	return nil
}

func (r *rawBTree) scan(lo, hi []byte, f func([]byte)) error {
	r.t.Ascend(item{key: lo}, func(it item) bool {
		if bytes.Compare(it.key, hi) >= 0 {
			return false
		}
		f(it.value)
		return true
	})
	return nil
}

func (r *rawBTree) close() error { return nil }

// rawPebble is a bare pebble.DB with the options localtable's pebble
// engine uses; its batches commit with fsync unless noSync.
type rawPebble struct {
	dir    string
	db     *pdb.DB
	noSync bool
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)         {}
func (quietLogger) Errorf(string, ...any)        {}
func (quietLogger) Fatalf(f string, args ...any) { pdb.DefaultLogger.Fatalf(f, args...) }

func openRawPebble(dir string, noSync bool) (*rawPebble, error) {
	db, err := pdb.Open(dir, lpebble.NativeOptions(&lpebble.Options{Logger: quietLogger{}}))
	if err != nil {
		return nil, err
	}
	return &rawPebble{dir: dir, db: db, noSync: noSync}, nil
}

func (r *rawPebble) get(dst, key []byte) ([]byte, bool, error) {
	v, c, err := r.db.Get(key)
	if errors.Is(err, pdb.ErrNotFound) {
		return dst, false, nil
	}
	if err != nil {
		return dst, false, err
	}
	dst = append(dst, v...)
	c.Close()
	return dst, true, nil
}

func (r *rawPebble) commit(keys, vals [][]byte) error {
	b := r.db.NewBatch()
	defer b.Close()
	for i := range keys {
		if err := b.Set(keys[i], vals[i], nil); err != nil {
			return err
		}
	}
	opt := pdb.Sync
	if r.noSync {
		opt = pdb.NoSync
	}
	return b.Commit(opt)
}

func (r *rawPebble) del(keys [][]byte) error {
	b := r.db.NewBatch()
	defer b.Close()
	for _, k := range keys {
		if err := b.Delete(k, nil); err != nil {
			return err
		}
	}
	opt := pdb.Sync
	if r.noSync {
		opt = pdb.NoSync
	}
	return b.Commit(opt)
}

func (r *rawPebble) scan(lo, hi []byte, f func([]byte)) error {
	it, err := r.db.NewIter(&pdb.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		f(it.Value())
	}
	return it.Close()
}

func (r *rawPebble) close() error { return r.db.Close() }

// reuseStore is a bare engine's store reading without allocating: each
// value it reads is copied into one buffer it reuses, the least a caller
// of the bare engine pays. It reads only (get, range, full scan) and
// shares its engine with the rawStore it views, which owns it.
type reuseStore struct {
	*rawStore
	label string
	buf   []byte
}

func (s *reuseStore) name() string { return s.label }

func (s *reuseStore) get(pk, rk string) error {
	v, err := s.read(s.buf[:0], pk, rk)
	s.buf = v
	return err
}

func (s *reuseStore) rangeQuery(pk, lo, hi string) (int, error) {
	return s.rangeInto(&s.buf, pk, lo, hi)
}

func (s *reuseStore) fullFilter() (int, error) { return s.fullInto(&s.buf) }

// close does nothing: the rawStore it views closes the engine.
func (s *reuseStore) close() error { return nil }

// newRawMemory loads a bare btree with the records of data set s.
func newRawMemory(rec *records, s shape, order []int) (*rawStore, error) {
	st := &rawStore{label: "raw btree", eng: newRawBTree(), rec: rec}
	return st, st.load(s, order)
}

// newRawPebble loads a bare pebble in dir with the records of data set s,
// without fsync, and reopens it with fsync on.
func newRawPebble(dir string, rec *records, s shape, order []int) (*rawStore, error) {
	eng, err := openRawPebble(dir, true)
	if err != nil {
		return nil, err
	}
	st := &rawStore{label: "raw pebble", eng: eng, rec: rec}
	if err := st.load(s, order); err != nil {
		eng.close()
		return nil, err
	}
	return st, st.reopen(pk(0), rk(0))
}

// reopen closes a bare pebble, opens it with fsync on and reads a key.
func (s *rawStore) reopen(pk, rk string) error {
	p, ok := s.eng.(*rawPebble)
	if !ok {
		return errors.New("reopen: memory store")
	}
	if err := p.close(); err != nil {
		return err
	}
	eng, err := openRawPebble(p.dir, false)
	if err != nil {
		return err
	}
	s.eng = eng
	return s.get(pk, rk)
}
