package entityjson_test

import (
	"encoding/base64"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/internal/edmfmt"
)

// appendValueText is AppendValue written with the text formatters of
// package localtable: what AppendValue, which appends without them, must
// agree with.
func appendValueText(b []byte, v localtable.Value) []byte {
	switch v.Kind() {
	case localtable.KindInt64:
		return entityjson.AppendString(b, strconv.FormatInt(v.Int64(), 10))
	case localtable.KindDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return entityjson.AppendString(b, edmfmt.Double(f))
		}
		var s string
		if a := math.Abs(f); a == 0 || (a >= 1e-7 && a < 1e21) {
			s = strconv.FormatFloat(f, 'f', -1, 64)
		} else {
			s = strconv.FormatFloat(f, 'g', -1, 64)
		}
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return append(b, s...)
	case localtable.KindDateTime:
		return entityjson.AppendString(b, edmfmt.DateTime(v.Time()))
	case localtable.KindGUID:
		return entityjson.AppendString(b, v.GUID().String())
	case localtable.KindBinary:
		return entityjson.AppendString(b, base64.StdEncoding.EncodeToString(v.Binary()))
	}
	return entityjson.AppendValue(b, v)
}

// AppendValue agrees with the text formatters on random and edge values
// of the kinds it formats itself, and allocates nothing into a buffer with
// room.
func TestAppendValueMatchesText(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := []localtable.Value{
		localtable.Int64Value(0), localtable.Int64Value(math.MinInt64), localtable.Int64Value(math.MaxInt64),
		localtable.DateTimeTicksValue(0), localtable.DateTimeTicksValue(-1), localtable.DateTimeTicksValue(3155378975999999999),
		localtable.DateTimeTicksValue(3155378976000000000), localtable.DateTimeValue(time.Date(2020, 2, 29, 1, 2, 3, 400, time.UTC)),
		localtable.BinaryValue(nil), localtable.BinaryValue([]byte{0xff}), localtable.GUIDValue(localtable.GUID{}),
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-7, 9.99e-8, 1e21, 9.99e20, 1e20, 5e-324, math.MaxFloat64,
		math.NaN(), math.Inf(1), math.Inf(-1), 123456789, 0.1 + 0.2} {
		vals = append(vals, localtable.DoubleValue(f))
	}
	for range 20_000 {
		var g localtable.GUID
		for i := range g {
			g[i] = byte(r.Uint32())
		}
		bin := make([]byte, r.IntN(40))
		for i := range bin {
			bin[i] = byte(r.Uint32())
		}
		vals = append(vals,
			localtable.Int64Value(int64(r.Uint64())),
			localtable.DoubleValue(math.Float64frombits(r.Uint64())),
			localtable.DoubleValue(r.NormFloat64()*math.Pow(10, float64(r.IntN(40)-20))),
			localtable.DateTimeTicksValue(r.Int64N(3155378975999999999+1)),
			localtable.DateTimeTicksValue(r.Int64N(315537897599)*10_000_000),
			localtable.GUIDValue(g), localtable.BinaryValue(bin))
	}
	for _, v := range vals {
		if got, want := string(entityjson.AppendValue(nil, v)), string(appendValueText(nil, v)); got != want {
			t.Fatalf("AppendValue(%v) = %s, want %s", v, got, want)
		}
	}
	b := make([]byte, 0, 256)
	for _, v := range vals[:len(vals)/10] {
		if v.Kind() == localtable.KindDouble && math.IsNaN(v.Double()) || v.Kind() == localtable.KindDouble && math.IsInf(v.Double(), 0) {
			continue
		}
		if v.Kind() == localtable.KindDateTime && (v.Ticks() < 0 || v.Ticks() > 3155378975999999999) {
			continue
		}
		if n := testing.AllocsPerRun(10, func() { b = entityjson.AppendValue(b[:0], v) }); n != 0 {
			t.Fatalf("AppendValue(%v) allocates %.0f times", v, n)
		}
	}
}

// appendStringByRune is AppendString's rules applied rune by rune, as
// AppendString applied them before it copied plain runs whole.
func appendStringByRune(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
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
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
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
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+w]...)
		}
		i += w
	}
	return append(b, '"')
}

// AppendString agrees with its rules applied rune by rune, on strings of
// plain runs, escapes, control characters, DEL, multi-byte runes, line and
// paragraph separators and invalid bytes, in any mix.
func TestAppendStringRuns(t *testing.T) {
	pieces := []string{"a", "plain text ", `"`, `\`, "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "é", "😀", "\u2028", "\u2029", "\xff", "\xe2\x80", "/", "<>&"}
	r := rand.New(rand.NewPCG(7, 8))
	for range 50_000 {
		var sb strings.Builder
		for range r.IntN(10) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := sb.String()
		if got, want := string(entityjson.AppendString([]byte("x"), s)), string(appendStringByRune([]byte("x"), s)); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

// AppendString agrees with its rules applied rune by rune for every byte
// value at every place of plain runs of up to 24 bytes, before and after
// it: it reads plain runs eight bytes at a time, and a byte to escape must
// be found in any lane of a word.
func TestAppendStringEveryBytePlace(t *testing.T) {
	const plain = "abcdefghijklmnopqrstuvwx"
	for c := range 256 {
		for n := range len(plain) + 1 {
			for at := range n + 1 {
				s := plain[:at] + string([]byte{byte(c)}) + plain[at:n]
				if got, want := string(entityjson.AppendString(nil, s)), string(appendStringByRune(nil, s)); got != want {
					t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
				}
			}
		}
	}
}

// AppendValue writes the Doubles of few decimals, which it formats
// without strconv's search for the shortest digits, as that search does:
// m/10^k for random m of every size and k up to 9, negative too, and the
// values next to them.
func TestAppendValueShortDecimals(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 300_000 {
		m := r.Int64N(1 << r.IntN(56))
		f := float64(m) / math.Pow(10, float64(r.IntN(10)))
		if r.IntN(2) == 0 {
			f = -f
		}
		for _, g := range []float64{f, math.Nextafter(f, math.Inf(1)), math.Nextafter(f, math.Inf(-1))} {
			v := localtable.DoubleValue(g)
			if got, want := string(entityjson.AppendValue(nil, v)), string(appendValueText(nil, v)); got != want {
				t.Fatalf("AppendValue(%v) = %s, want %s", g, got, want)
			}
		}
	}
}
