package filter_test

import (
	"fmt"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

var fuzzSeeds = []string{
	"PartitionKey eq 'a' and RowKey ge 'b' and RowKey lt 'c'",
	"(PartitionKey eq 'a' or PartitionKey eq 'b') and not (Age gt 30)",
	"5 lt Age or Name eq 'it''s'",
	"Price le 200.5 and Price gt 3.5e-2 or Count eq 12345678901L",
	"IsActive and not Deleted",
	"T ge datetime'2008-07-10T00:00:00.1234567Z' and T lt datetime'2008-07-10T02:00:00+02:00'",
	"G ne guid'0f8fad5b-d9cb-469f-a165-70867728950e' and B eq X'0A0b' or C eq binary''",
	"D eq NaN or D eq -INF or D eq 1.5d or D eq -0.0",
	"PartitionKey gt '\U00010000' and PartitionKey lt '\uE000'",
	"not not (((A eq 1)))",
	"PartitionKey eq 1 or RowKey le ''",
	"true",
	"not false",
	"(true) and PartitionKey eq 'a'",
	"false or RowKey eq 'r' and not (not true)",
	"(true and RowKey eq '1') and ((false or PartitionKey eq 'p1') or PartitionKey eq 'p2') or PartitionKey eq 'p3'",
	"true eq IsActive or false ne B",
	"true eq false",
	"not 5 or true",
	"A eq 2147483648",
	"A eq",
	"",
}

// FuzzParse: Parse never panics, and whatever parses prints to a string
// that parses to the identical tree and prints identically.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := filter.ParseWithOptions(s, nil)
		if err != nil {
			if _, ok := err.(*filter.SyntaxError); !ok {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		out := p.String()
		q, err := filter.ParseWithOptions(out, nil)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q: %v", s, out, err)
		}
		if !filter.Equal(p.Expr(), q.Expr()) {
			t.Fatalf("Parse(%q) = %s, reparsed to a different tree %s", s, out, q)
		}
		if q.String() != out {
			t.Fatalf("String not stable: %q then %q", out, q.String())
		}
		_ = p.Explain()
	})
}

// fuzzEntities is FuzzPlan's fixed data set: keys at the edges of the
// order (empty, NUL-extended, surrogate pairs around U+E000) and typed
// properties.
var fuzzEntities = func() []*localtable.Entity {
	keys := []string{"", "\x00", "a", "a\x00", "a\x00\x00", "ab", "b", "m", "z", "\uD7FF", "\U00010000", "\uE000", "\uFFFF", "'"}
	vals := []localtable.Value{
		localtable.Int32Value(1), localtable.Int64Value(1), localtable.DoubleValue(1.5),
		localtable.StringValue("a"), localtable.BoolValue(true),
	}
	var out []*localtable.Entity
	for i, pk := range keys {
		for j, rk := range keys {
			e := &localtable.Entity{PartitionKey: pk, RowKey: rk}
			e.Set("A", vals[(i+j)%len(vals)])
			out = append(out, e)
		}
	}
	return out
}()

// FuzzPlan: the key ranges of any filter are sorted, disjoint and
// non-empty, contain every entity of the data set that the filter
// matches, and are those of the reference planner (for filters short
// enough for its cubic time).
func FuzzPlan(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := filter.ParseWithOptions(s, nil)
		if err != nil {
			return
		}
		rs, ok := p.KeyRanges()
		if len(s) <= 1000 {
			if want, wok := filter.RefKeyRanges(p); ok != wok || !sameRanges(rs, want) {
				t.Fatalf("%s:\n got %v ok=%v\nwant %v ok=%v", p, rs, ok, want, wok)
			}
		}
		if !ok {
			if rs != nil {
				t.Fatalf("%s: ranges with ok=false", p)
			}
			return
		}
		checkRanges(t, p, rs)
		for _, e := range fuzzEntities {
			if p.Match(e) && !containsAny(rs, e) {
				t.Fatalf("%s matches (%q, %q), which no range contains:\n%s", p, e.PartitionKey, e.RowKey, p.Explain())
			}
		}
	})
}

// builderInput decodes fuzz bytes into builder calls; past the end of the
// input it reads zeros.
type builderInput struct {
	b       []byte
	invalid bool // a leaf that must make the filter carry an error
}

func (in *builderInput) byte() byte {
	if len(in.b) == 0 {
		return 0
	}
	c := in.b[0]
	in.b = in.b[1:]
	return c
}

func (in *builderInput) uint64() uint64 {
	var u uint64
	for range 8 {
		u = u<<8 | uint64(in.byte())
	}
	return u
}

func (in *builderInput) bytes() []byte {
	n := min(int(in.byte()%16), len(in.b))
	b := in.b[:n]
	in.b = in.b[n:]
	return b
}

// Property names for FuzzBuilder: valid ones, and ones no filter can
// write.
var (
	fuzzNames   = []string{"A", "PartitionKey", "RowKey", "Timestamp", "_x1", "Größe", "名前", "AND", "True", "NaN_", "x٣"}
	fuzzBadName = []string{"and", "NaN", "INF", "true", "1x", "a b", "", "a-b", "\xff", "A'"}
)

// integer returns an integer of extreme or small magnitude.
func (in *builderInput) integer() int64 {
	switch in.byte() % 8 {
	case 0:
		return math.MaxInt32 + int64(in.byte()%3) - 1
	case 1:
		return math.MinInt32 + int64(in.byte()%3) - 1
	case 2:
		return math.MaxInt64 - int64(in.byte()%2)
	case 3:
		return math.MinInt64 + int64(in.byte()%2)
	case 4:
		return int64(in.uint64())
	}
	return int64(int8(in.byte()))
}

// value returns a Go value for a comparison and the Value the builder must
// make of it, by the documented rules; ok is false if it has no literal.
func (in *builderInput) value() (v any, want localtable.Value, ok bool) {
	lit := func(n int64) localtable.Value {
		if n == int64(int32(n)) {
			return localtable.Int32Value(int32(n))
		}
		return localtable.Int64Value(n)
	}
	switch in.byte() % 20 {
	case 0:
		n := in.integer()
		return int(n), lit(n), true
	case 1:
		n := in.integer()
		return n, lit(n), true
	case 2:
		n := int32(in.integer())
		return n, localtable.Int32Value(n), true
	case 3:
		n := int16(in.integer())
		return n, localtable.Int32Value(int32(n)), true
	case 4:
		n := in.integer()
		return age(n), lit(n), true
	case 5:
		u := uint64(in.integer())
		return u, lit(int64(u)), u <= math.MaxInt64
	case 6:
		u := uint32(in.integer())
		return u, lit(int64(u)), true
	case 7:
		n := in.integer()
		return filter.Int64(n), localtable.Int64Value(n), true
	case 8:
		f := math.Float64frombits(in.uint64())
		switch in.byte() % 6 {
		case 0:
			f = math.NaN()
		case 1:
			f = math.Copysign(0, -1)
		case 2:
			f = math.Inf(int(in.byte()%2)*2 - 1)
		}
		want := localtable.DoubleValue(f)
		if f != f {
			want = localtable.DoubleValue(math.NaN())
		}
		return f, want, true
	case 9:
		f := math.Float32frombits(uint32(in.uint64()))
		want := localtable.DoubleValue(float64(f))
		if f != f {
			want = localtable.DoubleValue(math.NaN())
		}
		return score(f), want, true
	case 10, 11:
		s := string(in.bytes())
		return s, localtable.StringValue(s), utf8.ValidString(s)
	case 12:
		s := string(in.bytes())
		return name(s), localtable.StringValue(s), utf8.ValidString(s)
	case 13:
		b := in.byte()%2 == 0
		return flag(b), localtable.BoolValue(b), true
	case 14:
		b := in.bytes()
		return b, localtable.BinaryValue(b), true
	case 15:
		var g localtable.GUID
		copy(g[:], in.bytes())
		return g, localtable.GUIDValue(g), true
	case 16:
		ticks := int64(in.uint64() >> 2)
		t := localtable.TicksToTime(ticks)
		max := localtable.TimeToTicks(localtable.MaxDateTime)
		return t, localtable.DateTimeTicksValue(ticks), ticks <= max
	case 17:
		v := localtable.Int64Value(in.integer())
		return v, v, true
	case 18:
		return nil, localtable.Value{}, false
	}
	return struct{}{}, localtable.Value{}, false
}

// filter builds a filter from the input: a comparison, a constant, or
// And, Or or Not of smaller filters, sometimes nil.
func (in *builderInput) filter(depth int) *filter.Filter {
	k := in.byte()
	if depth <= 0 {
		k %= 4
	}
	switch k % 8 {
	case 4, 5:
		fs := make([]*filter.Filter, in.byte()%4)
		for i := range fs {
			if in.byte()%8 != 0 {
				fs[i] = in.filter(depth - 1)
			}
		}
		if k%8 == 4 {
			return filter.And(fs...)
		}
		return filter.Or(fs...)
	case 6:
		return filter.Not(in.filter(depth - 1))
	case 7:
		return filter.Const(in.byte()%2 == 0)
	}
	var field filter.Field
	switch c := in.byte(); {
	case c < 8:
		field = filter.Prop(fuzzBadName[int(c)%len(fuzzBadName)])
		in.invalid = true
	case c < 16:
		field = filter.PartitionKey()
	case c < 24:
		field = filter.RowKey()
	default:
		field = filter.Prop(fuzzNames[int(c)%len(fuzzNames)])
	}
	op := filter.Op(in.byte() % 7)
	if op > filter.OpLe {
		in.invalid = true
	}
	v, want, ok := in.value()
	if !ok {
		in.invalid = true
	}
	f := field.Compare(op, v)
	if f.Err() == nil {
		// The literal has the documented type and value, and Eq matches
		// an entity holding the value (in both integer types, for an
		// Int32 literal), unless it is NaN.
		c := f.Expr().(*filter.Comparison)
		if !c.Value.Equal(want) {
			panic(fmt.Sprintf("%T %v: literal %s, want %s", v, v, filter.Literal(c.Value), filter.Literal(want)))
		}
		eq := field.Eq(v)
		holders := []localtable.Value{want}
		if want.Kind() == localtable.KindInt32 {
			holders = append(holders, localtable.Int64Value(int64(want.Int32())), localtable.DoubleValue(float64(want.Int32())))
		}
		for _, h := range holders {
			e := (&localtable.Entity{PartitionKey: "p", RowKey: "r"}).Set("Prop", h)
			e.Properties[c.Property] = h
			if c.Property == "PartitionKey" || c.Property == "RowKey" || c.Property == "Timestamp" {
				continue // the entity's own fields, not properties
			}
			if match := eq.Match(e); !match && !(h.Kind() == localtable.KindDouble && math.IsNaN(h.Double())) {
				panic(fmt.Sprintf("%s does not match a property holding %s", eq, filter.Literal(h)))
			}
		}
	}
	return f
}

// FuzzBuilder builds filters with the builder from fuzz input (operators,
// property names, values of every supported Go type, named types, NaN,
// ±0, extreme integers, arbitrary strings, nested And, Or and Not) and
// checks that a filter carries an error exactly when some input had no
// literal, and otherwise that its String parses to the identical tree,
// which evaluates alike on a data set.
func FuzzBuilder(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 30, 0, 0, 0, 42},
		{4, 3, 1, 0, 10, 2, 8, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 13, 1},
		{5, 2, 1, 0, 40, 1, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 17, 2, 1},
		{6, 0, 35, 3, 10, 5, 'i', 't', '\'', 's', '!'},
		{0, 9, 2, 16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0, 40, 0, 5, 2, 1},
		{0, 40, 0, 11, 2, 0xc3, 0x28},
		{0, 30, 6, 0, 0, 0},
		{7, 1},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &builderInput{b: data}
		var b *filter.Filter
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatal(r)
				}
			}()
			b = in.filter(6)
		}()
		if err := b.Err(); (err != nil) != in.invalid {
			t.Fatalf("%s: error %v, but invalid input %v", b, err, in.invalid)
		}
		if b == nil || b.Err() != nil {
			return
		}
		s := b.String()
		p, err := filter.ParseWithOptions(s, nil)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if !filter.Equal(p.Expr(), b.Expr()) || p.String() != s {
			t.Fatalf("%s: reparsed to a different tree %s", s, p)
		}
		for _, e := range fuzzEntities {
			if p.Match(e) != b.Match(e) {
				t.Fatalf("%s: built and parsed filters differ on (%q, %q)", s, e.PartitionKey, e.RowKey)
			}
		}
	})
}
