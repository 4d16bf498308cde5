package main

import (
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// openPebble opens a pebble engine in dir.
func openPebble(dir string) (storage.Engine, error) {
	return pebble.Open(dir, nil)
}
