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
//
// Version 2 is version 1 with entity records of version 2 (record.go)
// and, on engines whose reads are not stable, compressed change feed
// records of version 3 (feedlog.go) written from then on: a version 1
// store is read as it is, and Open
// raises its recorded version to 2, so that a localtable that predates
// version 2 refuses the store rather than misread its new records.
//
// Version 3 is version 2 with change feed records of version 4, which
// name their entities instead of copying them, and the feed's images
// beside them (feedimage.go), on engines whose reads are not stable that
// the account owns alone (pebble): Open raises a store of version 1 or 2
// to 3 likewise.
const formatVersion = 3

// metaFormat is the key of the store's format version: 8 bytes, big
// endian, as the other metadata.
var metaFormat = keyenc.MetaKey("format")

// ErrUnknownFormat is returned by Open over a store written in a format
// this version of localtable does not know, by a newer version: open it
// with that version (or a later one).
var ErrUnknownFormat = errors.New("localtable: the store's format is unknown to this version of localtable")

// encodeFormat returns the stored form of format version v.
func encodeFormat(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// planFormat decides, from the format version stored (found false: none),
// what opening the store writes: a store without one (written before
// versions were recorded, or empty) or of version 1 is read as it is, and
// gets formatVersion recorded; a recorded version above formatVersion,
// or one that does not decode, is an error wrapping ErrUnknownFormat that
// names it.
func planFormat(stored []byte, found bool) ([]write, error) {
	raise := []write{{key: metaFormat, value: encodeFormat(formatVersion)}}
	if !found {
		return raise, nil
	}
	if len(stored) != 8 {
		return nil, fmt.Errorf("%w: its format version (key %q) is %x, not 8 bytes", ErrUnknownFormat, metaFormat, stored)
	}
	switch got := binary.BigEndian.Uint64(stored); got {
	case formatVersion:
		return nil, nil
	case 1, 2:
		return raise, nil
	default:
		return nil, fmt.Errorf("%w: the store is of format version %d; this localtable reads versions 1 to %d", ErrUnknownFormat, got, formatVersion)
	}
}

// checkFormat checks the store's format version at Open, and records it
// in a store without one (or raises an older one), through the write
// pipeline, unless the account is read-only: on a shared engine
// only if it is still absent, so that it never overwrites a version
// another process recorded since (that one is then checked).
func (a *Account) checkFormat(ctx context.Context) error {
	if a.readOnly {
		// Checked, not recorded: the store stays as it is.
		stored, c, err := a.eng.Get(metaFormat)
		found := err == nil
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		_, err = planFormat(stored, found)
		if c != nil {
			c.Close()
		}
		return err
	}
	return a.update(ctx, "recording the store's format", maxConflictRetries, [][]byte{metaFormat}, func(rs *readSet) (*metaPlan, error) {
		ws, err := planFormat(rs.vals[0], rs.found[0])
		if err != nil || ws == nil {
			return nil, err
		}
		return &metaPlan{writes: ws}, nil
	})
}
