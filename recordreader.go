package localtable

import (
	"unsafe"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// PropertyReader reads the properties of one entity by name, as
// (*Entity).Property does: PartitionKey and RowKey as Edm.String,
// Timestamp as Edm.DateTime, and the custom properties. *Entity
// implements it.
type PropertyReader interface {
	Property(name string) (Value, bool)
}

// ReaderPredicate is a Predicate that can also match an entity read
// through a PropertyReader. Package filter's filters implement it.
//
// A query whose Predicate implements ReaderPredicate calls MatchReader,
// not Match, on each entity it scans, with a reader over the entity's
// stored record: the reader finds the properties asked for in the record's
// bytes, without decoding the entity, so an entity the predicate rejects
// costs no allocation. Only the entities it accepts are decoded.
//
// MatchReader must agree with Match. The reader, and the String, Binary
// and Guid Values it returns, are valid only during the call (they may
// share memory that the engine reuses for the next entity): MatchReader
// must not retain them.
type ReaderPredicate interface {
	Predicate
	MatchReader(r PropertyReader) bool
}

// RangeReaderPredicate is a ReaderPredicate that can leave out, for the
// entities of its own key ranges, the conditions those ranges already
// decide: "PartitionKey eq 'p' and Age gt 50" need not compare the
// PartitionKey of an entity read from partition p. Package filter's
// filters implement it.
//
// A query that scans the ranges KeyRanges returns (a scan of the table,
// not a read through an index) calls MatchInRanges instead of MatchReader
// on each entity it reads from them. MatchInRanges must agree with
// MatchReader for every entity whose keys lie within those ranges (any
// entity, when KeyRanges reports ok false); for another entity its result
// is unspecified. The reader is valid only
// during the call, as for MatchReader.
type RangeReaderPredicate interface {
	ReaderPredicate
	MatchInRanges(r PropertyReader) bool
}

// bytesView returns b as a string without copying. The string is valid
// only while b is unchanged.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// findProperty finds the named custom property in a record, walking it
// with a recordWalker, and returns its value, whose String, Binary and
// Guid payloads are views of rec. Names are sorted in the record, so the
// walk stops at the first name at or past the one sought: the properties
// after it are not read, nor checked. A corruption met before is
// errCorruptRecord.
func findProperty(rec []byte, name string) (Value, bool, error) {
	var w recordWalker
	if _, err := w.init(rec, true); err != nil {
		return Value{}, false, err
	}
	_, kind, at, found, ok := w.find(name, noHint)
	if !ok || !found {
		return Value{}, false, w.err
	}
	return w.value(kind, at), true, nil
}

// stableReads reports whether eng's reads are stable (see
// storage.StableReader): then entities decoded from them may hold views of
// their bytes instead of copies.
func stableReads(eng storage.Engine) bool {
	s, ok := eng.(storage.StableReader)
	return ok && s.StableReads()
}

// decodeEntityKey returns the PartitionKey and RowKey of an entity key: a
// key without escapes as views of key's bytes, valid while they are
// unchanged (see storage.StableReader); another decoded in one
// allocation.
func decodeEntityKey(key []byte) (pk, rk string, err error) {
	if len(key) >= keyenc.TablePrefixLen && key[0] == keyenc.PrefixEntity {
		if p, rest, ok := keyenc.CutPlain(key[keyenc.TablePrefixLen:]); ok {
			if r, rest, ok := keyenc.CutPlain(rest); ok && len(rest) == 0 {
				return bytesView(p), bytesView(r), nil
			}
		}
	}
	buf, n, err := appendDecodedKeys(make([]byte, 0, len(key)), key)
	if err != nil {
		return "", "", err
	}
	// buf is not changed after this, nor referenced elsewhere.
	s := bytesView(buf)
	return s[:n], s[n:], nil
}

// appendDecodedKeys appends the PartitionKey and RowKey of an entity key,
// decoded, to buf, and returns it with the length at which the RowKey
// starts.
func appendDecodedKeys(buf, key []byte) ([]byte, int, error) {
	if len(key) < keyenc.TablePrefixLen || key[0] != keyenc.PrefixEntity {
		return buf, 0, keyenc.ErrCorrupt
	}
	buf, rest, err := keyenc.AppendDecoded(buf, key[keyenc.TablePrefixLen:])
	n := len(buf)
	if err == nil {
		buf, rest, err = keyenc.AppendDecoded(buf, rest)
	}
	if err == nil && len(rest) != 0 {
		err = keyenc.ErrCorrupt
	}
	return buf, n, err
}

// entityDecoder decodes the entities of one scan: views of a stable
// engine's reads, and one ETag for consecutive entities of one Timestamp
// (the entities of a transaction share it).
type entityDecoder struct {
	sel   selection
	view  bool
	ticks int64
	tag   ETag
}

func (d *entityDecoder) decode(key, val []byte) (Entity, error) {
	if !d.view {
		return d.decodeCopy(key, val)
	}
	pk, rk, err := decodeEntityKey(key)
	if err != nil {
		return Entity{}, err
	}
	ticks, props, err := decodeProps(val, d.sel, true)
	if err != nil {
		return Entity{}, err
	}
	if d.tag == "" || ticks != d.ticks {
		d.ticks, d.tag = ticks, etagOf(ticks)
	}
	return Entity{PartitionKey: pk, RowKey: rk, Timestamp: TicksToTime(ticks), ETag: d.tag, Properties: props}, nil
}

// decodeCopy is decode for an engine whose reads are not stable: the
// keys, the strings of the properties and the ETag (unless the last one
// serves) are views of one copy, made in one allocation rather than three.
func (d *entityDecoder) decodeCopy(key, val []byte) (Entity, error) {
	// The walker reads views of val; its strings are made views of the
	// copy below, before any is read.
	var w recordWalker
	ticks, err := w.init(val, true)
	if err != nil {
		return Entity{}, err
	}
	newTag := d.tag == "" || ticks != d.ticks
	size := len(key) + len(w.b) // the keys decoded are no longer than encoded
	if newTag {
		size += etagLen
	}
	buf, n, err := appendDecodedKeys(make([]byte, 0, size), key)
	if err != nil {
		return Entity{}, err
	}
	nk := len(buf)
	buf = append(buf, w.b...)
	nr := len(buf)
	if newTag {
		buf = appendETag(buf, ticks)
	}
	// buf is not changed after this, nor referenced elsewhere.
	s := bytesView(buf)
	w.s = s[nk:nr]
	props := make(Properties, min(w.n, 16))
	if err := w.collect(d.sel, props); err != nil {
		return Entity{}, err
	}
	if newTag {
		d.ticks, d.tag = ticks, ETag(s[nr:])
	}
	return Entity{PartitionKey: s[:n], RowKey: s[n:nk], Timestamp: TicksToTime(ticks), ETag: d.tag, Properties: props}, nil
}
