package main

import "fmt"

// store is one embedded system doing the workloads: localtable on either
// engine, the bare engines, and the peers an embedded user would pick
// otherwise. Reads materialize what they read (an Entity, a Go struct, or
// for the bare engines a copy of the bytes), but for the hot-path views
// (rowStore, reuseStore: embedded.go's hotSystems), which read in place
// or into a reused buffer; writes are durable on the disk-backed stores
// (fsync before they return).
type store interface {
	// name is the system's column name.
	name() string
	// filters reports whether the store evaluates the residual filters.
	// The bare engines cannot (they hold opaque bytes): their filter
	// workloads read and copy every entity in the range instead, which is
	// the floor of what any filter costs.
	filters() bool
	// get reads one entity.
	get(pk, rk string) error
	// insert adds the template entity under new keys, failing if they
	// exist.
	insert(pk, rk string) error
	// tx100 inserts the template entity under each of rks in partition pk,
	// atomically.
	tx100(pk string, rks []string) error
	// remove deletes the entities rks of partition pk, which exist: the
	// write workloads remove what they inserted, untimed, so that every
	// phase sees the data set at its stated size.
	remove(pk string, rks []string) error
	// rangeQuery returns the entities of partition pk with lo <= RowKey <
	// hi, in key order, and their count.
	rangeQuery(pk, lo, hi string) (int, error)
	// partitionFilter returns partition pk's entities with Age > 50.
	partitionFilter(pk string) (int, error)
	// fullFilter returns the table's entities with Score < 1.0.
	fullFilter() (int, error)
	// close releases the store.
	close() error
}

// updater is a store that updates under optimistic concurrency: update
// reads entity (pk, rk) with its version, adds one to Visits and writes it
// back only if the version is unchanged, retrying until it succeeds. It is
// safe for concurrent use; it returns the retries.
type updater interface {
	update(pk, rk string) (conflicts int, err error)
}

// reopener is a store kept on disk: reopen closes it, opens it again and
// reads entity (pk, rk), the time until it can serve.
type reopener interface {
	reopen(pk, rk string) error
}

// sink keeps copies alive so that the compiler cannot drop them.
//
//lint:ignore U1000 written, never read, on purpose
var sink []byte

// errCount is a workload's result count that differs from the expected.
func errCount(what string, got, want int) error {
	return fmt.Errorf("%s: %d entities, want %d", what, got, want)
}
