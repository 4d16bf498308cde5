package memory

import (
	"slices"
	"sync/atomic"

	"github.com/localtable/localtable/storage"
)

// memCheckpoint is a storage.Checkpoint of the in-memory engine: a private copy of
// the writer tree, and the writer's logs. It shares every node with the engine; copy-on-write
// keeps both unchanged by later commits. It is never published, so only
// the engine, under its writer mutex, ever calls Copy on it. Its logs are
// copies of the writer's, whose items the engine never writes (see
// log.go).
type memCheckpoint struct {
	m        *memEngine
	t        *tree
	logs     []logState
	released atomic.Bool
}

// Release implements storage.Checkpoint.
func (c *memCheckpoint) Release() { c.released.Store(true) }

// Checkpoint implements storage.Checkpointer in O(1).
func (m *memEngine) Checkpoint() (storage.Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.w == nil {
		return nil, storage.ErrClosed
	}
	return &memCheckpoint{m: m, t: m.w.Copy(), logs: slices.Clone(m.wlogs)}, nil
}

// Restore implements Checkpointer in O(1): the writer tree becomes a copy
// of the checkpoint's, which the next reader publishes.
func (m *memEngine) Restore(cp storage.Checkpoint) error {
	c, ok := cp.(*memCheckpoint)
	if !ok || c.m != m {
		return storage.ErrForeignCheckpoint
	}
	if c.released.Load() {
		return storage.ErrClosed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.w == nil {
		return storage.ErrClosed
	}
	m.w = c.t.Copy()
	for j, l := range c.logs {
		// Shared: the writer's next append copies its last chunk,
		// instead of writing past the checkpoint's end, where views
		// taken since it may see items.
		m.wlogs[j] = logState{items: l.items, cow: true, off: l.off}
	}
	m.seq.Add(1)
	m.staleGets.Store(0)
	return nil
}
