package localtable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// The entity record: how an entity's Timestamp and properties are stored
// as an engine value (its keys live in the engine key). Version 1:
//
//	byte     version (1)
//	uint64   Timestamp ticks, big endian
//	uvarint  property count
//	the body: per property, sorted by name:
//	  uvarint len, name bytes
//	  byte    kind (Kind values 1..8)
//	  payload: String, Binary: uvarint len + bytes; Int32: 4 bytes;
//	           Int64, Double, DateTime: 8 bytes; Bool: 1 byte (0 or 1);
//	           Guid: 16 bytes. Fixed-width integers are big endian.
//
// Version 2, which every write makes since, puts an index of the
// properties' places between the count and the body, so that a read of
// one property (a filter's, a Row's) finds it by a binary search of the
// names instead of stepping over every property before it:
//
//	byte     version (2)
//	uint64   Timestamp ticks, big endian
//	uvarint  property count n
//	byte     offset width w: 1, 2 or 4, the least that holds the body's length
//	(n-1) w-byte big-endian offsets: where properties 1 to n-1 start in the body
//	the body, as in version 1
//
// Version 1 records stay readable; a localtable that predates version 2
// refuses a version 2 record as corrupt.
//
// Records are read only through recordWalker, which checks every length,
// offset and kind, so garbage yields an error, never a panic.
const (
	recordV1      = 1
	recordVersion = 2 // the version written
)

var errCorruptRecord = errors.New("localtable: corrupt entity record")

// uvarint is binary.Uvarint that also rejects non-minimal encodings, so
// that every record has one encoding.
func uvarint(b []byte) (uint64, int) {
	v, w := binary.Uvarint(b)
	if w > 1 && b[w-1] == 0 {
		return 0, 0
	}
	return v, w
}

// appendRecord appends the record of an entity written at ticks.
func appendRecord(dst []byte, ticks int64, props Properties) []byte {
	// The properties are gathered with their values, sorted by name, and
	// written from there: one pass over the map, and dst grown once.
	var buf [32]namedValue // entities rarely have more properties
	ps := buf[:0]
	for name, v := range props {
		if !v.IsNull() {
			ps = append(ps, namedValue{name: name, v: v})
		}
	}
	return appendProps(dst, ticks, ps)
}

// appendValidRecord checks e as validateEntity does and appends its
// record, with a zero Timestamp for setRecordTicks to fill in, and returns
// PayloadSize(e): one pass over the properties checks, measures and
// gathers them.
func appendValidRecord(dst []byte, e *Entity) ([]byte, int, error) {
	var buf [32]namedValue
	ps, payload, err := checkEntity(e, buf[:0])
	if err != nil {
		return dst, 0, err
	}
	return appendProps(dst, 0, ps), payload, nil
}

// setRecordTicks sets the Timestamp of a record.
func setRecordTicks(rec []byte, ticks int64) {
	binary.BigEndian.PutUint64(rec[1:9], uint64(ticks))
}

// appendProps appends the record of the non-null properties ps, which it
// sorts.
func appendProps(dst []byte, ticks int64, ps []namedValue) []byte {
	sortByName(ps)
	body := 0
	for i := range ps {
		ps[i].size = propSize(ps[i].name, ps[i].v)
		body += ps[i].size
	}
	width := offsetWidth(body)
	n := len(ps)
	dst = slices.Grow(dst, 1+8+binary.MaxVarintLen64+1+max(n-1, 0)*width+body)
	dst = append(dst, recordVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(ticks))
	dst = binary.AppendUvarint(dst, uint64(n))
	dst = append(dst, byte(width))
	if n > 1 {
		off := 0
		for i := range ps[:n-1] {
			off += ps[i].size
			dst = appendOffset(dst, width, off)
		}
	}
	for i := range ps {
		name, v := ps[i].name, ps[i].v
		dst = binary.AppendUvarint(dst, uint64(len(name)))
		dst = append(dst, name...)
		dst = append(dst, byte(v.kind))
		switch v.kind {
		case KindString, KindBinary:
			dst = binary.AppendUvarint(dst, uint64(len(v.str)))
			dst = append(dst, v.str...)
		case KindInt32:
			dst = binary.BigEndian.AppendUint32(dst, uint32(v.num))
		case KindInt64, KindDouble, KindDateTime:
			dst = binary.BigEndian.AppendUint64(dst, v.num)
		case KindBool:
			dst = append(dst, byte(v.num))
		case KindGUID:
			dst = append(dst, v.str...)
		}
	}
	return dst
}

// propSize returns the size of a property's encoding in a record's body.
func propSize(name string, v Value) int {
	n := uvarintLen(uint64(len(name))) + len(name) + 1
	switch v.kind {
	case KindString, KindBinary:
		return n + uvarintLen(uint64(len(v.str))) + len(v.str)
	case KindInt32:
		return n + 4
	case KindInt64, KindDouble, KindDateTime:
		return n + 8
	case KindBool:
		return n + 1
	case KindGUID:
		return n + 16
	}
	return n
}

// uvarintLen returns the length of x's uvarint encoding.
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// offsetWidth returns the width of the offsets of a record whose body is
// size bytes long: the least of 1, 2 and 4 bytes that holds size.
func offsetWidth(size int) int {
	switch {
	case size <= math.MaxUint8:
		return 1
	case size <= math.MaxUint16:
		return 2
	}
	return 4
}

// appendOffset appends off as a width-byte big-endian offset.
func appendOffset(dst []byte, width, off int) []byte {
	switch width {
	case 1:
		return append(dst, byte(off))
	case 2:
		return binary.BigEndian.AppendUint16(dst, uint16(off))
	}
	return binary.BigEndian.AppendUint32(dst, uint32(off))
}

// namedValue is a property: its name and value, and the size of its
// encoding, which appendProps sets.
type namedValue struct {
	name string
	v    Value
	size int
}

// sortByName sorts properties by name: by insertion for the few of a
// typical entity, which needs no calls to compare.
func sortByName(ps []namedValue) {
	if len(ps) > 16 {
		slices.SortFunc(ps, func(a, b namedValue) int { return strings.Compare(a.name, b.name) })
		return
	}
	for i := 1; i < len(ps); i++ {
		p := ps[i]
		j := i
		for ; j > 0 && nameLess(p.name, ps[j-1].name); j-- {
			ps[j] = ps[j-1]
		}
		ps[j] = p
	}
}

// nameLess is a < b, with the first bytes, where names mostly differ,
// compared inline.
func nameLess(a, b string) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return a < b
}

// selection is a $select list of property names. The zero selection
// selects every property.
type selection struct {
	on   bool
	list []string        // short lists are searched
	set  map[string]bool // long ones hashed
}

// makeSelection makes the selection of a Select list, as the service
// reads $select: each name must be a property name (ErrInvalidInput
// naming it otherwise), and "*" selects every property.
func makeSelection(names []string) (selection, error) {
	if names == nil {
		return selection{}, nil
	}
	all := false
	for _, n := range names {
		if n == "*" {
			all = true
			continue
		}
		if i, r, ok := identifierChars(n); !ok {
			what := "is empty"
			if n != "" {
				what = fmt.Sprintf("has %q at byte %d", r, i)
			}
			return selection{}, newError(ErrInvalidInput, "Select: %q is not a property name: it %s (a letter or '_' first, then letters, digits and '_')", abbrev(n), what)
		}
	}
	if all {
		return selection{}, nil
	}
	s := selection{on: true}
	if len(names) <= 16 {
		s.list = names
	} else {
		s.set = make(map[string]bool, len(names))
		for _, n := range names {
			s.set[n] = true
		}
	}
	return s, nil
}

// has reports whether the selection keeps the named property.
func (s selection) has(name string) bool {
	switch {
	case !s.on:
		return true
	case s.set != nil:
		return s.set[name]
	}
	for _, n := range s.list {
		if n == name {
			return true
		}
	}
	return false
}

// lengthAt reads the length at b[i:] (i <= len(b)) of the bytes that
// follow it (a name, a String or Binary payload), which must lie within
// b: it returns where they start and end, or end -1. Names and strings
// are mostly short: a one-byte length is read inline.
func lengthAt(b []byte, i int) (start, end int) {
	if i < len(b) {
		if l := int(b[i]); l < 0x80 && i+1+l <= len(b) {
			return i + 1, i + 1 + l
		}
	}
	return longLengthAt(b, i)
}

// longLengthAt is lengthAt for a length of more than one byte, or one
// that is not whole or does not fit.
func longLengthAt(b []byte, i int) (start, end int) {
	l, lw := uvarint(b[i:])
	if lw <= 0 || l > uint64(len(b)-i-lw) {
		return 0, -1
	}
	return i + lw, i + lw + int(l)
}

// recordTicks returns the Timestamp ticks of a record, checking only its
// header.
func recordTicks(b []byte) (int64, error) {
	if len(b) < 9 || b[0] != recordVersion && b[0] != recordV1 {
		return 0, errCorruptRecord
	}
	return int64(binary.BigEndian.Uint64(b[1:9])), nil
}

// decodeRecord decodes a record. With sel non-nil, only the named
// properties are kept.
func decodeRecord(b []byte, sel map[string]bool) (ticks int64, props Properties, err error) {
	s := selection{}
	if sel != nil {
		s = selection{on: true, set: sel}
	}
	return decodeSelected(b, s)
}

// decodeSelected decodes a record, keeping only the properties sel selects.
//
// The names and the String, Binary and Guid payloads of the properties are
// substrings of one string holding the record's body: one allocation for
// all of them, and b is not retained.
func decodeSelected(b []byte, sel selection) (ticks int64, props Properties, err error) {
	return decodeProps(b, sel, false)
}

// decodeProps is decodeSelected that, with view, makes the strings views
// of b instead of a copy: for a stable engine's reads (see
// storage.StableReader), which never change.
func decodeProps(b []byte, sel selection, view bool) (ticks int64, props Properties, err error) {
	var w recordWalker
	if ticks, err = w.init(b, view); err != nil {
		return 0, nil, err
	}
	props = make(Properties, min(w.n, 16))
	if err = w.collect(sel, props); err != nil {
		return 0, nil, err
	}
	return ticks, props, nil
}

// decodeInto decodes a record's properties into props, which the caller
// has emptied, and returns its Timestamp ticks. With view, the strings are
// views of b; otherwise substrings of one copy of it.
func decodeInto(b []byte, sel selection, props Properties, view bool) (ticks int64, err error) {
	var w recordWalker
	if ticks, err = w.init(b, view); err != nil {
		return 0, err
	}
	if err = w.collect(sel, props); err != nil {
		return 0, err
	}
	return ticks, nil
}

// recordWalker is the one reader of the entity record format: init reads
// the header, seek is the one loop that steps over the properties' layout
// (name, kind, payload), find finds one property by name, value reads a
// payload, and next, on top of seek, reads the properties one by one and
// checks their names and, in a version 2 record, their offsets. Every
// length, offset, kind and payload is checked on the way: a corrupt
// record stops the walk with err set to errCorruptRecord, never a panic.
// Every reader of records walks them with it: decoding (decodeProps,
// decodeInto, and so Get, Verify and the writes' reads), finding one
// property for a filter (findProperty, Row.Property), and visiting them as
// stored (storedVisit); recordTicks, which init calls, reads the header
// alone.
type recordWalker struct {
	b    []byte  // the body
	s    string  // s[i:] is b[i:] as a string
	i    int     // the read position in b and s
	n, p uint64  // the property count, and the properties read
	prev string  // the name last read
	offs offsets // a version 2 record's; width 0 in version 1
	err  error
}

// init starts reading record b and returns its Timestamp ticks. With
// view, the names and the String, Binary and Guid payloads next returns
// are views of b; otherwise substrings of one copy of it.
func (w *recordWalker) init(b []byte, view bool) (ticks int64, err error) {
	if ticks, err = recordTicks(b); err != nil {
		return w.refuse()
	}
	v1 := b[0] == recordV1
	b = b[9:]
	var n uint64
	var l int
	if len(b) > 0 && b[0] < 0x80 { // the count of most records, inline
		n, l = uint64(b[0]), 1
	} else {
		n, l = uvarint(b)
	}
	if l <= 0 || n > uint64(len(b)) {
		return w.refuse()
	}
	b = b[l:]
	var offs []byte
	width := 0
	if !v1 {
		if len(b) == 0 {
			return w.refuse()
		}
		width = int(b[0])
		if width != 1 && width != 2 && width != 4 {
			return w.refuse()
		}
		size := uint64(0)
		if n > 1 {
			size = (n - 1) * uint64(width)
		}
		if size > uint64(len(b)-1) {
			return w.refuse()
		}
		offs, b = b[1:1+size], b[1+size:]
		if offsetWidth(len(b)) != width {
			return w.refuse()
		}
	}
	if n == 0 && len(b) != 0 {
		return w.refuse()
	}
	// The fields are set one by one: a composite literal is built aside
	// and copied in wide moves, which stall on the narrow stores just made.
	w.b, w.s, w.i, w.n, w.p, w.prev, w.err = b, "", 0, n, 0, "", nil
	w.offs = offsets{offs, width}
	if n > 0 {
		if view {
			w.s = bytesView(b)
		} else {
			w.s = string(b)
		}
	}
	return ticks, nil
}

// offsets are a version 2 record's offsets: where its properties 1 to
// n-1 start in its body, each width bytes, big endian.
type offsets struct {
	b     []byte
	width int // 0: a version 1 record, which has none
}

// start returns where property k starts, as its offset says: the caller
// checks it against the body.
func (o offsets) start(k uint64) int {
	if k == 0 {
		return 0
	}
	b := o.b[(k-1)*uint64(o.width):]
	switch o.width {
	case 1:
		return int(b[0])
	case 2:
		return int(binary.BigEndian.Uint16(b))
	}
	return int(binary.BigEndian.Uint32(b))
}

// refuse is init's failure: a walker that reads nothing.
func (w *recordWalker) refuse() (int64, error) {
	*w = recordWalker{err: errCorruptRecord}
	return 0, errCorruptRecord
}

// collect reads the rest of the properties into props, keeping only those
// sel selects, and returns the walk's error.
func (w *recordWalker) collect(sel selection, props Properties) error {
	all := !sel.on
	for {
		name, v, ok := w.next()
		if !ok {
			break
		}
		if all || sel.has(name) {
			props[name] = v
		}
	}
	return w.err
}

// next returns the next property, or ok false after the last one or at
// the first corruption (then err is set). Besides the layout seek checks,
// it checks that names are valid UTF-8 and strictly ascend (from the last
// name next returned), and, in a version 2 record, that the property
// starts where its offset says.
func (w *recordWalker) next() (name string, v Value, ok bool) {
	// seek("") inlined: the one property, as seek reads and checks it.
	start, p := w.i, w.p
	if p >= w.n {
		if start != len(w.b) && w.err == nil {
			w.err = errCorruptRecord
		}
		return "", Value{}, false
	}
	ns, ne := lengthAt(w.b, start)
	if ne < 0 {
		w.fail()
		return "", Value{}, false
	}
	name = w.s[ns:ne]
	kind, at, end := payloadAt(w.b, ne)
	if end < 0 {
		w.fail()
		return "", Value{}, false
	}
	w.i, w.p = end, p+1
	if w.offs.width != 0 && w.p > 1 && w.offs.start(w.p-1) != start {
		w.fail()
		return "", Value{}, false
	}
	if w.p > 1 && !nameLess(w.prev, name) { // names strictly ascend
		w.fail()
		return "", Value{}, false
	}
	for j := 0; j < len(name); j++ {
		if name[j] >= utf8.RuneSelf {
			if !utf8.ValidString(name) {
				w.fail()
				return "", Value{}, false
			}
			break
		}
	}
	w.prev = name
	return name, valueAt(w.b, w.s, kind, at, end), true
}

// noHint is find's hint when there is none.
const noHint = ^uint64(0)

// find is seek for a property named target: in a version 2 record, it
// searches the names from the one after the last property read by their
// offsets, reading only the names it compares and then the one property
// it returns, whose layout it checks (that it ends where the next
// starts). It compares target with the name of property hint first: the
// entities of a table mostly share their properties, so where a name was
// in the last one read is a good guess for the next. It returns ok false,
// and leaves the walk after the last property, when every name left is
// below target. It does not check the names (next does): in a corrupt
// record whose names are out of order, it may miss a property, but it
// never reads out of the record.
func (w *recordWalker) find(target string, hint uint64) (name string, kind Kind, at int, found, ok bool) {
	if w.offs.width == 0 || target == "" {
		return w.seek(target)
	}
	lo, hi := w.p, w.n
	for lo < hi {
		m := lo + (hi-lo)/2
		if hint >= lo && hint < hi {
			m, hint = hint, noHint
		}
		got, i := nameAt(w.b, w.s, w.offs.start(m))
		if i < 0 {
			return w.fail()
		}
		// The guess mostly hits; other names mostly differ in their
		// first byte, compared inline.
		switch {
		case got == target:
			return w.readAt(m, got, i)
		case got != "" && got[0] != target[0] && got[0] < target[0],
			(got == "" || got[0] == target[0]) && got < target:
			lo = m + 1
		default:
			hi = m
		}
	}
	if lo == w.n {
		w.i, w.p = len(w.b), w.n
		return "", 0, 0, false, false
	}
	// The next property, named past target.
	got, i := nameAt(w.b, w.s, w.offs.start(lo))
	if i < 0 {
		return w.fail()
	}
	name, kind, at, _, ok = w.readAt(lo, got, i)
	return name, kind, at, false, ok
}

// readAt reads property k of a version 2 record, whose name, read, ends
// at i, checks that it ends where property k+1 starts (or the body ends),
// and goes on from there.
func (w *recordWalker) readAt(k uint64, name string, i int) (string, Kind, int, bool, bool) {
	kind, at, end := payloadAt(w.b, i)
	if end < 0 || end != w.offs.end(w.b, w.n, k) {
		return w.fail()
	}
	w.i, w.p = end, k+1
	return name, kind, at, true, true
}

// end returns where property k of n ends in body b: where the next
// starts, or the body's end.
func (o offsets) end(b []byte, n, k uint64) int {
	if k+1 < n {
		return o.start(k + 1)
	}
	return len(b)
}

// findAt returns property k of record rec if it is named name: a Row's
// read of a name where the last entity had it, in a version 2 record,
// without the walk init and find make. ok false says only that it is not
// there (or rec is another version, or has more than 127 properties):
// find then searches. It checks the layout of what it reads, as find.
func findAt(rec []byte, name string, k uint64) (v Value, ok bool) {
	if len(rec) < 11 || rec[0] != recordVersion || rec[9] >= 0x80 {
		return Value{}, false
	}
	n, width := uint64(rec[9]), int(rec[10])
	if k >= n || width != 1 && width != 2 && width != 4 {
		return Value{}, false
	}
	bodyAt := 11 + int(n-1)*width
	if bodyAt > len(rec) || offsetWidth(len(rec)-bodyAt) != width {
		return Value{}, false
	}
	b, o := rec[bodyAt:], offsets{rec[11:bodyAt], width}
	str := bytesView(b)
	got, i := nameAt(b, str, o.start(k))
	if i < 0 || got != name {
		return Value{}, false
	}
	kind, at, end := payloadAt(b, i)
	if end < 0 || end != o.end(b, n, k) {
		return Value{}, false
	}
	return valueAt(b, str, kind, at, end), true
}

// nameAt returns the name of the property that starts at start in body
// b (s is b as a string) and where it ends, or end -1 if it is out of b.
func nameAt(b []byte, s string, start int) (name string, end int) {
	if start < 0 || start >= len(b) {
		return "", -1
	}
	start, end = lengthAt(b, start)
	if end < 0 {
		return "", -1
	}
	return s[start:end], end
}

// seek steps over the properties named below target, and returns the
// name and kind of the next one, where its payload starts in b (it ends at
// i, where the walk goes on), and whether it is named target; with target
// "", that is the next property. It returns ok false after the last
// property or at the first corruption (then err is set). Reading past the
// last property checks that no bytes follow it.
//
// It is the one loop over the record's layout, and checks all of it:
// lengths within the record, kinds known, payloads whole, Bools 0 or 1.
// It does not check the names themselves (next does): a seek for one
// property reads no more than it must.
func (w *recordWalker) seek(target string) (name string, kind Kind, at int, found, ok bool) {
	b, s, i, p := w.b, w.s, w.i, w.p
	for ; p < w.n; p++ {
		start, end := lengthAt(b, i)
		if end < 0 {
			return w.fail()
		}
		name, i = s[start:end], end
		kind, at, i = payloadAt(b, i)
		if i < 0 {
			return w.fail()
		}
		if target != "" {
			// Names mostly differ in their first byte, compared inline.
			var c int
			if name != "" && name[0] != target[0] {
				c = int(name[0]) - int(target[0])
			} else {
				c = strings.Compare(name, target)
			}
			if c < 0 {
				continue
			}
			found = c == 0
		}
		w.i, w.p = i, p+1
		return name, kind, at, found, true
	}
	w.i, w.p = i, p
	if i != len(b) && w.err == nil {
		w.err = errCorruptRecord
	}
	return "", 0, 0, false, false
}

// payloadAt reads the kind and payload of a property whose name ends at
// b[i]: it returns the kind, where the payload starts and where it ends, or
// end -1 if the kind is unknown or the payload is not whole (or, for a
// Bool, not 0 or 1).
func payloadAt(b []byte, i int) (kind Kind, at, end int) {
	if i >= len(b) {
		return 0, 0, -1
	}
	kind = Kind(b[i])
	i++
	var size int
	switch kind {
	case KindString, KindBinary:
		start, end := lengthAt(b, i)
		if end < 0 {
			return 0, 0, -1
		}
		i, size = start, end-start
	case KindInt32:
		size = 4
	case KindInt64, KindDouble, KindDateTime:
		size = 8
	case KindBool:
		size = 1
	case KindGUID:
		size = 16
	default:
		return 0, 0, -1
	}
	if len(b)-i < size || (kind == KindBool && b[i] > 1) {
		return 0, 0, -1
	}
	return kind, i, i + size
}

// value returns the value of the property seek last returned, of kind and
// with its payload at b[at:i].
func (w *recordWalker) value(kind Kind, at int) Value {
	return valueAt(w.b, w.s, kind, at, w.i)
}

// valueAt returns the value of kind whose payload is b[at:end] (s is b as
// a string).
func valueAt(b []byte, s string, kind Kind, at, end int) Value {
	switch kind {
	case KindInt32:
		return Int32Value(int32(binary.BigEndian.Uint32(b[at:])))
	case KindInt64, KindDouble, KindDateTime:
		return Value{kind: kind, num: binary.BigEndian.Uint64(b[at:])}
	case KindBool:
		return BoolValue(b[at] == 1)
	}
	return Value{kind: kind, str: s[at:end]}
}

// fail stops the walk at a corruption.
func (w *recordWalker) fail() (string, Kind, int, bool, bool) {
	w.err, w.p, w.i = errCorruptRecord, w.n, len(w.b)
	return "", 0, 0, false, false
}

// The catalog record of a table. Version 1:
//
//	byte    version (1)
//	uint64  table ID, big endian
//	uvarint len, name as created
//	uvarint policy count; per policy: ID, Start, Expiry, Permission, each
//	        uvarint len + bytes (times as RFC 3339, empty when unset)
//
// Version 2, written only by a table with declared indexes (so a store
// without any stays readable by a localtable that predates them, and one
// with indexes is refused by it rather than written without maintaining
// them), adds after the policies:
//
//	uvarint index count; per index: uvarint ID, uvarint len + name,
//	        uvarint property count, each uvarint len + name, byte state
//	        (bit 0: ready, else building; bit 1: declared by SetExpiry
//	        for the expiry policy, which drops it; bit 2: covering, its
//	        entries hold their entities' records), uvarint len + build
//	        cursor
//
// (Bit 1 is set only on an index SetExpiry declares: a build that predates
// it refuses such a record as corrupt rather than keep the index past the
// policy. Bit 2 likewise: a build that predates covering entries would
// leave an entry's record stale when an entity's indexed values do not
// change.)
//
// Version 3, written only by a table with an expiry policy (expiry.go),
// so that a localtable that predates expiry refuses the record rather
// than show entities it should hide, is version 2 (its index count may be
// 0) then:
//
//	uvarint len, the expiry property's name (not empty)
type tableRecord struct {
	ID       uint64
	Name     string
	Policies []AccessPolicy
	Indexes  []indexDef
	Expiry   string // the expiry policy's property; "": none
}

// tableRecordVersion1 is the version of a catalog record without indexes
// or expiry, tableRecordVersion2 of one with indexes, tableRecordVersion3
// of one with an expiry policy.
const (
	tableRecordVersion1 = 1
	tableRecordVersion2 = 2
	tableRecordVersion3 = 3
)

// knownTableRecord reports whether v is a catalog record version this
// build reads.
func knownTableRecord(v byte) bool {
	return v == tableRecordVersion1 || v == tableRecordVersion2 || v == tableRecordVersion3
}

func (r tableRecord) append(dst []byte) []byte {
	v := byte(tableRecordVersion1)
	switch {
	case r.Expiry != "":
		v = tableRecordVersion3
	case len(r.Indexes) > 0:
		v = tableRecordVersion2
	}
	dst = append(dst, v)
	dst = binary.BigEndian.AppendUint64(dst, r.ID)
	dst = appendString(dst, r.Name)
	dst = binary.AppendUvarint(dst, uint64(len(r.Policies)))
	for _, p := range r.Policies {
		dst = appendString(dst, p.ID)
		dst = appendString(dst, formatPolicyTime(p.Start))
		dst = appendString(dst, formatPolicyTime(p.Expiry))
		dst = appendString(dst, p.Permission)
	}
	if v >= tableRecordVersion2 {
		dst = binary.AppendUvarint(dst, uint64(len(r.Indexes)))
		for _, x := range r.Indexes {
			dst = binary.AppendUvarint(dst, uint64(x.ID))
			dst = appendString(dst, x.Name)
			dst = binary.AppendUvarint(dst, uint64(len(x.Props)))
			for _, p := range x.Props {
				dst = appendString(dst, p)
			}
			state := byte(0)
			if x.Ready {
				state |= 1
			}
			if x.ForExpiry {
				state |= 2
			}
			if x.Covering {
				state |= 4
			}
			dst = append(dst, state)
			dst = appendString(dst, string(x.Cursor))
		}
	}
	if v == tableRecordVersion3 {
		dst = appendString(dst, r.Expiry)
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func readString(b []byte) (string, []byte, bool) {
	l, w := uvarint(b)
	if w <= 0 || l > uint64(len(b)-w) {
		return "", nil, false
	}
	return string(b[w : w+int(l)]), b[w+int(l):], true
}

func decodeTableRecord(b []byte) (tableRecord, error) {
	var r tableRecord
	bad := fmt.Errorf("localtable: corrupt table record")
	if len(b) < 9 || !knownTableRecord(b[0]) {
		return r, bad
	}
	v := b[0]
	r.ID = binary.BigEndian.Uint64(b[1:9])
	var ok bool
	if r.Name, b, ok = readString(b[9:]); !ok {
		return r, bad
	}
	n, w := uvarint(b)
	if w <= 0 || n > math.MaxUint8 {
		return r, bad
	}
	b = b[w:]
	for i := uint64(0); i < n; i++ {
		var p AccessPolicy
		var start, expiry string
		fields := []*string{&p.ID, &start, &expiry, &p.Permission}
		for _, f := range fields {
			if *f, b, ok = readString(b); !ok {
				return r, bad
			}
		}
		var err error
		if p.Start, err = parsePolicyTime(start); err != nil {
			return r, bad
		}
		if p.Expiry, err = parsePolicyTime(expiry); err != nil {
			return r, bad
		}
		r.Policies = append(r.Policies, p)
	}
	if v >= tableRecordVersion2 {
		if b, ok = decodeIndexDefs(&r, b); !ok || (v == tableRecordVersion2 && len(r.Indexes) == 0) {
			return r, bad
		}
	}
	if v == tableRecordVersion3 {
		if r.Expiry, b, ok = readString(b); !ok || r.Expiry == "" {
			return r, bad
		}
	}
	if len(b) != 0 {
		return r, bad
	}
	return r, nil
}

// decodeIndexDefs decodes the indexes of a version 2 catalog record into
// r, and returns the bytes after them.
func decodeIndexDefs(r *tableRecord, b []byte) ([]byte, bool) {
	n, w := uvarint(b)
	if w <= 0 || n > maxIndexes {
		return nil, false
	}
	b = b[w:]
	for range n {
		var x indexDef
		id, w := uvarint(b)
		if w <= 0 || id > math.MaxUint32 {
			return nil, false
		}
		x.ID, b = uint32(id), b[w:]
		var ok bool
		if x.Name, b, ok = readString(b); !ok {
			return nil, false
		}
		np, w := uvarint(b)
		if w <= 0 || np == 0 || np > maxIndexProperties {
			return nil, false
		}
		b = b[w:]
		for range np {
			var p string
			if p, b, ok = readString(b); !ok {
				return nil, false
			}
			x.Props = append(x.Props, p)
		}
		if len(b) == 0 || b[0] > 7 {
			return nil, false
		}
		x.Ready, x.ForExpiry, x.Covering, b = b[0]&1 != 0, b[0]&2 != 0, b[0]&4 != 0, b[1:]
		var cur string
		if cur, b, ok = readString(b); !ok {
			return nil, false
		}
		if cur != "" {
			x.Cursor = []byte(cur)
		}
		r.Indexes = append(r.Indexes, x)
	}
	return b, true
}
