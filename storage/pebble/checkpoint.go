package pebble

import (
	"fmt"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/localtable/localtable/storage"
)

// Checkpoint writes a consistent copy of the database, as of the call, to
// dir, which must not exist: Pebble's checkpoint, which hard-links the
// immutable table files where the file system allows and copies the rest,
// after flushing the write-ahead log. The copy is a database of its own:
// Open it in place, or move it. Writes may go on during the checkpoint.
func (d *DB) Checkpoint(dir string) error {
	if d.closed.Load() {
		return storage.ErrClosed
	}
	if err := d.db.Checkpoint(dir, pdb.WithFlushedWAL()); err != nil {
		return fmt.Errorf("storage/pebble: checkpoint %s: %w", dir, err)
	}
	return nil
}
