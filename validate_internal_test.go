package localtable

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
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
	}
}

// TestSortByName checks the insertion sort against the library's on
// shuffled names, below and above the length where it hands over.
func TestSortByName(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 40 {
		ps := make([]namedValue, n)
		for i := range ps {
			ps[i].name = string(rune('A' + r.IntN(26)))
			if r.IntN(2) == 0 {
				ps[i].name += string(rune('a' + r.IntN(26)))
			}
		}
		sortByName(ps)
		for i := 1; i < n; i++ {
			if ps[i].name < ps[i-1].name {
				t.Fatalf("n=%d: %q before %q", n, ps[i-1].name, ps[i].name)
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
