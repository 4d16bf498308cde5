// Package keyenc encodes localtable's engine keys so that their byte order
// equals the Table service's order.
//
// # Layout
//
//	'c' + lower(table name)                      → table catalog record
//	'e' + table ID (8 bytes, big endian) + S(PK) + S(RK) → entity record
//	'f' + revision (8 bytes, big endian)         → change feed record
//	'i' + table ID (8) + index ID (4, big endian) + typed value(s) + S(PK) + S(RK)
//	                                             → secondary index entry (empty value)
//	'm' + name                                   → account metadata
//
// Table IDs are assigned at creation and never reused, so deleting a table
// is one range deletion of its ID's prefix and a re-created table of the same
// name starts empty.
//
// # String order
//
// The service orders strings ordinally by UTF-16 code unit. UTF-8 byte order
// is code point order, which differs from UTF-16 order only for characters
// above U+FFFF: in UTF-16 they are surrogate pairs (0xD800–0xDFFF) and sort
// before U+E000–U+FFFF, while in code point order they sort after. S(s)
// therefore writes characters up to U+FFFF as their UTF-8 bytes, and a
// character above U+FFFF as the four bytes
//
//	0xED, 0xA0 + (c−0x10000)>>16, (c−0x10000)>>8 & 0xFF, (c−0x10000) & 0xFF
//
// which sort after U+D7FF (0xED 0x80–0x9F …) and before U+E000 (0xEE …),
// exactly where the surrogates put them. Valid UTF-8 never holds 0xED
// followed by 0xA0–0xBF (those would be surrogates), so the code stays
// prefix-free. Then every 0x00 byte is escaped as 0x00 0xFF and the string
// is terminated by 0x00 0x01, so that a string sorts before its extensions
// and (PK, RK) pairs sort by PK first.
package keyenc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"unicode/utf8"
)

// Key prefixes.
const (
	PrefixCatalog = 'c'
	PrefixEntity  = 'e'
	PrefixFeed    = 'f'
	// PrefixFeedImage holds what the change feed keeps beside its records
	// on an engine where they name entities instead of copying them
	// (FeedImageKey, FeedImageGCKey).
	PrefixFeedImage = 'g'
	PrefixIndex     = 'i'
	PrefixMeta      = 'm'
)

// LogPrefixes returns the prefixes of the keys written as logs, in
// revision order (a big-endian revision follows the prefix) and deleted
// from the oldest: the change feed's records, and its images' markers
// (FeedImageGCKey). An account's memory engine keeps them as logs
// (memory.Options.Logs); the pebble engine cuts their table files in
// segments of revisions.
func LogPrefixes() [][]byte { return [][]byte{{PrefixFeed}, {PrefixFeedImage, feedImageGC}} }

// ErrCorrupt is returned when decoding bytes that no encoder produced.
var ErrCorrupt = errors.New("keyenc: corrupt key")

// AppendString appends S(s) to dst. s should be valid UTF-8; invalid bytes
// are written as they are.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0:
			dst = append(dst, 0, 0xFF)
			i++
		case c < 0xF0:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r < 0x10000 { // invalid byte (RuneError, n == 1) or BMP
				dst = append(dst, c)
				i++
				continue
			}
			v := uint32(r - 0x10000)
			dst = append(dst, 0xED, 0xA0+byte(v>>16))
			dst = appendEscaped(dst, byte(v>>8))
			dst = appendEscaped(dst, byte(v))
			i += n
		}
	}
	return append(dst, 0, 1)
}

func appendEscaped(dst []byte, b byte) []byte {
	if b == 0 {
		return append(dst, 0, 0xFF)
	}
	return append(dst, b)
}

// DecodeString decodes one S(s) from the front of b and returns s and the
// bytes after it.
func DecodeString(b []byte) (string, []byte, error) {
	out, rest, err := AppendDecoded(make([]byte, 0, len(b)), b)
	if err != nil {
		return "", nil, err
	}
	return string(out), rest, nil
}

// CutPlain returns the bytes of s when S(s), at the front of b, holds no
// escape, so that its bytes before the terminator are s itself, and the
// bytes of b after S(s). ok is false when S(s) has escapes or no
// terminator: decode it with AppendDecoded.
func CutPlain(b []byte) (s, rest []byte, ok bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 || i+1 >= len(b) || b[i+1] != 1 {
		return nil, nil, false
	}
	// Valid UTF-8 has 0xED only before 0x80-0x9F; 0xED 0xA0-0xAF begins
	// an encoded character above U+FFFF. A character above U+FFFF as its
	// raw UTF-8 (0xF0-0xF4 …) is a form the encoder never writes: leave it
	// to AppendDecoded, which refuses it.
	for j := 0; j < i; j++ {
		// Skip 8 bytes at a time while none is 0xED or above: the sum sets
		// a byte's high bit when its low 7 bits are 0x6D or more, and the
		// byte's own high bit must be set too.
		for j+8 <= i {
			x := binary.LittleEndian.Uint64(b[j:])
			if (x&0x7F7F7F7F7F7F7F7F+0x1313131313131313)&x&0x8080808080808080 != 0 {
				break
			}
			j += 8
		}
		if j >= i {
			break
		}
		c := b[j]
		if c < 0xED {
			continue
		}
		if c == 0xED {
			if j+1 < i && b[j+1] >= 0xA0 && b[j+1] <= 0xAF {
				return nil, nil, false
			}
		} else if c >= 0xF0 && rawSupplementary(b[j:i]) {
			return nil, nil, false
		}
	}
	return b[:i], b[i+2:], true
}

// rawSupplementary reports whether b starts with a character above U+FFFF
// in plain UTF-8, which AppendString never writes (it writes such a
// character as 0xED 0xA0+…, to sort it as the service does). Decoding it
// would give a key that encodes to other bytes: a row that Get and Delete
// cannot reach and that a later insert of the same key would duplicate.
func rawSupplementary(b []byte) bool {
	r, _ := utf8.DecodeRune(b)
	return r >= 0x10000
}

// AppendDecoded decodes one S(s) from the front of b, appends s to dst, and
// returns the extended dst and the bytes of b after S(s). It refuses
// (ErrCorrupt) any form AppendString does not write, so that what it
// decodes re-encodes to the same bytes.
func AppendDecoded(dst, b []byte) (out, rest []byte, err error) {
	i := 0
	next := func() (byte, bool, error) { // byte, isTerminator
		if i >= len(b) {
			return 0, false, ErrCorrupt
		}
		c := b[i]
		i++
		if c != 0 {
			return c, false, nil
		}
		if i >= len(b) {
			return 0, false, ErrCorrupt
		}
		e := b[i]
		i++
		switch e {
		case 0xFF:
			return 0, false, nil
		case 0x01:
			return 0, true, nil
		}
		return 0, false, ErrCorrupt
	}
	for {
		c, term, err := next()
		if err != nil {
			return dst, nil, err
		}
		if term {
			return dst, b[i:], nil
		}
		if c == 0xED && i < len(b) && b[i] >= 0xA0 && b[i] <= 0xAF {
			hi := b[i] - 0xA0
			i++
			mid, t1, err := next()
			if err != nil || t1 {
				return dst, nil, ErrCorrupt
			}
			lo, t2, err := next()
			if err != nil || t2 {
				return dst, nil, ErrCorrupt
			}
			r := rune(uint32(hi)<<16|uint32(mid)<<8|uint32(lo)) + 0x10000
			dst = utf8.AppendRune(dst, r)
			continue
		}
		if c >= 0xF0 && rawSupplementary(b[i-1:]) {
			return dst, nil, ErrCorrupt
		}
		dst = append(dst, c)
	}
}

// AppendTableID appends the entity prefix of a table: 'e' + id.
func AppendTableID(dst []byte, id uint64) []byte {
	dst = append(dst, PrefixEntity)
	return binary.BigEndian.AppendUint64(dst, id)
}

// TablePrefixLen is the length of AppendTableID's output.
const TablePrefixLen = 9

// AppendEntityKey appends the engine key of entity (pk, rk) of table id.
func AppendEntityKey(dst []byte, id uint64, pk, rk string) []byte {
	// Room for the common case: keys without escapes.
	dst = slices.Grow(dst, TablePrefixLen+len(pk)+len(rk)+4)
	dst = AppendTableID(dst, id)
	dst = AppendString(dst, pk)
	return AppendString(dst, rk)
}

// DecodeEntityKey returns the PartitionKey and RowKey of an entity key.
func DecodeEntityKey(key []byte) (pk, rk string, err error) {
	if len(key) < TablePrefixLen || key[0] != PrefixEntity {
		return "", "", ErrCorrupt
	}
	return DecodePair(key[TablePrefixLen:])
}

// DecodePair decodes S(pk) S(rk) with nothing after it.
func DecodePair(b []byte) (pk, rk string, err error) {
	pk, rest, err := DecodeString(b)
	if err != nil {
		return "", "", err
	}
	rk, rest, err = DecodeString(rest)
	if err != nil {
		return "", "", err
	}
	if len(rest) != 0 {
		return "", "", ErrCorrupt
	}
	return pk, rk, nil
}

// CatalogKey returns the catalog key of a table; name must already be
// lower-cased.
func CatalogKey(lowerName string) []byte {
	return append([]byte{PrefixCatalog}, lowerName...)
}

// FeedKey returns the key of the change feed's record that starts at
// revision rev: the prefix and rev, big endian, so records sort by
// revision.
func FeedKey(rev uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{PrefixFeed}, rev)
}

// The two kinds of key under PrefixFeedImage.
const (
	feedImage   = 1
	feedImageGC = 2
)

// FeedImageLen is the length of FeedImageKey's output less its entity
// key's.
const FeedImageLen = 2 + 8

// FeedImageKey appends to dst the key of the image of the entity under
// entityKey as it was at ticks: the prefix, its kind, the entity key, then
// ticks, big endian (a key of fixed length after one of any length: two
// images' keys are equal only if both parts are).
func FeedImageKey(dst, entityKey []byte, ticks int64) []byte {
	dst = append(dst, PrefixFeedImage, feedImage)
	dst = append(dst, entityKey...)
	return binary.BigEndian.AppendUint64(dst, uint64(ticks))
}

// FeedImageGCKey appends to dst the key that says the image under
// imageKey (FeedImageKey's) may go once the feed no longer keeps revision
// rev: the prefix, its kind, rev, big endian, then the image key without
// its own prefix and kind, so the markers sort by revision.
func FeedImageGCKey(dst []byte, rev uint64, imageKey []byte) []byte {
	dst = append(dst, PrefixFeedImage, feedImageGC)
	dst = binary.BigEndian.AppendUint64(dst, rev)
	return append(dst, imageKey[2:]...)
}

// FeedImageGCPrefix returns the start of the markers of revision rev and
// after (FeedImageGCKey).
func FeedImageGCPrefix(rev uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{PrefixFeedImage, feedImageGC}, rev)
}

// CutFeedImageGC returns the image key (FeedImageKey) that a marker under
// key names; ok is false if key is no marker.
func CutFeedImageGC(dst, key []byte) (image []byte, ok bool) {
	if len(key) < 2+8+1+8 || key[0] != PrefixFeedImage || key[1] != feedImageGC {
		return nil, false
	}
	return append(append(dst, PrefixFeedImage, feedImage), key[10:]...), true
}

// FeedImageGCRev returns the revision of a marker's key (FeedImageGCKey);
// ok is false if key is none.
func FeedImageGCRev(key []byte) (rev uint64, ok bool) {
	if len(key) < 2+8+1+8 || key[0] != PrefixFeedImage || key[1] != feedImageGC {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[2:10]), true
}

// FeedImageGCEnd is the end of the markers' keys (FeedImageGCKey): every
// marker is below it.
func FeedImageGCEnd() []byte { return []byte{PrefixFeedImage, feedImageGC + 1} }

// CutFeedImage returns the entity key and ticks of an image key
// (FeedImageKey); ok is false if key is none.
func CutFeedImage(key []byte) (entityKey []byte, ticks int64, ok bool) {
	if len(key) < FeedImageLen+1 || key[0] != PrefixFeedImage || key[1] != feedImage {
		return nil, 0, false
	}
	n := len(key) - 8
	return key[2:n], int64(binary.BigEndian.Uint64(key[n:])), true
}

// MetaKey returns the key of an account metadata record.
func MetaKey(name string) []byte {
	return append([]byte{PrefixMeta}, name...)
}

// PrefixEnd returns the smallest key greater than every key that starts
// with prefix, or nil if there is none (prefix is all 0xFF).
func PrefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// StringEnd returns, for an encoded S(s), the smallest byte string greater
// than S(s) followed by anything: the end of the range of keys whose first
// string is s. enc must end with the terminator 0x00 0x01.
func StringEnd(enc []byte) []byte {
	end := bytes.Clone(enc)
	end[len(end)-1] = 0x02
	return end
}

// utf16Weight maps a rune to a value whose order is the UTF-16 order:
// BMP characters keep their order, supplementary characters fall between
// U+D7FF and U+E000, ordered by code point among themselves.
func utf16Weight(r rune) uint64 {
	if r >= 0x10000 {
		return 0xD800<<21 + uint64(r-0x10000)
	}
	return uint64(r) << 21
}

// CompareUTF16 compares two strings by their UTF-16 code units, the
// service's ordinal order. Invalid UTF-8 compares by byte.
func CompareUTF16(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		switch {
		case len(a) < len(b):
			return -1
		case len(a) > len(b):
			return 1
		}
		return 0
	}
	// Both differ at byte i; if neither is in a multi-byte sequence that
	// could hold a supplementary or U+E000+ character, bytes decide.
	if a[i] < 0xEE && b[i] < 0xEE {
		if a[i] < b[i] {
			return -1
		}
		return 1
	}
	// Back up to the start of the rune containing byte i.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, na := utf8.DecodeRuneInString(a[i:])
	rb, nb := utf8.DecodeRuneInString(b[i:])
	wa, wb := utf16Weight(ra), utf16Weight(rb)
	if (ra == utf8.RuneError && na <= 1) || (rb == utf8.RuneError && nb <= 1) || wa == wb {
		return bytes.Compare([]byte(a[i:]), []byte(b[i:]))
	}
	if wa < wb {
		return -1
	}
	return 1
}

// AppendIndexTable appends the index prefix of a table: 'i' + id. Every
// index entry of the table starts with it.
func AppendIndexTable(dst []byte, tableID uint64) []byte {
	dst = append(dst, PrefixIndex)
	return binary.BigEndian.AppendUint64(dst, tableID)
}

// AppendIndexPrefix appends the prefix of the entries of index indexID of
// table tableID: 'i' + table ID + index ID.
func AppendIndexPrefix(dst []byte, tableID uint64, indexID uint32) []byte {
	return binary.BigEndian.AppendUint32(AppendIndexTable(dst, tableID), indexID)
}

// IndexPrefixLen is the length of AppendIndexPrefix's output.
const IndexPrefixLen = 13

// AppendBytes appends B(b): the bytes of b with every 0x00 escaped as
// 0x00 0xFF, then the terminator 0x00 0x01. Byte order of B(b) followed by
// anything is the bytewise order of b, a prefix first.
func AppendBytes(dst []byte, b string) []byte {
	for i := 0; i < len(b); i++ {
		dst = appendEscaped(dst, b[i])
	}
	return append(dst, 0, 1)
}

// SkipEscaped returns the bytes of b after one escaped string at its
// front (S(s) or B(b)), or ErrCorrupt if it has no terminator.
func SkipEscaped(b []byte) ([]byte, error) {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], 0)
		if j < 0 || i+j+1 >= len(b) {
			return nil, ErrCorrupt
		}
		i += j + 1
		switch b[i] {
		case 1:
			return b[i+1:], nil
		case 0xFF:
			i++
		default:
			return nil, ErrCorrupt
		}
	}
}

// AppendOrderedInt64 appends v big endian with its top bit flipped, so
// that signed values (as int64) sort in numeric order.
func AppendOrderedInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}
