package localtable

import (
	"time"

	"github.com/localtable/localtable/storage"
)

// SetCountScanLimit sets the entities one snapshot of Count reads, for a
// test, and returns a function that restores it.
func SetCountScanLimit(n int) (restore func()) {
	old := countScanLimit
	countScanLimit = n
	return func() { countScanLimit = old }
}

// SetPartitionBatch sets the PartitionKeys Partitions reads from one
// snapshot, for a test, and returns a function that restores it.
func SetPartitionBatch(n int) (restore func()) {
	old := partitionBatch
	partitionBatch = n
	return func() { partitionBatch = old }
}

// SetBeforeCommitHook makes every entity write of a (single or
// transaction) call h just before it commits, after its reads and checks,
// with the locks it holds held. Set it before the writes it should see.
func SetBeforeCommitHook(a *Account, h func(table string, actions []Action)) {
	a.beforeCommit = h
}

// DecodeCatalogRecord decodes a table's catalog record into its ID and
// name.
func DecodeCatalogRecord(v []byte) (id uint64, name string, err error) {
	r, err := decodeTableRecord(v)
	return r.ID, r.Name, err
}

// SetBeforeCatalogCommitHook makes CreateTable and DeleteTable call h
// just before they commit, with the locks they hold held (op "create" or
// "delete"), and DeleteTable call it after its commit, before the catalog
// without the table is published (op "delete-committed").
func SetBeforeCatalogCommitHook(a *Account, h func(op, table string)) {
	a.beforeCatalogCommit = h
}

// EngineOf returns the account's engine, for tests that read or damage its
// records directly.
func EngineOf(a *Account) storage.Engine { return a.eng }

// SetFeedPoll sets how often a watcher on a shared engine polls for other
// processes' commits when the engine does not tell it of them, and
// returns a function that restores it.
func SetFeedPoll(d time.Duration) (restore func()) {
	old := feedPollNS.Swap(int64(d))
	return func() { feedPollNS.Store(old) }
}
