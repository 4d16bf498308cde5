package localtable

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// TestUTF16Len checks utf16Len, whose ASCII fast path reads eight bytes at
// a time, against utf16.Encode on random strings of ASCII, other
// characters and invalid bytes, at every alignment.
func TestUTF16Len(t *testing.T) {
	pieces := []string{"a", "abcdefgh", "é", "中", "😀", "\xff", "\xed\xa0\x80", "\x00", "z\x7f"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		s := ""
		for range r.IntN(12) {
			s += pieces[r.IntN(len(pieces))]
		}
		if got, want := utf16Len(s), len(utf16.Encode([]rune(s))); got != want {
			t.Fatalf("utf16Len(%q) = %d, want %d", s, got, want)
		}
		if n, ok := utf16LenValid(s); n != utf16Len(s) || ok != utf8.ValidString(s) {
			t.Fatalf("utf16LenValid(%q) = %d, %v; want %d, %v", s, n, ok, utf16Len(s), utf8.ValidString(s))
		}
	}
}

// TestSortByName checks the insertion sort against the library's on
// shuffled names, below and above the length where it hands over: short
// names, names that share a long prefix, names with NUL bytes and
// repeated names. The values travel with their names.
func TestSortByName(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"A", "B", "a", "z", "Property", "PropertyName", "\x00", "\xff", "_"}
	for n := range 40 {
		for range 50 {
			ps := make([]namedValue, n)
			for i := range ps {
				for range 1 + r.IntN(3) {
					ps[i].name += pieces[r.IntN(len(pieces))]
				}
				ps[i].v = StringValue(ps[i].name)
			}
			want := slices.Clone(ps)
			slices.SortStableFunc(want, func(a, b namedValue) int { return strings.Compare(a.name, b.name) })
			sortByName(ps)
			for i := range ps {
				if ps[i].name != want[i].name || ps[i].v.str != ps[i].name {
					t.Fatalf("n=%d: sorted %v, want %v", n, ps, want)
				}
			}
		}
	}
}

// TestAppendValidRecord checks that appendValidRecord rejects what
// validateEntity rejects, with the same error, and otherwise appends the
// record appendRecord makes, with a Timestamp setRecordTicks sets.
func TestAppendValidRecord(t *testing.T) {
	big := make([]byte, MaxBinaryLen)
	entities := []Entity{
		{PartitionKey: "p", RowKey: "r", Properties: sampleProps()},
		{PartitionKey: "p", RowKey: "r"},
		{PartitionKey: "p/", RowKey: "r"},
		{PartitionKey: "p", RowKey: "r\x01"},
		{PartitionKey: "p", RowKey: "r", Properties: Properties{"1x": Int32Value(1)}},
		{PartitionKey: "p", RowKey: "r", Properties: Properties{"RowKey": Int32Value(1)}},
		{PartitionKey: "p", RowKey: "r", Properties: Properties{"S": StringValue("\xff")}},
		{PartitionKey: "p", RowKey: "r", Properties: Properties{"N": {}}},
		{PartitionKey: "p", RowKey: "r", Properties: Properties{"D": DateTimeTicksValue(-1)}},
		{PartitionKey: "p", RowKey: "r", Properties: func() Properties {
			p := Properties{}
			for i := range 17 {
				p[string(rune('A'+i))] = BinaryValue(big)
			}
			return p
		}()},
	}
	for _, e := range entities {
		want := validateEntity(&e)
		rec, payload, err := appendValidRecord([]byte("x"), &e)
		if (err == nil) != (want == nil) || (err != nil && err.Error() != want.Error()) {
			t.Errorf("%v: appendValidRecord: %v; validateEntity: %v", e.Properties, err, want)
			continue
		}
		if err == nil && payload != PayloadSize(&e) {
			t.Errorf("%v: appendValidRecord measured %d bytes; PayloadSize %d", e.Properties, payload, PayloadSize(&e))
		}
		if err != nil {
			if string(rec) != "x" {
				t.Errorf("%v: rejected, yet appended %q", e.Properties, rec)
			}
			continue
		}
		setRecordTicks(rec[1:], 42)
		if got, want := string(rec[1:]), string(appendRecord(nil, 42, e.Properties)); got != want {
			t.Errorf("%v: record %x, want %x", e.Properties, got, want)
		}
	}
}

// TestValidateKeyFastPath checks that validateKey's one-pass path for
// plain ASCII keys agrees with the rune-by-rune rules: for every byte
// alone, inside a key and at its end, and at the length limit.
func TestValidateKeyFastPath(t *testing.T) {
	same := func(k string) {
		t.Helper()
		got, want := validateKey(RowKeyName, k), checkKey(RowKeyName, k)
		if (got == nil) != (want == nil) {
			t.Fatalf("validateKey(%q) = %v; the rules say %v", k, got, want)
		}
	}
	for c := range 256 {
		b := string([]byte{byte(c)})
		same(b)
		same("ab" + b + "cd")
		same("abc" + b)
	}
	same(strings.Repeat("k", MaxKeyUTF16))
	same(strings.Repeat("k", MaxKeyUTF16+1))
	same(strings.Repeat("é", MaxKeyUTF16/2))
	same("")
	for _, bad := range []string{"a/b", `a\b`, "a#b", "a?b", "a\x00", "a\x1f", "\x7f", "a\u0085"} {
		if validateKey(RowKeyName, bad) == nil {
			t.Errorf("validateKey(%q) accepted it", bad)
		}
	}
}

// BenchmarkAppendValidRecord measures the stateless part of a write of
// one entity: the checks of the typical entity of benchProps and the
// encoding of its record, in one pass.
func BenchmarkAppendValidRecord(b *testing.B) {
	e := Entity{PartitionKey: "p42", RowKey: "r12345", Properties: benchProps()}
	var buf []byte
	for b.Loop() {
		var err error
		if buf, _, err = appendValidRecord(buf[:0], &e); err != nil {
			b.Fatal(err)
		}
	}
}

// TestASCIIIdentifier checks asciiIdentifier's table against the rule it
// encodes (ASCII letters and '_', then digits too) for every byte, first
// and after the first, and at the length limit.
func TestASCIIIdentifier(t *testing.T) {
	rule := func(name string) bool {
		if name == "" || len(name) > MaxPropertyNameLen {
			return false
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
			if !letter && c != '_' && (i == 0 || c < '0' || c > '9') {
				return false
			}
		}
		return true
	}
	names := []string{"", strings.Repeat("a", MaxPropertyNameLen), strings.Repeat("a", MaxPropertyNameLen+1)}
	for c := range 256 {
		b := string([]byte{byte(c)})
		names = append(names, b, "a"+b, b+"a", "_"+b+"9")
	}
	for _, name := range names {
		if got, want := asciiIdentifier(name), rule(name); got != want {
			t.Errorf("asciiIdentifier(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestCheckEntitySizeAtLimit checks that the size appendValidRecord
// measures, in its one pass, is EntitySize's, for names and strings
// beyond ASCII (counted in UTF-16 code units, two for characters above
// U+FFFF): an entity padded to exactly MaxEntitySize passes, one byte more
// fails with ErrEntityTooLarge.
func TestCheckEntitySizeAtLimit(t *testing.T) {
	props := Properties{
		"Näme":  StringValue("é中😀 and ASCII"),
		"名前":    StringValue(strings.Repeat("😀", 1000)),
		"ǅx_1":  StringValue(strings.Repeat("中", 3000)),
		"Plain": StringValue("plain"),
		"N":     Int64Value(1),
	}
	for i := range 15 {
		props["Big"+strings.Repeat("é", i)] = BinaryValue(make([]byte, MaxBinaryLen))
	}
	e := Entity{PartitionKey: "pé", RowKey: "r😀", Properties: props}
	const pad = "Pad"
	room := MaxEntitySize - EntitySize(&e) - (8 + 2*len(pad) + 4)
	if room < 0 || room >= MaxBinaryLen {
		t.Fatalf("the padding would be %d bytes; the test needs 0 to %d", room, MaxBinaryLen-1)
	}
	for _, extra := range []int{0, 1} {
		props[pad] = BinaryValue(make([]byte, room+extra))
		if got := EntitySize(&e); got != MaxEntitySize+extra {
			t.Fatalf("EntitySize = %d, want %d", got, MaxEntitySize+extra)
		}
		_, _, err := appendValidRecord(nil, &e)
		if extra == 0 && err != nil {
			t.Errorf("an entity of exactly MaxEntitySize: %v", err)
		}
		if extra == 1 && !errors.Is(err, ErrEntityTooLarge) {
			t.Errorf("an entity one byte over MaxEntitySize: %v, want ErrEntityTooLarge", err)
		}
	}
}
