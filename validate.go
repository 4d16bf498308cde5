package localtable

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/localtable/localtable/internal/edmfmt"
)

// The service's limits, as enforced on every write.
const (
	// MaxKeyUTF16 is the largest PartitionKey or RowKey, in UTF-16 code
	// units: 1 KiB of UTF-16, i.e. 512 units. The English documentation says
	// "up to 1 KiB in size"; the service stores keys as UTF-16, so 1 KiB is
	// 512 code units (an ASCII key of 512 characters passes, 513 fails; a
	// key of characters above U+FFFF holds 256 of them).
	MaxKeyUTF16 = 512
	// MaxPropertyNameLen is the longest property name, in characters.
	MaxPropertyNameLen = 255
	// MaxCustomProperties is the number of custom properties an entity may
	// have: 255 in all, less PartitionKey, RowKey and Timestamp.
	MaxCustomProperties = 252
	// MaxStringUTF16 is the largest Edm.String value: 64 KiB of UTF-16,
	// i.e. 32,768 code units.
	MaxStringUTF16 = 32 * 1024
	// MaxBinaryLen is the largest Edm.Binary value, in bytes.
	MaxBinaryLen = 64 * 1024
	// MaxEntitySize is the largest entity, measured by EntitySize.
	MaxEntitySize = 1024 * 1024
	// MaxTransactionActions is the most actions one transaction may hold.
	MaxTransactionActions = 100
	// MaxTransactionSize is the largest transaction, the sum of its
	// entities' PayloadSize: the service limits a batch request's body to
	// 4 MiB.
	MaxTransactionSize = 4 * 1024 * 1024
)

// ErrKeyTooLarge is the error for a PartitionKey or RowKey over
// MaxKeyUTF16 code units (code KeyValueTooLarge).
var ErrKeyTooLarge = sentinel(CodeKeyValueTooLarge, "The key value exceeds the maximum allowed size (1KB).")

// utf16Len returns the number of UTF-16 code units of s: 2 for characters
// above U+FFFF, 1 otherwise (an invalid byte counts 1).
func utf16Len(s string) int {
	n, _ := utf16LenValid(s)
	return n
}

// utf16LenValid returns utf16Len(s) and whether s is valid UTF-8
// (utf8.ValidString), in one pass.
func utf16LenValid(s string) (int, bool) {
	// ASCII, eight bytes at a time: one code unit a byte.
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&0x8080808080808080 != 0 {
			break
		}
	}
	n, valid := i, true
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= 0x10000:
			n += 2
		case r == utf8.RuneError && w == 1:
			valid = false
			n++
		default:
			n++
		}
		i += w
	}
	return n, valid
}

// EntitySize returns the size of an entity as the service measures it
// against the 1 MiB limit (the documented estimate):
//
//	4 bytes
//	+ 2 bytes per UTF-16 code unit of PartitionKey and RowKey
//	+ for each custom property: 8 bytes + 2 per UTF-16 code unit of its name
//	  + its value: String 4 + 2 per code unit, Binary 4 + its length,
//	  Boolean 1, Int32 4, Int64, Double and DateTime 8, Guid 16.
//
// Timestamp is not counted. Null properties count nothing (they are not
// stored).
func EntitySize(e *Entity) int {
	n := 4 + 2*(utf16Len(e.PartitionKey)+utf16Len(e.RowKey))
	for name, v := range e.Properties {
		if v.IsNull() {
			continue
		}
		n += 8 + 2*utf16Len(name) + valueSize(v)
	}
	return n
}

// PayloadSize estimates the bytes an entity takes in a request body, the
// measure of the 4 MiB transaction limit: the UTF-8 bytes of its keys and
// property names, and its values as JSON carries them (strings as UTF-8,
// Binary as base64, Int64 as a quoted decimal, Double, DateTime and Guid at
// their longest text), plus a little framing per property. Unlike
// EntitySize it does not count text as UTF-16, so an ASCII payload is
// measured at its size.
func PayloadSize(e *Entity) int {
	n := payloadKeysSize(e.PartitionKey, e.RowKey)
	for name, v := range e.Properties {
		n += payloadPropSize(name, v)
	}
	return n
}

// payloadKeysSize is PayloadSize's measure of an entity's keys.
func payloadKeysSize(pk, rk string) int {
	return 2 + len(pk) + len(rk) + 32 // {"PartitionKey":…,"RowKey":…}
}

// payloadPropSize is PayloadSize's measure of one property.
func payloadPropSize(name string, v Value) int {
	if v.IsNull() {
		return 0
	}
	n := len(name) + 4 // "name":
	switch v.kind {
	case KindString:
		n += len(v.str) + 2
	case KindBinary:
		n += (len(v.str)+2)/3*4 + 2
	case KindBool:
		n += 5
	case KindInt32:
		n += 11
	case KindInt64:
		n += 22
	case KindDouble:
		n += 24
	case KindDateTime:
		n += 30
	case KindGUID:
		n += 38
	}
	switch v.kind {
	case KindInt64, KindDateTime, KindGUID, KindBinary:
		n += len(name) + 30 // "name@odata.type":"Edm.…",
	}
	return n
}

func valueSize(v Value) int {
	switch v.kind {
	case KindString:
		return 4 + 2*utf16Len(v.str)
	case KindBinary:
		return 4 + len(v.str)
	case KindBool:
		return 1
	case KindInt32:
		return 4
	case KindGUID:
		return 16
	}
	return 8
}

// ValidateTableName checks a table name against the service's rules:
// ^[A-Za-z][A-Za-z0-9]{2,62}$, and not the reserved name "tables" (in any
// case). Characters outside the pattern are InvalidResourceName, a length
// outside 3..63 OutOfRangeInput, a reserved name InvalidInput.
func ValidateTableName(name string) error {
	for i := 0; i < len(name); i++ {
		c := name[i]
		isLetter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		if !isLetter && (i == 0 || c < '0' || c > '9') {
			return newError(ErrInvalidTableName, "table name %q: character %q at %d is not allowed: names match ^[A-Za-z][A-Za-z0-9]{2,62}$", name, c, i)
		}
	}
	if len(name) < 3 || len(name) > 63 {
		return withCode(ErrInvalidTableName, CodeOutOfRangeInput, "table name %q: length %d is outside 3..63", name, len(name))
	}
	if strings.EqualFold(name, "tables") {
		return withCode(ErrInvalidTableName, CodeInvalidInput, "table name %q is reserved", name)
	}
	return nil
}

// ValidatePartitionKey checks a PartitionKey value against the service's
// rules for keys, the ones every write and point read checks: valid UTF-8,
// none of / \ # ? or the control characters U+0000–U+001F and
// U+007F–U+009F (ErrInvalidInput), and at most MaxKeyUTF16 UTF-16 code
// units (ErrKeyTooLarge, code KeyValueTooLarge). The empty key is valid.
func ValidatePartitionKey(pk string) error { return validateKey(PartitionKeyName, pk) }

// ValidateRowKey checks a RowKey value against the service's rules for
// keys, the same as ValidatePartitionKey's; the error names the RowKey.
func ValidateRowKey(rk string) error { return validateKey(RowKeyName, rk) }

// validateKey checks a PartitionKey or RowKey value; which names it in the
// error.
func validateKey(which, k string) error {
	if len(k) <= MaxKeyUTF16 && plainKey(k) {
		return nil
	}
	return checkKey(which, k)
}

// checkKey is validateKey without its fast path: every rule, checked
// rune by rune.
func checkKey(which, k string) error {
	if !utf8.ValidString(k) {
		return newError(ErrInvalidInput, "%s is not valid UTF-8", which)
	}
	for i, r := range k {
		switch {
		case r == '/', r == '\\', r == '#', r == '?',
			r <= 0x1F, r >= 0x7F && r <= 0x9F:
			return newError(ErrInvalidInput, "%s %q: character %U at byte %d is not allowed in keys (/ \\ # ? and control characters U+0000-U+001F, U+007F-U+009F)", which, abbrev(k), r, i)
		}
	}
	if n := utf16Len(k); n > MaxKeyUTF16 {
		return newError(ErrKeyTooLarge, "%s is %d UTF-16 code units; the limit is %d (1 KiB)", which, n, MaxKeyUTF16)
	}
	return nil
}

// plainKey reports whether k is printable ASCII without the characters
// keys forbid: a valid key of len(k) UTF-16 code units, found in one pass
// over its bytes. Keys are checked on every read and write.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if !plainKeyByte[k[i]] {
			return false
		}
	}
	return true
}

// plainKeyByte marks the bytes plainKey accepts: U+0020 to U+007E but / \ # ?.
var plainKeyByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7F; c++ {
		t[c] = c != '/' && c != '\\' && c != '#' && c != '?'
	}
	return t
}()

func abbrev(s string) string {
	if len(s) <= 40 {
		return s
	}
	i := 40
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// ValidatePropertyName checks a custom property name: 1 to 255 characters,
// a C#-identifier-like name (a letter or '_' first, then letters, digits
// and '_'; no '-' since 2009-04-14) and not a system property name.
func ValidatePropertyName(name string) error {
	if asciiIdentifier(name) {
		return checkSystemName(name)
	}
	if name == "" {
		return newError(ErrPropertyNameInvalid, "property name is empty")
	}
	if !utf8.ValidString(name) {
		return newError(ErrPropertyNameInvalid, "property name %q is not valid UTF-8", name)
	}
	if n := utf8.RuneCountInString(name); n > MaxPropertyNameLen {
		return newError(ErrPropertyNameTooLong, "property name %q is %d characters; the limit is %d", abbrev(name), n, MaxPropertyNameLen)
	}
	if i, r, ok := identifierChars(name); !ok {
		return newError(ErrPropertyNameInvalid, "property name %q: character %q at byte %d is not allowed (names are C# identifiers: a letter or '_' first, then letters, digits and '_')", abbrev(name), r, i)
	}
	return checkSystemName(name)
}

// checkPropertyName is ValidatePropertyName that also returns the name's
// length in UTF-16 code units (its measure in EntitySize).
func checkPropertyName(name string) (int, error) {
	if asciiIdentifier(name) {
		return len(name), checkSystemName(name)
	}
	if err := ValidatePropertyName(name); err != nil {
		return 0, err
	}
	return utf16Len(name), nil
}

// identifierChars reports whether name, valid UTF-8, is made of the
// characters of a property name: a letter or '_' first, then letters,
// digits, '_' and combining marks. If not, it returns the first character
// that is not allowed and its byte offset (0 and utf8.RuneError for "").
func identifierChars(name string) (int, rune, bool) {
	if asciiIdentifier(name) {
		return 0, 0, true
	}
	if name == "" {
		return 0, utf8.RuneError, false
	}
	for i, r := range name {
		ok := r == '_' || unicode.IsLetter(r)
		if i > 0 {
			ok = ok || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Pc, r)
		}
		if !ok {
			return i, r, false
		}
	}
	return 0, 0, true
}

// asciiIdentifier reports whether name is a valid property name of ASCII
// letters, digits and '_' (not a digit first): the common case, which
// needs no decoding.
func asciiIdentifier(name string) bool {
	if name == "" || len(name) > MaxPropertyNameLen {
		return false
	}
	if identByte[name[0]]&identFirst == 0 {
		return false
	}
	for i := 1; i < len(name); i++ {
		if identByte[name[i]] == 0 {
			return false
		}
	}
	return true
}

// identByte classes the bytes of ASCII identifiers: identFirst for those
// that may begin one (letters and '_'), identNext for those that may
// follow (digits too), 0 for the others.
var identByte = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
			t[c] = identFirst | identNext
		case '0' <= c && c <= '9':
			t[c] = identNext
		}
	}
	return t
}()

const (
	identFirst = 1 << iota
	identNext
)

// checkSystemName rejects the names of the system properties.
func checkSystemName(name string) error {
	switch name {
	case PartitionKeyName, RowKeyName, TimestampName:
		return newError(ErrPropertyNameInvalid, "property name %q is a system property", name)
	}
	return nil
}

// checkValue checks one property value, and returns valueSize(v).
func checkValue(name string, v Value) (int, error) {
	switch v.kind {
	case KindString:
		n, ok := utf16LenValid(v.str)
		if !ok {
			return 0, newError(ErrInvalidInput, "property %q: string is not valid UTF-8", name)
		}
		if n > MaxStringUTF16 {
			return 0, newError(ErrPropertyValueTooLarge, "property %q: string is %d UTF-16 code units; the limit is %d (64 KiB)", name, n, MaxStringUTF16)
		}
		return 4 + 2*n, nil
	case KindBinary:
		if len(v.str) > MaxBinaryLen {
			return 0, newError(ErrPropertyValueTooLarge, "property %q: binary is %d bytes; the limit is %d (64 KiB)", name, len(v.str), MaxBinaryLen)
		}
	case KindDateTime:
		t := int64(v.num)
		if t < minTicks || t > maxTicks {
			return 0, newError(ErrOutOfRangeInput, "property %q: DateTime is outside %s..%s", name, edmfmt.DateTime(MinDateTime), edmfmt.DateTime(MaxDateTime))
		}
	case KindInt32, KindInt64, KindDouble, KindBool, KindGUID, KindNull:
	default:
		return 0, newError(ErrInvalidValueType, "property %q: unknown kind %d", name, v.kind)
	}
	return valueSize(v), nil
}

var (
	minTicks = TimeToTicks(MinDateTime)
	maxTicks = TimeToTicks(MaxDateTime)
)

// validateEntity checks an entity about to be written: keys, property names,
// values, the property count and the entity size. Null properties are
// ignored (they are not stored).
func validateEntity(e *Entity) error {
	var buf [32]namedValue
	_, _, err := checkEntity(e, buf[:0])
	return err
}

// checkEntity is validateEntity that also appends e's non-null properties
// to ps, for appendValidRecord to encode, and returns PayloadSize(e): one
// pass over them for all three.
func checkEntity(e *Entity, ps []namedValue) ([]namedValue, int, error) {
	if err := validateKey(PartitionKeyName, e.PartitionKey); err != nil {
		return ps, 0, err
	}
	if err := validateKey(RowKeyName, e.RowKey); err != nil {
		return ps, 0, err
	}
	// One pass checks each property and sums EntitySize and PayloadSize
	// (a transaction's limit): a map's iteration costs more than either.
	n, size := 0, 4+2*(utf16Len(e.PartitionKey)+utf16Len(e.RowKey))
	payload := payloadKeysSize(e.PartitionKey, e.RowKey)
	for name, v := range e.Properties {
		if v.IsNull() {
			continue
		}
		n++
		units, err := checkPropertyName(name)
		if err != nil {
			return ps, 0, err
		}
		vsize, err := checkValue(name, v)
		if err != nil {
			return ps, 0, err
		}
		size += 8 + 2*units + vsize
		payload += payloadPropSize(name, v)
		ps = append(ps, namedValue{name: name, v: v})
	}
	if n > MaxCustomProperties {
		return ps, 0, newError(ErrTooManyProperties, "entity (%q, %q) has %d custom properties; the limit is %d", abbrev(e.PartitionKey), abbrev(e.RowKey), n, MaxCustomProperties)
	}
	if size > MaxEntitySize {
		return ps, 0, newError(ErrEntityTooLarge, "entity (%q, %q) is %d bytes; the limit is %d (1 MiB)", abbrev(e.PartitionKey), abbrev(e.RowKey), size, MaxEntitySize)
	}
	return ps, payload, nil
}

// checkMerged checks the limits that a merge can break even when both the
// stored entity and the merged-in properties are valid on their own.
func checkMerged(e *Entity) error {
	n := 0
	for _, v := range e.Properties {
		if !v.IsNull() {
			n++
		}
	}
	if n > MaxCustomProperties {
		return newError(ErrTooManyProperties, "merged entity (%q, %q) would have %d custom properties; the limit is %d", abbrev(e.PartitionKey), abbrev(e.RowKey), n, MaxCustomProperties)
	}
	if size := EntitySize(e); size > MaxEntitySize {
		return newError(ErrEntityTooLarge, "merged entity (%q, %q) would be %d bytes; the limit is %d (1 MiB)", abbrev(e.PartitionKey), abbrev(e.RowKey), size, MaxEntitySize)
	}
	return nil
}
