package localtable

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/localtable/localtable/internal/edmfmt"
)

// Kind is the Edm type of a [Value].
type Kind uint8

// The Edm types. KindNull is the zero Value's kind: the service stores no
// nulls, so a property whose value is null is treated as absent.
const (
	KindNull     Kind = iota // no value; the property is absent
	KindString               // Edm.String
	KindInt32                // Edm.Int32
	KindInt64                // Edm.Int64
	KindDouble               // Edm.Double
	KindBool                 // Edm.Boolean
	KindDateTime             // Edm.DateTime
	KindGUID                 // Edm.Guid
	KindBinary               // Edm.Binary
)

var kindNames = [...]string{
	KindNull:     "Null",
	KindString:   "Edm.String",
	KindInt32:    "Edm.Int32",
	KindInt64:    "Edm.Int64",
	KindDouble:   "Edm.Double",
	KindBool:     "Edm.Boolean",
	KindDateTime: "Edm.DateTime",
	KindGUID:     "Edm.Guid",
	KindBinary:   "Edm.Binary",
}

// String returns the Edm type name, such as "Edm.Int64".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind returns the Kind named by an Edm type name such as "Edm.Int64".
func ParseKind(edmType string) (Kind, bool) {
	for k, name := range kindNames {
		if k != int(KindNull) && name == edmType {
			return Kind(k), true
		}
	}
	return KindNull, false
}

// Value is a typed Edm value: a tagged union of the eight Edm types, in the
// manner of log/slog.Value. The zero Value is null. Values are immutable and
// safe to copy and share.
type Value struct {
	kind Kind
	num  uint64 // Int32, Int64, Double bits, Bool, DateTime ticks
	str  string // String, Binary bytes, Guid bytes
}

// DateTime limits: the service accepts 1601-01-01T00:00:00Z through
// 9999-12-31T23:59:59.9999999Z, at 100 ns precision.
var (
	MinDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// ticksPerSecond is the number of 100 ns ticks in a second.
const ticksPerSecond = 10_000_000

// unixToTicks is the number of seconds between 0001-01-01 and 1970-01-01.
const unixToTicks = 62135596800

// TimeToTicks converts t to 100 ns ticks since 0001-01-01T00:00:00Z (the .NET
// epoch), truncating below 100 ns. Times outside years 1..9999 saturate to
// math.MinInt64 or math.MaxInt64, which no valid DateTime has.
func TimeToTicks(t time.Time) int64 {
	y := t.UTC().Year()
	if y < 1 {
		return math.MinInt64
	}
	if y > 9999 {
		return math.MaxInt64
	}
	return (t.Unix()+unixToTicks)*ticksPerSecond + int64(t.Nanosecond()/100)
}

// TicksToTime converts 100 ns ticks since 0001-01-01 to a UTC time.
func TicksToTime(ticks int64) time.Time {
	sec := ticks/ticksPerSecond - unixToTicks
	ns := (ticks % ticksPerSecond) * 100
	return time.Unix(sec, ns).UTC()
}

// StringValue returns an Edm.String value.
func StringValue(s string) Value { return Value{kind: KindString, str: s} }

// Int32Value returns an Edm.Int32 value.
func Int32Value(v int32) Value { return Value{kind: KindInt32, num: uint64(int64(v))} }

// Int64Value returns an Edm.Int64 value.
func Int64Value(v int64) Value { return Value{kind: KindInt64, num: uint64(v)} }

// DoubleValue returns an Edm.Double value. NaN and ±Inf are allowed.
func DoubleValue(v float64) Value { return Value{kind: KindDouble, num: math.Float64bits(v)} }

// BoolValue returns an Edm.Boolean value.
func BoolValue(v bool) Value {
	var n uint64
	if v {
		n = 1
	}
	return Value{kind: KindBool, num: n}
}

// DateTimeValue returns an Edm.DateTime value. The time is converted to UTC
// and truncated to 100 ns, the service's precision. A time outside
// [MinDateTime, MaxDateTime] makes a value that writes reject with
// OutOfRangeInput.
func DateTimeValue(t time.Time) Value {
	return Value{kind: KindDateTime, num: uint64(TimeToTicks(t))}
}

// DateTimeTicksValue returns an Edm.DateTime value from 100 ns ticks since
// 0001-01-01T00:00:00Z.
func DateTimeTicksValue(ticks int64) Value { return Value{kind: KindDateTime, num: uint64(ticks)} }

// GUIDValue returns an Edm.Guid value.
func GUIDValue(g GUID) Value { return Value{kind: KindGUID, str: string(g[:])} }

// BinaryValue returns an Edm.Binary value holding a copy of b.
func BinaryValue(b []byte) Value { return Value{kind: KindBinary, str: string(b)} }

// AnyValue converts a Go value to a Value, mapping its type as [Marshal]
// maps a field's: string as Edm.String; int8, int16, int32, uint8 and
// uint16 as Edm.Int32; int, int64 and uint32 as Edm.Int64; float32 and
// float64 as Edm.Double; bool, time.Time, GUID and []byte as Edm.Boolean,
// DateTime, Guid and Binary; a Value as itself; and the types defined on
// these (type Age int) as their underlying type. A pointer maps as what it
// points to. nil, a nil pointer and a nil []byte are the null Value. Any
// other type (uint, uint64, maps, structs other than time.Time and Value…)
// is an error wrapping ErrUnsupportedType: AnyValue never panics.
func AnyValue(v any) (Value, error) {
	switch x := v.(type) {
	case nil:
		return Value{}, nil
	case Value:
		return x, nil
	case string:
		return StringValue(x), nil
	case int32:
		return Int32Value(x), nil
	case int64:
		return Int64Value(x), nil
	case int:
		return Int64Value(int64(x)), nil
	case float64:
		return DoubleValue(x), nil
	case bool:
		return BoolValue(x), nil
	case time.Time:
		return DateTimeValue(x), nil
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return Value{}, nil
		}
		rv = rv.Elem()
	}
	gk, kind, ok := natural(rv.Type())
	if !ok {
		return Value{}, fmt.Errorf("%w: AnyValue of %s", ErrUnsupportedType, typeString(v))
	}
	f := field{goName: "value", gk: gk, edm: kind}
	return f.encode(rv.Type(), rv)
}

// Kind returns the value's Edm type.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v is the null Value.
func (v Value) IsNull() bool { return v.kind == KindNull }

func (v Value) mustBe(k Kind) {
	if v.kind != k {
		panic(fmt.Sprintf("localtable: Value kind is %s, not %s", v.kind, k))
	}
}

// Int32 returns the value of an Edm.Int32. It panics for other kinds.
func (v Value) Int32() int32 { v.mustBe(KindInt32); return int32(int64(v.num)) }

// Int64 returns the value of an Edm.Int64. It panics for other kinds.
func (v Value) Int64() int64 { v.mustBe(KindInt64); return int64(v.num) }

// Double returns the value of an Edm.Double. It panics for other kinds.
func (v Value) Double() float64 { v.mustBe(KindDouble); return math.Float64frombits(v.num) }

// Number returns the value of a number of any Edm type, Int32, Int64 or
// Double, as a float64 (an Int64 beyond 2^53 rounded to the nearest), and
// ok false for the other kinds. A property that holds numbers of more than
// one type (an SDK sends 5 as an Edm.Int32 and 5.5 as an Edm.Double; the
// service's filters compare them alike) reads with it where the accessor
// of one type would panic.
func (v Value) Number() (f float64, ok bool) {
	switch v.kind {
	case KindInt32:
		return float64(int32(int64(v.num))), true
	case KindInt64:
		return float64(int64(v.num)), true
	case KindDouble:
		return math.Float64frombits(v.num), true
	}
	return 0, false
}

// Bool returns the value of an Edm.Boolean. It panics for other kinds.
func (v Value) Bool() bool { v.mustBe(KindBool); return v.num != 0 }

// Time returns the value of an Edm.DateTime in UTC. It panics for other kinds.
func (v Value) Time() time.Time { v.mustBe(KindDateTime); return TicksToTime(int64(v.num)) }

// Ticks returns an Edm.DateTime as 100 ns ticks since 0001-01-01T00:00:00Z.
// It panics for other kinds.
func (v Value) Ticks() int64 { v.mustBe(KindDateTime); return int64(v.num) }

// GUID returns the value of an Edm.Guid. It panics for other kinds.
func (v Value) GUID() GUID {
	v.mustBe(KindGUID)
	var g GUID
	copy(g[:], v.str)
	return g
}

// Binary returns a copy of the bytes of an Edm.Binary. It panics for other
// kinds.
func (v Value) Binary() []byte { v.mustBe(KindBinary); return []byte(v.str) }

// BinaryString returns the bytes of an Edm.Binary as a string, without
// copying. It panics for other kinds.
func (v Value) BinaryString() string { v.mustBe(KindBinary); return v.str }

// Any returns the value as the natural Go type of its kind: string, int32,
// int64, float64, bool, time.Time, GUID, []byte, or nil for null.
func (v Value) Any() any {
	switch v.kind {
	case KindString:
		return v.str
	case KindInt32:
		return v.Int32()
	case KindInt64:
		return v.Int64()
	case KindDouble:
		return v.Double()
	case KindBool:
		return v.Bool()
	case KindDateTime:
		return v.Time()
	case KindGUID:
		return v.GUID()
	case KindBinary:
		return v.Binary()
	}
	return nil
}

// Equal reports whether v and w have the same kind and identical values.
// Doubles compare by bit pattern, so NaN equals NaN and 0 differs from -0;
// filters compare by value instead.
func (v Value) Equal(w Value) bool {
	return v.kind == w.kind && v.num == w.num && v.str == w.str
}

// String returns the string of an Edm.String value, and a textual form of
// any other: the wire's text (Int64 as digits, DateTime as RFC 3339 with up
// to 7 fractional digits, Binary as base64, Guid in 8-4-4-4-12 form), or
// "<null>" for null. It is the accessor of an Edm.String, as Int32 is of an
// Edm.Int32, but unlike the other accessors it never panics: check Kind
// first where a value of another kind must not pass for a string. It
// makes Value a fmt.Stringer.
func (v Value) String() string {
	switch v.kind {
	case KindString:
		return v.str
	case KindInt32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case KindInt64:
		return strconv.FormatInt(v.Int64(), 10)
	case KindDouble:
		return edmfmt.Double(v.Double())
	case KindBool:
		return strconv.FormatBool(v.Bool())
	case KindDateTime:
		return edmfmt.DateTime(v.Time())
	case KindGUID:
		return v.GUID().String()
	case KindBinary:
		return base64.StdEncoding.EncodeToString([]byte(v.str))
	}
	return "<null>"
}

// GUID is a 16-byte globally unique identifier, stored in the byte order of
// its canonical text form (RFC 4122), so that byte order equals the order of
// the text form.
type GUID [16]byte

// String returns the GUID in lower-case 8-4-4-4-12 form.
func (g GUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], g[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], g[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], g[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], g[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], g[10:16])
	return string(b[:])
}

// ParseGUID parses a GUID in 8-4-4-4-12 hexadecimal form, optionally in
// braces, in either case.
func ParseGUID(s string) (GUID, error) {
	var g GUID
	t := s
	if len(t) == 38 && t[0] == '{' && t[37] == '}' {
		t = t[1:37]
	}
	if len(t) != 36 || t[8] != '-' || t[13] != '-' || t[18] != '-' || t[23] != '-' {
		return g, fmt.Errorf("localtable: invalid GUID %q: want 8-4-4-4-12 hexadecimal digits", s)
	}
	h := strings.ReplaceAll(t, "-", "")
	if _, err := hex.Decode(g[:], []byte(h)); err != nil {
		return GUID{}, fmt.Errorf("localtable: invalid GUID %q: %v", s, err)
	}
	return g, nil
}

// MustParseGUID is like ParseGUID but panics on error. It is for constants
// in tests and examples.
func MustParseGUID(s string) GUID {
	g, err := ParseGUID(s)
	if err != nil {
		panic(err)
	}
	return g
}
