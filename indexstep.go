package localtable

import (
	"context"
	"slices"
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
	return t.catalogDDL(ctx, what, true, plan, keys)
}

// lockPartitions locks the partitions of the entities of keys in table
// tableID, each once (partitions share locks), and returns their unlock.
// Entity writes take one each, and no other holder of several runs while
// Account.ddl is held: any order is free of deadlocks.
func (a *Account) lockPartitions(tableID uint64, keys [][]byte) (func(), error) {
	var locks []*sync.Mutex
	unlock := func() {
		for _, m := range locks {
			m.Unlock()
		}
	}
	for _, k := range keys {
		pk, _, err := keyenc.DecodeEntityKey(k)
		if err != nil {
			unlock()
			return nil, err
		}
		if m := a.partition(tableID, pk); !slices.Contains(locks, m) {
			locks = append(locks, m)
			m.Lock()
		}
	}
	return unlock, nil
}
