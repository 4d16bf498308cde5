package storage

import "errors"

// Checkpointer is implemented by engines that can save their whole
// contents and later return to them cheaply, such as the in-memory engine,
// where both are O(1). Callers find it by type assertion; for other
// engines, a Snapshot read back into a Batch does the same in O(n).
type Checkpointer interface {
	// Checkpoint saves the engine's current contents: every batch
	// committed before the call, none committed after.
	Checkpoint() (Checkpoint, error)
	// Restore replaces the engine's contents with the checkpoint's, as
	// one atomic commit: a read sees the contents before or after, never
	// a mix. Snapshots and iterators opened before Restore keep reading
	// what they saw. A checkpoint may be restored any number of times,
	// but only into the engine that made it; another engine's checkpoint
	// fails with ErrForeignCheckpoint, a released one with ErrClosed.
	Restore(Checkpoint) error
}

// Checkpoint is an engine's saved contents. Release frees it; restoring a
// released checkpoint fails with ErrClosed.
type Checkpoint interface {
	Release()
}

// ErrForeignCheckpoint is returned by Checkpointer.Restore for a
// checkpoint made by another engine.
var ErrForeignCheckpoint = errors.New("storage: checkpoint of another engine")
