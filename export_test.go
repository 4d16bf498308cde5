package localtable

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
