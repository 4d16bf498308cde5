package localtable

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// The store's format version: how its keys and records are laid out
// (internal/keyenc, record.go). A store records the version that wrote
// it; Open refuses a store of a version it does not know (a newer
// localtable's), rather than misread it or write beside it in its own
// layout. A change of the layout that an older localtable would misread
// raises formatVersion.
//
// Stores written before the version was recorded have no format key:
// their layout is version 1's, and they are read as version 1 (and the
// key written, see recordFormat).
const formatVersion = 1

// metaFormat is the key of the store's format version: 8 bytes, big
// endian, as the other metadata.
var metaFormat = keyenc.MetaKey("format")

// ErrUnknownFormat is returned by Open over a store written in a format
// this version of localtable does not know, by a newer version: open it
// with that version (or a later one).
var ErrUnknownFormat = errors.New("localtable: the store's format is unknown to this version of localtable")

// encodeFormat returns the stored form of format version v.
func encodeFormat(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// checkFormat reads the format version of the store r holds. It returns
// recorded false, and no error, for a store without one (a store written
// before versions were recorded, or an empty one): its format is version
// 1. A version other than formatVersion, or one that does not decode, is
// an error wrapping ErrUnknownFormat that names it.
func checkFormat(r storage.Reader) (recorded bool, err error) {
	v, c, err := r.Get(metaFormat)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer c.Close()
	if len(v) != 8 {
		return false, fmt.Errorf("%w: its format version (key %q) is %x, not 8 bytes", ErrUnknownFormat, metaFormat, v)
	}
	if got := binary.BigEndian.Uint64(v); got != formatVersion {
		return false, fmt.Errorf("%w: the store is of format version %d; this localtable reads version %d", ErrUnknownFormat, got, formatVersion)
	}
	return true, nil
}

// formatWrite returns the write that records the format version, for a
// batch that creates a store or is its first write since checkFormat
// found none recorded.
func formatWrite() (key, value []byte) { return metaFormat, encodeFormat(formatVersion) }

// recordFormat writes the format version into eng's store, which
// checkFormat found without one. On an engine other processes share
// (storage.VersionedEngine) it writes only if the key is still absent, so
// that it never overwrites a version another process recorded since; the
// version it then finds is checked again.
func recordFormat(ctx context.Context, eng storage.Engine) error {
	b := eng.NewBatch()
	defer b.Close()
	k, v := formatWrite()
	if err := b.Set(k, v); err != nil {
		return err
	}
	ve, ok := eng.(storage.VersionedEngine)
	if !ok {
		return b.Commit(true)
	}
	err := ve.CommitIf(ctx, b, []storage.Condition{{Key: k, Version: storage.NoVersion}})
	if errors.Is(err, storage.ErrConditionFailed) {
		_, err = checkFormat(eng)
	}
	return err
}
