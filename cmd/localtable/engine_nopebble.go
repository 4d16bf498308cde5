//go:build !pebble

package main

import (
	"errors"

	"github.com/localtable/localtable/storage"
)

// openPebble is unavailable until package storage/pebble is merged; build
// with -tags pebble once it is.
func openPebble(dir string) (storage.Engine, error) {
	return nil, errors.New("--location needs the pebble engine (package storage/pebble), which this build does not include")
}
