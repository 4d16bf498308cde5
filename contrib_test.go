package localtable

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// shadow is a test contributor: it keeps, beside every entity, a copy of
// its record under shadowPrefix and the entity's key, and a count of each
// table's entities, which it reads and rewrites in every commit that
// inserts or deletes one. It is what a secondary index does: derived data,
// written in the same commit, that must never drift from the table.
type shadow struct {
	failOn string // a RowKey whose write the contributor refuses
}

const shadowPrefix = 'x'

func shadowKey(entityKey []byte) []byte { return append([]byte{shadowPrefix}, entityKey...) }

func shadowCountKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{shadowPrefix, 0}, id)
}

var errShadowRefused = errors.New("shadow: refused")

func (s *shadow) wants(*liveTable) bool { return true }

func (s *shadow) contribute(c *commitContext) error {
	delta := map[uint64]int64{}
	for _, ch := range c.changes {
		switch ch.kind {
		case changeInsert, changeReplace, changeMerge:
			if s.failOn != "" {
				if _, rk, _ := keyenc.DecodeEntityKey(ch.key); rk == s.failOn {
					return errShadowRefused
				}
			}
			if ch.new == nil {
				return fmt.Errorf("shadow: %v change without a record", ch.kind)
			}
			if (ch.old == nil) != (ch.kind == changeInsert) {
				return fmt.Errorf("shadow: kind %v with old record %v", ch.kind, ch.old != nil)
			}
			c.set(shadowKey(ch.key), bytes.Clone(ch.new))
			if ch.kind == changeInsert {
				delta[ch.tableID]++
			}
		case changeDelete:
			if ch.old == nil || ch.new != nil {
				return errors.New("shadow: a delete of nothing")
			}
			c.del(shadowKey(ch.key))
			delta[ch.tableID]--
		case changeTableDeleted:
			prefix := shadowKey(keyenc.AppendTableID(nil, ch.tableID))
			c.delRange(prefix, keyenc.PrefixEnd(prefix))
			c.del(shadowCountKey(ch.tableID))
		}
	}
	for id, d := range delta {
		vals, found, err := c.read(shadowCountKey(id))
		if err != nil {
			return err
		}
		var n int64
		if found[0] {
			n = int64(binary.BigEndian.Uint64(vals[0]))
		}
		c.set(shadowCountKey(id), binary.BigEndian.AppendUint64(nil, uint64(n+d)))
	}
	return nil
}

// contribEngines are the engines the contributor is checked on: one of
// each strategy's, pebble on disk among them. open returns the engines of
// the accounts that write concurrently (two on a shared engine).
var contribEngines = []struct {
	name string
	open func(t *testing.T) []storage.Engine
}{
	{"memory", func(*testing.T) []storage.Engine { return []storage.Engine{memory.New(nil)} }},
	{"pebble", func(t *testing.T) []storage.Engine {
		db, err := pebble.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return []storage.Engine{db}
	}},
	{"shared", func(*testing.T) []storage.Engine {
		s := sharedmem.New()
		return []storage.Engine{s.Open(), s.Open()}
	}},
}

func openContrib(t *testing.T, engs []storage.Engine, c contributor) []*Account {
	var as []*Account
	for _, e := range engs {
		a, err := Open(&Options{Engine: e})
		if err != nil {
			t.Fatal(err)
		}
		a.contributors = []contributor{c}
		t.Cleanup(func() { a.Close() })
		as = append(as, a)
	}
	return as
}

// TestContributorSameCommit writes at random from several goroutines (and,
// on a shared engine, two accounts), failing transactions included, and
// checks that the contributor's data matches the table exactly: every
// committed change reached it, and nothing of a write that failed.
func TestContributorSameCommit(t *testing.T) {
	ctx := context.Background()
	for _, ce := range contribEngines {
		t.Run(ce.name, func(t *testing.T) {
			as := openContrib(t, ce.open(t), &shadow{})
			if _, err := as[0].CreateTable(ctx, "Tbl"); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tbl := as[g%len(as)].Table("Tbl")
					r := rand.New(rand.NewPCG(uint64(g), 7))
					for range 150 {
						randomWrite(ctx, tbl, r)
					}
				}()
			}
			wg.Wait()
			checkShadow(t, as[0], "Tbl")

			// A table deleted takes its derived data with it.
			if _, err := as[0].CreateTable(ctx, "Ubl"); err != nil {
				t.Fatal(err)
			}
			u := as[0].Table("Ubl")
			if _, err := u.Insert(ctx, Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
				t.Fatal(err)
			}
			lt, _ := as[0].lookup(ctx, "Ubl")
			if err := as[0].DeleteTable(ctx, "Ubl"); err != nil {
				t.Fatal(err)
			}
			if n := countKeys(t, as[0].eng, shadowKey(keyenc.AppendTableID(nil, lt.id))); n != 0 {
				t.Errorf("%d shadow records of the deleted table remain", n)
			}
		})
	}
}

// randomWrite makes one random entity write into tbl, on a small key
// space, so that many fail (existing, missing, stale ETags).
func randomWrite(ctx context.Context, tbl *Table, r *rand.Rand) {
	pk := fmt.Sprintf("p%d", r.IntN(3)) // the count is shared by the partitions
	key := func() string { return fmt.Sprintf("r%d", r.IntN(12)) }
	ent := func(rk string) Entity {
		return Entity{PartitionKey: pk, RowKey: rk, Properties: Properties{"N": Int64Value(r.Int64N(100)), fmt.Sprintf("P%d", r.IntN(3)): Int32Value(1)}}
	}
	switch r.IntN(6) {
	case 0:
		tbl.Insert(ctx, ent(key()))
	case 1:
		tbl.Update(ctx, ent(key()), &UpdateOptions{Mode: UpdateMode(r.IntN(2))})
	case 2:
		tbl.Upsert(ctx, ent(key()), &UpsertOptions{Mode: UpdateMode(r.IntN(2))})
	case 3:
		tbl.Delete(ctx, pk, key(), nil)
	default:
		var acts []Action
		seen := map[string]bool{}
		for range 1 + r.IntN(5) {
			rk := key()
			if seen[rk] {
				continue
			}
			seen[rk] = true
			acts = append(acts, Action{Type: ActionType(r.IntN(6)), Entity: ent(rk)})
		}
		tbl.Transact(ctx, acts)
	}
}

// checkShadow checks that the shadow records of table name are exactly
// its entities' records, and its count their number.
func checkShadow(t *testing.T, a *Account, name string) {
	t.Helper()
	lt, err := a.lookup(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	prefix := keyenc.AppendTableID(nil, lt.id)
	entities := readAll(t, a.eng, prefix)
	shadows := readAll(t, a.eng, shadowKey(prefix))
	if len(entities) != len(shadows) {
		t.Errorf("%d entities, %d shadow records", len(entities), len(shadows))
	}
	for k, v := range entities {
		if s, ok := shadows[string(shadowPrefix)+k]; !ok || s != v {
			t.Errorf("entity %q: shadow %q, record %q", k, s, v)
		}
	}
	v, c, err := a.eng.Get(shadowCountKey(lt.id))
	var n int64
	if err == nil {
		n = int64(binary.BigEndian.Uint64(v))
		c.Close()
	}
	if n != int64(len(entities)) {
		t.Errorf("count %d, %d entities", n, len(entities))
	}
	if len(entities) == 0 {
		t.Error("no entity written: the test wrote nothing")
	}
}

func readAll(t *testing.T, r storage.Reader, prefix []byte) map[string]string {
	t.Helper()
	it, err := r.NewIter(&storage.IterOptions{LowerBound: prefix, UpperBound: keyenc.PrefixEnd(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	m := map[string]string{}
	for it.First(); it.Valid(); it.Next() {
		m[string(it.Key())] = string(it.Value())
	}
	return m
}

func countKeys(t *testing.T, r storage.Reader, prefix []byte) int {
	return len(readAll(t, r, prefix))
}

// TestContributorError checks that a contributor that fails a commit
// fails the write with its error, and that nothing of the write, the
// entity's or the contributor's, is committed.
func TestContributorError(t *testing.T) {
	ctx := context.Background()
	for _, ce := range contribEngines {
		t.Run(ce.name, func(t *testing.T) {
			a := openContrib(t, ce.open(t), &shadow{failOn: "bad"})[0]
			tbl, err := a.CreateTable(ctx, "Tbl")
			if err != nil {
				t.Fatal(err)
			}
			_, err = tbl.Transact(ctx, []Action{
				{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "good"}},
				{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "bad"}},
			})
			if !errors.Is(err, errShadowRefused) {
				t.Fatalf("Transact = %v, want the contributor's error", err)
			}
			if _, err := tbl.Get(ctx, "p", "good", nil); !errors.Is(err, ErrEntityNotFound) {
				t.Errorf("the refused transaction's first entity: %v", err)
			}
			if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "good"}); err != nil {
				t.Fatal(err)
			}
			checkShadow(t, a, "Tbl")
		})
	}
}

// TestContributorChanges checks the changes a contributor is handed for
// each kind of write, table writes included.
func TestContributorChanges(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	a := openContrib(t, []storage.Engine{memory.New(nil)}, rec)[0]
	tbl, err := a.CreateTable(ctx, "Tbl")
	if err != nil {
		t.Fatal(err)
	}
	e := Entity{PartitionKey: "p", RowKey: "r", Properties: Properties{"A": Int32Value(1)}}
	tbl.Insert(ctx, e)
	tbl.Update(ctx, e, &UpdateOptions{Mode: UpdateModeMerge})
	tbl.Upsert(ctx, e, nil)
	tbl.Insert(ctx, e) // fails: no change
	tbl.Delete(ctx, "p", "r", nil)
	tbl.SetAccessPolicy(ctx, []AccessPolicy{{ID: "x", Permission: "r"}})
	a.DeleteTable(ctx, "Tbl")
	var kinds []changeKind
	for _, k := range rec.kinds {
		if k != changeClockMark {
			kinds = append(kinds, k)
		}
	}
	want := []changeKind{changeTableCreated, changeInsert, changeMerge, changeReplace, changeDelete, changeTablePolicies, changeTableDeleted}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("changes = %v, want %v", kinds, want)
	}
}

type recorder struct {
	mu    sync.Mutex
	kinds []changeKind
	none  bool // it wants no entity write
}

func (r *recorder) wants(*liveTable) bool { return !r.none }

// TestContributorWants: the changes of an entity write are handed to the
// contributors that want them alone (the index maintainer wants the
// tables that have indexes only); table changes go to every one.
func TestContributorWants(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{none: true}
	a := openContrib(t, []storage.Engine{memory.New(nil)}, rec)[0]
	a.contributors = append(a.contributors, indexMaintainer{})
	plain, err := a.CreateTable(ctx, "Plain")
	if err != nil {
		t.Fatal(err)
	}
	indexed, err := a.CreateTable(ctx, "Indexed")
	if err != nil {
		t.Fatal(err)
	}
	if err := indexed.CreateIndex(ctx, "byA", "A"); err != nil {
		t.Fatal(err)
	}
	e := Entity{PartitionKey: "p", RowKey: "r", Properties: Properties{"A": Int32Value(1)}}
	if _, err := plain.Insert(ctx, e); err != nil {
		t.Fatal(err)
	}
	if _, err := indexed.Insert(ctx, e); err != nil {
		t.Fatal(err)
	}
	var kinds []changeKind
	for _, k := range rec.kinds {
		if k != changeClockMark {
			kinds = append(kinds, k)
		}
	}
	// Plain's insert reached no contributor; Indexed's reached the index
	// maintainer alone, which wanted it and wrote its entry, and not the
	// recorder, which wants none.
	if want := []changeKind{changeTableCreated, changeTableCreated}; fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("changes = %v, want %v", kinds, want)
	}
	prefix := keyenc.AppendIndexTable(nil, a.cat.Load().byName["indexed"].id)
	it, err := a.eng.NewIter(&storage.IterOptions{LowerBound: prefix, UpperBound: keyenc.PrefixEnd(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	it.Close()
	if n != 1 {
		t.Errorf("Indexed's index holds %d entries, want 1", n)
	}
}

func (r *recorder) contribute(c *commitContext) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range c.changes {
		r.kinds = append(r.kinds, ch.kind)
	}
	return nil
}

// TestContributorsFit: a contributorSet holds every contributor an
// account may have, with the feed on or off, on an engine that nests
// writes or not.
func TestContributorsFit(t *testing.T) {
	if n := bits.OnesCount64(uint64(allContributors)); n != maxContributors {
		t.Fatalf("allContributors holds %d, maxContributors is %d", n, maxContributors)
	}
	for _, feed := range []*FeedOptions{nil, {}} {
		for name, eng := range map[string]func() storage.Engine{
			"memory": func() storage.Engine { return memory.New(nil) },
			"pebble": func() storage.Engine {
				e, err := pebble.Open(t.TempDir(), nil)
				if err != nil {
					t.Fatal(err)
				}
				return e
			},
		} {
			a, err := Open(&Options{Engine: eng(), Feed: feed})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(a.contributors); n == 0 || n > maxContributors {
				t.Errorf("%s, feed %v: %d contributors, at most %d fit", name, feed != nil, n, maxContributors)
			}
			a.Close()
		}
	}
}
