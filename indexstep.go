package localtable

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/localtable/localtable/internal/keyenc"
)

// stepDDL runs a step of an index's build: a change of the table's
// catalog record (the build's cursor, or the index ready) that does not
// change what its writes maintain, with the entries of the entities of
// keys, read again in the step. It runs under Account.ddl, like every
// catalog write, with the table's lock held shared, as an entity write
// holds it, and the partition locks of keys' entities: so the writes of
// this process into those partitions wait for the step (none may change
// an entity between the step's read of it and its commit), and the writes
// into the table's other partitions go on. (On a shared engine the step's
// commit is also conditioned on every key it read.)
func (t *Table) stepDDL(ctx context.Context, what string, plan func(rs *readSet, lt *liveTable) (*metaPlan, error), keys [][]byte) error {
	a := t.a
	lower := strings.ToLower(t.name)
	a.ddl.Lock()
	defer a.ddl.Unlock()
	lt, err := a.strategy.current(ctx, t.name)
	if err != nil {
		return err
	}
	lt.mu.RLock()
	defer lt.mu.RUnlock()
	if lt.dropped.Load() {
		return errDropped(t.name)
	}
	// The partitions' locks, each once (partitions share locks). Entity
	// writes take one each, and no other holder of several runs while
	// Account.ddl is held: any order is free of deadlocks.
	var locks []*sync.Mutex
	for _, k := range keys {
		pk, _, err := keyenc.DecodeEntityKey(k)
		if err != nil {
			return err
		}
		if m := a.partition(lt.id, pk); !slices.Contains(locks, m) {
			locks = append(locks, m)
			m.Lock()
		}
	}
	defer func() {
		for _, m := range locks {
			m.Unlock()
		}
	}()
	all := append([][]byte{keyenc.CatalogKey(lower)}, keys...)
	return a.update(ctx, what, maxConflictRetries, all, func(rs *readSet) (*metaPlan, error) {
		if !rs.found[0] {
			a.forget(lower, nil) // on a shared engine, another process deleted it
		} else if id, ok := tableRecordID(rs.vals[0]); ok && id != lt.id {
			return nil, errConflictTable(t.name)
		}
		if h := a.beforeCatalogCommit; h != nil {
			h("index-step", t.name)
		}
		return plan(rs, lt)
	})
}
