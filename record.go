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
//	per property, sorted by name:
//	  uvarint len, name bytes
//	  byte    kind (Kind values 1..8)
//	  payload: String, Binary: uvarint len + bytes; Int32: 4 bytes;
//	           Int64, Double, DateTime: 8 bytes; Bool: 1 byte (0 or 1);
//	           Guid: 16 bytes. Fixed-width integers are big endian.
//
// Decoding checks every length and kind, so garbage yields an error, never
// a panic.
const recordVersion = 1

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
			ps = append(ps, namedValue{name, v})
		}
	}
	return appendProps(dst, ticks, ps)
}

// appendValidRecord checks e as validateEntity does and appends its
// record, with a zero Timestamp for setRecordTicks to fill in: one pass
// over the properties checks and gathers them.
func appendValidRecord(dst []byte, e *Entity) ([]byte, error) {
	var buf [32]namedValue
	ps, err := checkEntity(e, buf[:0])
	if err != nil {
		return dst, err
	}
	return appendProps(dst, 0, ps), nil
}

// setRecordTicks sets the Timestamp of a record.
func setRecordTicks(rec []byte, ticks int64) {
	binary.BigEndian.PutUint64(rec[1:9], uint64(ticks))
}

// appendProps appends the record of the non-null properties ps, which it
// sorts.
func appendProps(dst []byte, ticks int64, ps []namedValue) []byte {
	sortByName(ps)
	size := 1 + 8 + binary.MaxVarintLen64
	for i := range ps {
		size += 2*binary.MaxVarintLen64 + len(ps[i].name) + 1 + len(ps[i].v.str) + 8
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, recordVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(ticks))
	dst = binary.AppendUvarint(dst, uint64(len(ps)))
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

// namedValue is a property: its name and value.
type namedValue struct {
	name string
	v    Value
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

// recordTicks returns the Timestamp ticks of a record, checking only its
// header.
func recordTicks(b []byte) (int64, error) {
	if len(b) < 9 || b[0] != recordVersion {
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
	props = make(Properties, min(recordCount(b), 16))
	ticks, err = decodeInto(b, sel, props, view)
	if err != nil {
		return 0, nil, err
	}
	return ticks, props, nil
}

// recordCount returns the property count a record declares, or 0.
func recordCount(b []byte) int {
	if len(b) < 9 {
		return 0
	}
	n, w := uvarint(b[9:])
	if w <= 0 || n > uint64(len(b)) {
		return 0
	}
	return int(n)
}

// decodeInto decodes a record's properties into props, which the caller
// has emptied, and returns its Timestamp ticks. With view, the strings are
// views of b; otherwise substrings of one copy of it.
func decodeInto(b []byte, sel selection, props Properties, view bool) (ticks int64, err error) {
	var r recordIter
	if ticks, err = r.init(b, view); err != nil {
		return 0, err
	}
	all := !sel.on
	for {
		name, v, ok := r.next()
		if !ok {
			break
		}
		if all || sel.has(name) {
			props[name] = v
		}
	}
	if r.err != nil {
		return 0, r.err
	}
	return ticks, nil
}

// recordIter reads the properties of a record one by one, checking every
// length, kind and name as it goes: a corrupt record stops it with err
// set, never a panic.
type recordIter struct {
	b    []byte
	s    string // s[i:] is b[i:] as a string
	i    int    // the read position in b and s
	n, p uint64 // the property count, and the properties read
	prev string // the name last read
	err  error
}

// init starts reading record b and returns its Timestamp ticks. With
// view, the names and the String, Binary and Guid payloads next returns
// are views of b; otherwise substrings of one copy of it.
func (r *recordIter) init(b []byte, view bool) (ticks int64, err error) {
	*r = recordIter{}
	if ticks, err = recordTicks(b); err != nil {
		return 0, err
	}
	b = b[9:]
	n, w := uvarint(b)
	if w <= 0 || n > uint64(len(b)) {
		return 0, errCorruptRecord
	}
	b = b[w:]
	if n == 0 && len(b) != 0 {
		return 0, errCorruptRecord
	}
	r.b, r.n = b, n
	if n > 0 {
		if view {
			r.s = bytesView(b)
		} else {
			r.s = string(b)
		}
	}
	return ticks, nil
}

// next returns the next property, or ok false after the last one or at
// the first corruption (then err is set).
func (r *recordIter) next() (name string, v Value, ok bool) {
	b, s, i := r.b, r.s, r.i
	if r.p == r.n {
		if i != len(b) && r.err == nil {
			r.err = errCorruptRecord
		}
		return "", Value{}, false
	}
	// Names and strings are mostly short, and names ASCII: their one-byte
	// lengths and their ASCII are checked inline.
	var l uint64
	var w int
	if i < len(b) && b[i] < 0x80 {
		l, w = uint64(b[i]), 1
	} else {
		l, w = uvarint(b[i:])
	}
	if w <= 0 || l > uint64(len(b)-i-w) {
		return r.fail()
	}
	name = s[i+w : i+w+int(l)]
	i += w + int(l)
	if r.p > 0 && !nameLess(r.prev, name) { // names strictly ascend
		return r.fail()
	}
	for j := 0; j < len(name); j++ {
		if name[j] >= utf8.RuneSelf {
			if !utf8.ValidString(name) {
				return r.fail()
			}
			break
		}
	}
	if i >= len(b) {
		return r.fail()
	}
	kind := Kind(b[i])
	i++
	switch kind {
	case KindString, KindBinary:
		var l uint64
		var w int
		if i < len(b) && b[i] < 0x80 {
			l, w = uint64(b[i]), 1
		} else {
			l, w = uvarint(b[i:])
		}
		if w <= 0 || l > uint64(len(b)-i-w) {
			return r.fail()
		}
		v = Value{kind: kind, str: s[i+w : i+w+int(l)]}
		i += w + int(l)
	case KindInt32:
		if len(b)-i < 4 {
			return r.fail()
		}
		v = Int32Value(int32(binary.BigEndian.Uint32(b[i:])))
		i += 4
	case KindInt64, KindDouble, KindDateTime:
		if len(b)-i < 8 {
			return r.fail()
		}
		v = Value{kind: kind, num: binary.BigEndian.Uint64(b[i:])}
		i += 8
	case KindBool:
		if len(b)-i < 1 || b[i] > 1 {
			return r.fail()
		}
		v = BoolValue(b[i] == 1)
		i++
	case KindGUID:
		if len(b)-i < 16 {
			return r.fail()
		}
		v = Value{kind: KindGUID, str: s[i : i+16]}
		i += 16
	default:
		return r.fail()
	}
	r.i, r.p, r.prev = i, r.p+1, name
	return name, v, true
}

// fail stops the iteration at a corruption.
func (r *recordIter) fail() (string, Value, bool) {
	r.err, r.p, r.i = errCorruptRecord, r.n, len(r.b)
	return "", Value{}, false
}

// The catalog record of a table. Version 1:
//
//	byte    version (1)
//	uint64  table ID, big endian
//	uvarint len, name as created
//	uvarint policy count; per policy: ID, Start, Expiry, Permission, each
//	        uvarint len + bytes (times as RFC 3339, empty when unset)
type tableRecord struct {
	ID       uint64
	Name     string
	Policies []AccessPolicy
}

func (r tableRecord) append(dst []byte) []byte {
	dst = append(dst, recordVersion)
	dst = binary.BigEndian.AppendUint64(dst, r.ID)
	dst = appendString(dst, r.Name)
	dst = binary.AppendUvarint(dst, uint64(len(r.Policies)))
	for _, p := range r.Policies {
		dst = appendString(dst, p.ID)
		dst = appendString(dst, formatPolicyTime(p.Start))
		dst = appendString(dst, formatPolicyTime(p.Expiry))
		dst = appendString(dst, p.Permission)
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
	if len(b) < 9 || b[0] != recordVersion {
		return r, bad
	}
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
	if len(b) != 0 {
		return r, bad
	}
	return r, nil
}
