package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// openPebble opens a pebble engine in dir. noSync skips the fsync of each
// commit (bulk loads, which sync at their checkpoints).
func openPebble(dir string, noSync bool) (storage.Engine, error) {
	db, err := pebble.Open(dir, &pebble.Options{NoSync: noSync})
	if errors.Is(err, pebble.ErrInUse) {
		return nil, fmt.Errorf("%w (is a server running on it? then use --endpoint or --connection-string)", err)
	}
	if err != nil {
		return nil, err
	}
	return db, nil
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
