package entityjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/edmfmt"
	"github.com/localtable/localtable/internal/odata"
	"github.com/localtable/localtable/internal/ticktime"
)

// This file reads and writes entity JSON values and members.

// AnnotationSuffix ends the name of the member that annotates a
// property's type: "Name@odata.type": "Edm.Int64".
const AnnotationSuffix = "@odata.type"

// errValueType is a value that does not fit its type: InvalidInput, as
// the service answers a JSON value its annotation (or, for the keys,
// Edm.String) does not admit.
func errValueType(name, want string) error {
	return errInvalidInput("The value of property " + odata.Quote(name) + " is not a valid " + want + ".")
}

func errBadValue(name, typ string, detail string) error {
	return errInvalidInput("The value of property " + odata.Quote(name) + " is not a valid " + typ + ": " + detail)
}

// ReadObject reads a request body that must be one JSON object into its
// member names, in order, and each member's raw JSON, as the service reads
// it: a name given twice is DuplicatePropertiesSpecified, a name of
// invalid UTF-8 or with a lone surrogate escape PropertyNameInvalid,
// anything but one object InvalidInput (*localtable.Error values).
func ReadObject(body []byte) (keys []string, vals map[string]json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	bad := func(why string) error { return errInvalidInput("The request body is not a valid JSON object: " + why) }
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, bad(err.Error())
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, bad("it does not start with '{'")
	}
	vals = make(map[string]json.RawMessage)
	for dec.More() {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, bad(err.Error())
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, bad("a member name is not a string")
		}
		// The decoder replaces invalid text with U+FFFD: check the name
		// as sent, the bytes it has just read (a separator, space, then
		// the quoted name).
		if sent := body[before:dec.InputOffset()]; !validText(sent[bytes.IndexByte(sent, '"')+1:]) {
			return nil, nil, errNameText()
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, bad(err.Error())
		}
		if _, dup := vals[k]; dup {
			return nil, nil, errDuplicateProperty(k)
		}
		vals[k] = raw
		keys = append(keys, k)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, bad(err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, bad("data follows the object")
	}
	return keys, vals, nil
}

// DecodeRequest reads an entity from the body of a write request as the
// service reads it, as Decode does, except that the keys may be absent
// (the URL of Update, Merge and their batch forms names them): with
// needKeys, a body without both is PropertiesNeedValue. hasKeys reports
// whether the body had both keys. The entity's strings may share one copy
// of body (body itself is not kept).
func DecodeRequest(body []byte, needKeys bool) (e localtable.Entity, hasKeys bool, err error) {
	// One copy of the body, which no one writes, holds the names and
	// string values of the common flat object, instead of a copy each.
	frozen := string(body)
	keys, vals, ok := scanFlatObject(unsafe.Slice(unsafe.StringData(frozen), len(frozen)), true)
	if !ok {
		if keys, vals, err = ReadObject(body); err != nil {
			return e, false, err
		}
	}
	return decodeMembers(keys, vals, needKeys, ok)
}

// decodeMembers is DecodeRequest on an object already read. frozen says
// that the raw values are never written, and strings may alias them.
func decodeMembers(keys []string, vals map[string]json.RawMessage, needKeys, frozen bool) (e localtable.Entity, hasKeys bool, err error) {
	var havePK, haveRK bool
	props := 0
	for _, k := range keys {
		if !strings.HasPrefix(k, "odata.") && !strings.Contains(k, "@") && k != localtable.TimestampName &&
			k != localtable.PartitionKeyName && k != localtable.RowKeyName {
			props++
		}
	}
	if props > 0 {
		e.Properties = make(localtable.Properties, props)
	}
	var annBuf [64]byte
	for _, k := range keys {
		raw := vals[k]
		switch {
		case strings.HasPrefix(k, "odata.") || strings.Contains(k, "@"):
			continue
		case k == localtable.TimestampName:
			continue
		case k == localtable.PartitionKeyName || k == localtable.RowKeyName:
			if isNull(raw) {
				continue
			}
			s, err := unquote(raw, frozen)
			if err != nil {
				if err == errText {
					return e, false, errValueText(k)
				}
				return e, false, errValueType(k, "Edm.String")
			}
			if k == localtable.PartitionKeyName {
				e.PartitionKey, havePK = s, true
			} else {
				e.RowKey, haveRK = s, true
			}
			continue
		}
		typ := ""
		ann := append(append(annBuf[:0], k...), AnnotationSuffix...)
		if a, ok := vals[string(ann)]; ok {
			if typ, err = unquote(a, frozen); err == errText {
				return e, false, errValueText(k)
			} else if err != nil {
				return e, false, errInvalidInput("The annotation " + odata.Quote(k+AnnotationSuffix) + " is not a string.")
			}
		}
		v, err := decodeValue(k, raw, typ, frozen)
		if err != nil {
			return e, false, err
		}
		if !v.IsNull() {
			e.Set(k, v)
		}
	}
	if needKeys && (!havePK || !haveRK) {
		return e, false, &localtable.Error{Code: localtable.CodePropertiesNeedValue, Message: "The values are not specified for all properties in the entity: PartitionKey and RowKey are required."}
	}
	return e, havePK && haveRK, nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// unquote reads the JSON string raw. Strings of valid UTF-8 without
// escapes, most of them, are copied as they are, or with frozen (raw is
// never written) not copied at all.
func unquote(raw json.RawMessage, frozen bool) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		in := raw[1 : len(raw)-1]
		plain, ascii := true, true
		for _, c := range in {
			if c == '\\' || c == '"' || c < 0x20 {
				plain = false
				break
			}
			if c >= utf8.RuneSelf {
				ascii = false
			}
		}
		if plain && (ascii || utf8.Valid(in)) {
			if frozen && len(in) > 0 {
				return unsafe.String(&in[0], len(in)), nil
			}
			return string(in), nil
		}
	}
	// encoding/json replaces invalid UTF-8 and lone surrogate escapes
	// with U+FFFD: refuse them first, as the service refuses them, rather
	// than store text the client did not send.
	if len(raw) >= 2 && raw[0] == '"' && !validText(raw[1:len(raw)-1]) {
		return "", errText
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// errText is unquote's error for a string of invalid text.
var errText = errors.New("invalid UTF-8 or a lone surrogate escape")

// validText reports whether the inside of a JSON string literal (and
// what may follow it) is valid text: valid UTF-8 (which excludes encoded
// surrogates), and every \u escape of a surrogate one of a high-low pair.
// It stops at the string's closing quote; the JSON syntax itself is
// checked elsewhere.
func validText(in []byte) bool {
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '"':
			return true
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			i += n
		case c != '\\':
			i++
		case i+1 < len(in) && in[i+1] == 'u':
			r := hex4(in[i+2:])
			i += 6
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return false
			case r >= 0xD800 && r < 0xDC00:
				if i+1 >= len(in) || in[i] != '\\' || in[i+1] != 'u' {
					return false
				}
				if lo := hex4(in[i+2:]); lo < 0xDC00 || lo > 0xDFFF {
					return false
				}
				i += 6
			}
		default:
			i += 2
		}
	}
	return true
}

// hex4 reads the four hex digits an escape \u has at the start of b: -1
// if there are not four.
func hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	n := 0
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	return n
}

// decodeValue types one JSON value, by its annotation typ when not empty.
// With frozen, raw is never written and the value's string may alias it.
func decodeValue(name string, raw json.RawMessage, typ string, frozen bool) (localtable.Value, error) {
	if isNull(raw) {
		return localtable.Value{}, nil
	}
	var str string
	isStr := raw[0] == '"'
	if isStr {
		var err error
		if str, err = unquote(raw, frozen); err == errText {
			return localtable.Value{}, errValueText(name)
		} else if err != nil {
			return localtable.Value{}, errInvalidInput("The value of property " + odata.Quote(name) + " is not valid JSON.")
		}
	}
	if raw[0] == '{' || raw[0] == '[' {
		return localtable.Value{}, errValueType(name, "property value (objects and arrays are not supported)")
	}
	isBool := string(raw) == "true" || string(raw) == "false"
	isNum := !isStr && !isBool
	if typ == "" {
		switch {
		case isStr:
			return localtable.StringValue(str), nil
		case isBool:
			return localtable.BoolValue(string(raw) == "true"), nil
		}
		n := string(raw)
		if !strings.ContainsAny(n, ".eE") {
			if i, err := strconv.ParseInt(n, 10, 64); err == nil && i >= math.MinInt32 && i <= math.MaxInt32 {
				return localtable.Int32Value(int32(i)), nil
			}
		}
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return localtable.Value{}, errBadValue(name, "Edm.Double", "out of range")
		}
		return localtable.DoubleValue(f), nil
	}
	kind, ok := localtable.ParseKind(typ)
	if !ok {
		return localtable.Value{}, errInvalidInput("The type " + odata.Quote(typ) + " of property " + odata.Quote(name) + " is not an Edm type.")
	}
	// An annotated value converts as the service's OData reader converts
	// it: a JSON number only to Int32 (if integral and in range) or
	// Double, a JSON Boolean only to Boolean, and a JSON string to any
	// type by the .NET parser of that type.
	switch kind {
	case localtable.KindString:
		if !isStr {
			return localtable.Value{}, errValueType(name, typ)
		}
		return localtable.StringValue(str), nil
	case localtable.KindBool:
		switch {
		case isBool:
			return localtable.BoolValue(string(raw) == "true"), nil
		case isStr:
			if b, ok := parseDotNetBool(str); ok {
				return localtable.BoolValue(b), nil
			}
		}
		return localtable.Value{}, errValueType(name, typ)
	case localtable.KindInt32:
		text := string(raw)
		if isStr {
			text = trimNumberSpace(str)
		}
		i, err := strconv.ParseInt(text, 10, 32)
		if isBool || err != nil {
			return localtable.Value{}, errValueType(name, typ)
		}
		return localtable.Int32Value(int32(i)), nil
	case localtable.KindInt64:
		// Int64 travels as a string: a JSON number is refused, as the
		// service's reader refuses it ("CannotConvertInt64OrDecimal").
		if !isStr {
			return localtable.Value{}, errValueType(name, typ+" (a JSON string)")
		}
		i, err := strconv.ParseInt(trimNumberSpace(str), 10, 64)
		if err != nil {
			return localtable.Value{}, errValueType(name, typ)
		}
		return localtable.Int64Value(i), nil
	case localtable.KindDouble:
		var f float64
		var err error
		switch {
		case isNum:
			f, err = strconv.ParseFloat(string(raw), 64)
		case isStr:
			var ok bool
			if f, ok = parseDotNetDouble(str); !ok {
				err = strconv.ErrSyntax
			}
		default:
			err = strconv.ErrSyntax
		}
		if err != nil {
			return localtable.Value{}, errValueType(name, typ)
		}
		return localtable.DoubleValue(f), nil
	}
	if !isStr {
		return localtable.Value{}, errValueType(name, typ)
	}
	switch kind {
	case localtable.KindDateTime:
		t, err := ParseDateTime(str)
		if err != nil {
			return localtable.Value{}, errBadValue(name, typ, err.Error())
		}
		return localtable.DateTimeValue(t), nil
	case localtable.KindGUID:
		g, err := parseDotNetGUID(str)
		if err != nil {
			return localtable.Value{}, errBadValue(name, typ, "want 32 hexadecimal digits, as 8-4-4-4-12 (in braces or parentheses, or not) or undivided")
		}
		return localtable.GUIDValue(g), nil
	case localtable.KindBinary:
		if strings.ContainsFunc(str, isBase64Space) {
			str = strings.Map(dropBase64Space, str)
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return localtable.Value{}, errBadValue(name, typ, "not base64")
		}
		return localtable.BinaryValue(b), nil
	}
	return localtable.Value{}, errValueType(name, typ)
}

// ParseDateTime reads the text of an Edm.DateTime as the service reads
// it: an RFC 3339 time, or one without a zone, read as UTC. (A Value
// truncates fractions beyond 100 ns.)
func ParseDateTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err == nil {
		return t.UTC(), nil
	}
	if t, err2 := time.Parse("2006-01-02T15:04:05.999999999", s); err2 == nil {
		return t, nil
	}
	return time.Time{}, err
}

func sortedNames(p localtable.Properties) []string {
	return slices.Sorted(maps.Keys(p))
}

// Annotation returns the "Name@odata.type" annotation v is written with
// at odata=minimalmetadata, or "" when its JSON form names its type: only
// Edm.Binary, Edm.DateTime, Edm.Guid, Edm.Int64 and the non-finite
// Edm.Double values are annotated.
func Annotation(v localtable.Value) string {
	switch v.Kind() {
	case localtable.KindBinary, localtable.KindDateTime, localtable.KindGUID, localtable.KindInt64:
		return v.Kind().String()
	case localtable.KindDouble:
		if f := v.Double(); math.IsNaN(f) || math.IsInf(f, 0) {
			return v.Kind().String()
		}
	}
	return ""
}

// AppendValue appends the JSON form of v as the service writes it: Int64,
// DateTime, Guid, Binary and the non-finite Doubles as strings, a finite
// Double always with a fraction or an exponent ("1.0", "1e+21"), so that
// it stays apart from an Int32. A null Value is null.
func AppendValue(b []byte, v localtable.Value) []byte {
	switch v.Kind() {
	case localtable.KindString:
		return AppendString(b, v.String())
	case localtable.KindInt32:
		return strconv.AppendInt(b, int64(v.Int32()), 10)
	case localtable.KindInt64:
		b = append(b, '"')
		b = strconv.AppendInt(b, v.Int64(), 10)
		return append(b, '"')
	case localtable.KindDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return AppendString(b, edmfmt.Double(f))
		}
		if d, ok := appendShortDecimal(b, f); ok {
			return d
		}
		n := len(b)
		if a := math.Abs(f); a == 0 || (a >= 1e-7 && a < 1e21) {
			b = strconv.AppendFloat(b, f, 'f', -1, 64)
		} else {
			b = strconv.AppendFloat(b, f, 'g', -1, 64)
		}
		if !hasFraction(b[n:]) {
			b = append(b, ".0"...)
		}
		return b
	case localtable.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case localtable.KindDateTime:
		if t := v.Ticks(); t >= 0 && t <= ticktime.Max {
			b = append(b, '"')
			b = ticktime.Append(b, t, false, ":")
			return append(b, '"')
		}
		return AppendString(b, edmfmt.DateTime(v.Time()))
	case localtable.KindGUID:
		return appendGUID(b, v.GUID())
	case localtable.KindBinary:
		// Base64 needs no escaping in JSON.
		s := v.BinaryString()
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, unsafe.Slice(unsafe.StringData(s), len(s)))
		return append(b, '"')
	}
	return append(b, "null"...)
}

const hexDigits = "0123456789abcdef"

// decimalPow10 are the powers of ten appendShortDecimal tries.
var decimalPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6}

// appendShortDecimal appends f as strconv.AppendFloat(b, f, 'f', -1, 64)
// does, and ".0" if that has no dot, when f is m/10^k for an integer m
// of less than 2^49 and k at most 6 (prices, scores, most of the Doubles
// people store), without strconv's search for the shortest digits: it
// finds the least k for which the integer m nearest f·10^k gives back f
// (m/10^k, both exact, is the division ParseFloat rounds as it rounds
// the decimal). That is the shortest text, and the only one of its
// length: f·10^k is within 3/16 of m (f is within half an ulp of m/10^k,
// the product within half its own ulp, both tiny below 2^49), and two
// texts of k fractional digits are more than 8 ulps of f apart. ok is
// false for any other f, zero among them (for the sign of -0).
func appendShortDecimal(b []byte, f float64) ([]byte, bool) {
	if f == 0 || !(math.Abs(f) < 1<<40) {
		return b, false
	}
	for k, p := range decimalPow10 {
		m := math.Round(f * p)
		if math.Abs(m) >= 1<<49 {
			return b, false
		}
		if m/p != f {
			continue
		}
		u := uint64(math.Abs(m))
		if f < 0 {
			b = append(b, '-')
		}
		if k == 0 {
			b = strconv.AppendUint(b, u, 10)
			return append(b, ".0"...), true
		}
		div := uint64(p)
		b = strconv.AppendUint(b, u/div, 10)
		b = append(b, '.')
		frac := u % div
		n := len(b)
		for range k {
			b = append(b, '0')
		}
		for i := len(b) - 1; i >= n; i-- {
			b[i] = byte('0' + frac%10)
			frac /= 10
		}
		return b, true
	}
	return b, false
}

// hasFraction reports whether the number text d has a dot or an exponent.
func hasFraction(d []byte) bool {
	for _, c := range d {
		if c == '.' || c == 'e' {
			return true
		}
	}
	return false
}

// plainByte marks the bytes AppendString copies as they are: printable
// ASCII but the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendGUID appends g as a JSON string in its lower-case 8-4-4-4-12 form.
func appendGUID(b []byte, g localtable.GUID) []byte {
	var t [38]byte
	t[0], t[9], t[14], t[19], t[24], t[37] = '"', '-', '-', '-', '-', '"'
	for i, at := range guidHexAt {
		h := hexPairs[g[i]]
		t[at], t[at+1] = h[0], h[1]
	}
	return append(b, t[:]...)
}

// guidHexAt is where each byte of a GUID is written in its quoted
// 8-4-4-4-12 form.
var guidHexAt = [16]uint8{1, 3, 5, 7, 10, 12, 15, 17, 20, 22, 25, 27, 29, 31, 33, 35}

// hexPairs holds each byte's two lower-case hex digits.
var hexPairs = func() (t [256][2]byte) {
	for c := range t {
		t[c] = [2]byte{hexDigits[c>>4], hexDigits[c&0xf]}
	}
	return t
}()

// plainRun returns where the run of plainBytes that starts at s[i] ends:
// eight bytes at a time while they are all plain, then byte by byte.
func plainRun(s string, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// A byte below 0x20, at or above 0x80, or a quote, a backslash
		// or DEL: the word is not all plain.
		q, bs, del := x^(ones*'"'), x^(ones*'\\'), x^(ones*0x7f)
		if ((x-ones*0x20)|(q-ones)|(bs-ones)|(del-ones))&^(x&q&bs&del)&highs|x&highs != 0 {
			break
		}
	}
	for i < len(s) && plainByte[s[i]] {
		i++
	}
	return i
}

// AppendString appends s as a JSON string, as the service escapes it:
// quotes, backslashes, control characters, DEL, U+2028 and U+2029
// escaped, and invalid UTF-8 as U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		// Runs of printable ASCII other than the quote and the
		// backslash, most of most strings, are copied whole.
		j := plainRun(s, i)
		if j > i {
			b = append(b, s[i:j]...)
			if i = j; i == len(s) {
				break
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+w]...)
		}
		i += w
	}
	return append(b, '"')
}
