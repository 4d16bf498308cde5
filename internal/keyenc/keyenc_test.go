package keyenc

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// utf16Compare is the reference order: compare UTF-16 code units.
func utf16Compare(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(ua, ub)
}

func pairKey(pk, rk string) []byte { return AppendString(AppendString(nil, pk), rk) }

func pairCompare(a, b [2]string) int {
	if c := utf16Compare(a[0], b[0]); c != 0 {
		return c
	}
	return utf16Compare(a[1], b[1])
}

var interesting = []string{
	"", "a", "aa", "ab", "b", "\x00", "\x00\x00", "a\x00", "a\x00b", "\x01", "\x7f", "é",
	"\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U0001d11e", "\U0010ffff",
	"\U00010000a", "\ue000a", "z\U00010100", "z\U00010001", "\U00010000\x00", "\U00020000",
}

func TestOrderMatchesUTF16(t *testing.T) {
	var pairs [][2]string
	for _, a := range interesting {
		for _, b := range interesting {
			pairs = append(pairs, [2]string{a, b})
		}
	}
	for _, x := range pairs {
		for _, y := range pairs {
			want := pairCompare(x, y)
			if got := bytes.Compare(pairKey(x[0], x[1]), pairKey(y[0], y[1])); got != want {
				t.Fatalf("key order of %q vs %q = %d, want %d", x, y, got, want)
			}
		}
		if got, want := CompareUTF16(x[0], x[1]), utf16Compare(x[0], x[1]); got != want {
			t.Errorf("CompareUTF16(%q, %q) = %d, want %d", x[0], x[1], got, want)
		}
	}
}

func TestSupplementaryBeforePrivateUse(t *testing.T) {
	// The service's order: U+10000 (a surrogate pair, 0xD800 0xDC00) sorts
	// before U+E000; code point order (and plain UTF-8) says the opposite.
	if CompareUTF16("\U00010000", "\ue000") != -1 {
		t.Error("U+10000 should sort before U+E000")
	}
	if bytes.Compare(AppendString(nil, "\U00010000"), AppendString(nil, "\ue000")) != -1 {
		t.Error("encoded U+10000 should sort before encoded U+E000")
	}
}

func TestRoundTrip(t *testing.T) {
	for _, pk := range interesting {
		for _, rk := range interesting {
			key := AppendEntityKey(nil, 7, pk, rk)
			gp, gr, err := DecodeEntityKey(key)
			if err != nil || gp != pk || gr != rk {
				t.Fatalf("decode(%q, %q) = %q, %q, %v", pk, rk, gp, gr, err)
			}
		}
	}
}

func TestStringEndBoundsPartition(t *testing.T) {
	for _, pk := range interesting {
		start := AppendString(nil, pk)
		end := StringEnd(start)
		for _, other := range interesting {
			for _, rk := range []string{"", "a", "\U0010ffff"} {
				k := pairKey(other, rk)
				in := bytes.Compare(k, start) >= 0 && bytes.Compare(k, end) < 0
				if in != (other == pk) {
					t.Fatalf("key (%q,%q) in partition %q range = %v", other, rk, pk, in)
				}
			}
		}
	}
}

func randString(r *rand.Rand) string {
	var sb strings.Builder
	n := r.IntN(6)
	for i := 0; i < n; i++ {
		switch r.IntN(5) {
		case 0:
			sb.WriteByte(byte(r.IntN(3)))
		case 1:
			sb.WriteRune(rune('a' + r.IntN(3)))
		case 2:
			sb.WriteRune(rune(0xD000 + r.IntN(0x2000)))
		case 3:
			sb.WriteRune(rune(0xE000 + r.IntN(0x2000)))
		default:
			sb.WriteRune(rune(0x10000 + r.IntN(0x200)))
		}
	}
	s := sb.String()
	if !utf8.ValidString(s) { // surrogate range: skip
		return "x"
	}
	return s
}

func TestRandomOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		x := [2]string{randString(r), randString(r)}
		y := [2]string{randString(r), randString(r)}
		if got, want := bytes.Compare(pairKey(x[0], x[1]), pairKey(y[0], y[1])), pairCompare(x, y); got != want {
			t.Fatalf("%q vs %q: %d, want %d", x, y, got, want)
		}
		if got, want := CompareUTF16(x[0], y[0]), utf16Compare(x[0], y[0]); got != want {
			t.Fatalf("CompareUTF16(%q, %q) = %d, want %d", x[0], y[0], got, want)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	cases := []struct{ in, want []byte }{
		{[]byte{1, 2}, []byte{1, 3}},
		{[]byte{1, 0xff}, []byte{2}},
		{[]byte{0xff, 0xff}, nil},
	}
	for _, c := range cases {
		if got := PrefixEnd(c.in); !bytes.Equal(got, c.want) {
			t.Errorf("PrefixEnd(%x) = %x, want %x", c.in, got, c.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range interesting {
		f.Add(pairKey(s, "x"))
	}
	f.Add([]byte{0})
	f.Add([]byte{0xED, 0xA0})
	f.Fuzz(func(t *testing.T, b []byte) {
		pk, rk, err := DecodePair(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes when it is valid UTF-8.
		if utf8.ValidString(pk) && utf8.ValidString(rk) {
			if re := pairKey(pk, rk); !bytes.Equal(re, b) {
				t.Fatalf("%x decodes to %q %q which encodes to %x", b, pk, rk, re)
			}
		}
	})
}

func FuzzOrder(f *testing.F) {
	f.Add("a", "b", "\U00010000", "\ue000")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		for _, s := range []string{a, b, c, d} {
			if !utf8.ValidString(s) {
				return
			}
		}
		x, y := [2]string{a, b}, [2]string{c, d}
		if got, want := bytes.Compare(pairKey(a, b), pairKey(c, d)), pairCompare(x, y); got != want {
			t.Fatalf("%q vs %q: %d, want %d", x, y, got, want)
		}
		if got, want := CompareUTF16(a, c), utf16Compare(a, c); got != want {
			t.Fatalf("CompareUTF16(%q, %q) = %d, want %d", a, c, got, want)
		}
		gp, gr, err := DecodePair(pairKey(a, b))
		if err != nil || gp != a || gr != b {
			t.Fatalf("round trip of %q %q: %q %q %v", a, b, gp, gr, err)
		}
	})
}

func TestCutPlain(t *testing.T) {
	for _, s := range []string{"", "abc", "a\x00b", "😀", "x\U0010fffdy", "\ud7ff", "퟿a", "\ue000", "é中"} {
		enc := AppendString(nil, s)
		b := append(append([]byte(nil), enc...), "tail"...)
		plain, rest, ok := CutPlain(b)
		escaped := strings.ContainsRune(s, 0) || strings.IndexFunc(s, func(r rune) bool { return r > 0xFFFF }) >= 0
		if ok == escaped {
			t.Errorf("CutPlain(S(%q)): ok %v, want %v", s, ok, !escaped)
			continue
		}
		if ok && (string(plain) != s || string(rest) != "tail") {
			t.Errorf("CutPlain(S(%q)) = %q, %q", s, plain, rest)
		}
	}
	for _, b := range []string{"", "abc", "ab\x00", "ab\x00\x02"} {
		if _, _, ok := CutPlain([]byte(b)); ok {
			t.Errorf("CutPlain(%q): ok for a corrupt encoding", b)
		}
	}
}

// TestNonCanonicalRefused: a character above U+FFFF as its raw 4-byte UTF-8
// is a form the encoder never writes (it writes 0xED 0xA0+…): decoding it
// must fail rather than give a key that re-encodes to other bytes.
func TestNonCanonicalRefused(t *testing.T) {
	for _, b := range [][]byte{
		[]byte("\xf0\x90\x80\x80\x00\x01x\x00\x01"),        // U+10000 raw, in PK
		[]byte("a\x00\x01b\xf4\x8f\xbf\xbf\x00\x01"),       // U+10FFFF raw, in RK
		[]byte("\xf0\x9f\x98\x80\x00\xff\x00\x01\x00\x01"), // raw, with an escape after
	} {
		if pk, rk, err := DecodePair(b); err != ErrCorrupt {
			t.Errorf("DecodePair(%x) = %q, %q, %v; want ErrCorrupt", b, pk, rk, err)
		}
		if _, rest, ok := CutPlain(b); ok {
			if _, _, ok := CutPlain(rest); ok {
				t.Errorf("CutPlain(%x): ok for a non-canonical form", b)
			}
		}
	}
	// Invalid UTF-8 from 0xF0 up stays as the encoder writes it.
	for _, s := range []string{"\xf0", "\xf0\x90", "\xf5\x80\x80\x80", "\xf0\x80\x80\x80", "\xff"} {
		enc := AppendString(nil, s)
		if got, _, err := DecodeString(enc); err != nil || got != s {
			t.Errorf("DecodeString(S(%q)) = %q, %v", s, got, err)
		}
		if p, _, ok := CutPlain(enc); !ok || string(p) != s {
			t.Errorf("CutPlain(S(%q)) = %q, %v", s, p, ok)
		}
	}
}

var benchKeys = func() [][]byte {
	var ks [][]byte
	for _, s := range []string{"partition-0001", "row-000000000042", "éàü-ascii-mixed-中文", "😀emoji"} {
		ks = append(ks, AppendString(AppendString(nil, s), s+"-rk"))
	}
	return ks
}()

func BenchmarkCutPlain(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for _, k := range benchKeys[:3] {
			if _, rest, ok := CutPlain(k); !ok {
				b.Fatal(k)
			} else if _, _, ok := CutPlain(rest); !ok {
				b.Fatal(k)
			}
		}
	}
}

func BenchmarkAppendDecoded(b *testing.B) {
	buf := make([]byte, 0, 128)
	for i := 0; i < b.N; i++ {
		for _, k := range benchKeys {
			out, rest, err := AppendDecoded(buf[:0], k)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := AppendDecoded(out, rest); err != nil {
				b.Fatal(err)
			}
		}
	}
}
