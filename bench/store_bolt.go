package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/localtable/localtable/internal/keyenc"
)

// boltStore keeps entities in bbolt: one bucket for the table, keyed by
// localtable's own entity keys (so the order, and the ranges scanned, are
// the same), each value the entity as JSON, the encoding a Go user of a
// bare key-value store reaches for. Unlike localtable's record bytes, a
// user's own code can decode it to evaluate a filter, which the filter
// workloads do. Version is the entity's ETag. bbolt fsyncs every Update.
type boltStore struct {
	path string
	db   *bolt.DB
	tmpl []byte
	kbuf []byte
}

// boltRecord is the JSON value of an entity.
type boltRecord struct {
	row
	Timestamp time.Time `json:"Timestamp"`
	Version   int64     `json:"Version"`
}

var boltBucket = []byte(tableName)

func openBolt(path string) (*bolt.DB, error) {
	return bolt.Open(path, 0o600, &bolt.Options{Timeout: 10 * time.Second})
}

func boltValue(r row) ([]byte, error) {
	return json.Marshal(boltRecord{row: r, Timestamp: time.Now().UTC(), Version: 1})
}

// newBolt creates the database in dir and loads data set s in the given
// order, a thousand entities per transaction without fsync; then reopens
// it with fsync on.
func newBolt(dir string, s shape, order []int) (*boltStore, error) {
	st := &boltStore{path: filepath.Join(dir, "bench.bolt")}
	var err error
	if st.tmpl, err = boltValue(templateRow("", "")); err != nil {
		return nil, err
	}
	db, err := openBolt(st.path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.NoSync = true
	for start := 0; start < len(order); start += 1000 {
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(boltBucket)
			if err != nil {
				return err
			}
			for _, i := range order[start:min(start+1000, len(order))] {
				v, err := boltValue(s.makeRow(i))
				if err != nil {
					return err
				}
				p, r := s.keys(i)
				if err := b.Put(keyenc.AppendEntityKey(nil, 1, p, r), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := db.Sync(); err != nil {
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	return st, st.reopen(pk(0), rk(0))
}

func (s *boltStore) reopen(pk, rk string) error {
	if s.db != nil {
		if err := s.db.Close(); err != nil {
			return err
		}
	}
	db, err := openBolt(s.path)
	if err != nil {
		return err
	}
	s.db = db
	return s.get(pk, rk)
}

func (s *boltStore) name() string  { return "bbolt" }
func (s *boltStore) filters() bool { return true }

func (s *boltStore) key(pk, rk string) []byte {
	s.kbuf = keyenc.AppendEntityKey(s.kbuf[:0], 1, pk, rk)
	return s.kbuf
}

func (s *boltStore) get(pk, rk string) error {
	return s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(boltBucket).Get(s.key(pk, rk))
		if v == nil {
			return fmt.Errorf("get %s/%s: absent", pk, rk)
		}
		var r boltRecord
		return json.Unmarshal(v, &r)
	})
}

func (s *boltStore) insert(pk, rk string) error { return s.tx100(pk, []string{rk}) }

func (s *boltStore) tx100(pk string, rks []string) error {
	// Encode first, outside the writer's lock, as a user would.
	vals := make([][]byte, len(rks))
	for i, rk := range rks {
		r := templateRow(pk, rk)
		v, err := boltValue(r)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(boltBucket)
		for i, rk := range rks {
			k := s.key(pk, rk)
			if b.Get(k) != nil {
				return fmt.Errorf("insert %s/%s: exists", pk, rk)
			}
			if err := b.Put(k, vals[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *boltStore) remove(pk string, rks []string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(boltBucket)
		for _, rk := range rks {
			if err := b.Delete(s.key(pk, rk)); err != nil {
				return err
			}
		}
		return nil
	})
}

// scan decodes the entities in [lo, hi) and counts those keep accepts.
func (s *boltStore) scan(lo, hi []byte, keep func(*boltRecord) bool) (int, error) {
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(boltBucket).Cursor()
		for k, v := c.Seek(lo); k != nil && bytes.Compare(k, hi) < 0; k, v = c.Next() {
			var r boltRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			if keep(&r) {
				n++
			}
		}
		return nil
	})
	return n, err
}

func (s *boltStore) rangeQuery(pk, lo, hi string) (int, error) {
	return s.scan(keyenc.AppendEntityKey(nil, 1, pk, lo), keyenc.AppendEntityKey(nil, 1, pk, hi), func(*boltRecord) bool { return true })
}

func (s *boltStore) partitionFilter(pk string) (int, error) {
	prefix := keyenc.AppendString(keyenc.AppendTableID(nil, 1), pk)
	return s.scan(prefix, keyenc.StringEnd(prefix), func(r *boltRecord) bool { return r.Age > 50 })
}

func (s *boltStore) fullFilter() (int, error) {
	prefix := keyenc.AppendTableID(nil, 1)
	return s.scan(prefix, keyenc.PrefixEnd(prefix), func(r *boltRecord) bool { return r.Score < 1.0 })
}

var errConflict = errors.New("version changed")

func (s *boltStore) update(pk, rk string) (int, error) {
	key := keyenc.AppendEntityKey(nil, 1, pk, rk)
	for conflicts := 0; ; conflicts++ {
		var r boltRecord
		err := s.db.View(func(tx *bolt.Tx) error {
			return json.Unmarshal(tx.Bucket(boltBucket).Get(key), &r)
		})
		if err != nil {
			return conflicts, err
		}
		seen := r.Version
		r.Visits++
		r.Version++
		r.Timestamp = time.Now().UTC()
		v, err := json.Marshal(r)
		if err != nil {
			return conflicts, err
		}
		err = s.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(boltBucket)
			var cur struct{ Version int64 }
			if err := json.Unmarshal(b.Get(key), &cur); err != nil {
				return err
			}
			if cur.Version != seen {
				return errConflict
			}
			return b.Put(key, v)
		})
		if !errors.Is(err, errConflict) {
			return conflicts, err
		}
	}
}

func (s *boltStore) close() error { return s.db.Close() }
