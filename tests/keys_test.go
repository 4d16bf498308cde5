package tests

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

// cmpUTF16 is the service's ordinal order, written independently of the
// package: compare the UTF-16 code units.
func cmpUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// cmpTuple orders tuples of parts part by part, a prefix first.
func cmpTuple(a, b []string) int { return slices.CompareFunc(a, b, cmpUTF16) }

func sign[T int | int64](n T) int { return int(min(max(n, -1), 1)) }

// checkValidKey fails unless k is a valid key, or too long to be one.
func checkValidKey(t testing.TB, k string) {
	t.Helper()
	if err := localtable.ValidateRowKey(k); err != nil && !errors.Is(err, localtable.ErrKeyTooLarge) {
		t.Fatalf("key %q: %v", k, err)
	}
}

func TestInt64Key(t *testing.T) {
	fixed := map[int64]string{
		0:              "0000000000000000000",
		42:             "0000000000000000042",
		math.MaxInt64:  "9223372036854775807",
		-1:             "-9999999999999999998",
		-42:            "-9999999999999999957",
		math.MinInt64:  "-0776627963145224191",
		-1_000_000_000: "-9999999998999999999",
	}
	for n, want := range fixed {
		if got := localtable.Int64Key(n); got != want {
			t.Errorf("Int64Key(%d) = %q, want %q", n, got, want)
		}
	}
	ns := []int64{math.MinInt64, math.MinInt64 + 1, -1e18, -10, -9, -1, 0, 1, 9, 10, 99, 100, 1e18, math.MaxInt64 - 1, math.MaxInt64}
	for range 2000 {
		ns = append(ns, int64(rand.Uint64()), rand.Int64N(2000)-1000)
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
	ns = slices.Compact(ns)
	for i, n := range ns {
		k := localtable.Int64Key(n)
		checkValidKey(t, k)
		back, err := localtable.ParseInt64Key(k)
		if err != nil || back != n {
			t.Fatalf("ParseInt64Key(Int64Key(%d) = %q) = %d, %v", n, k, back, err)
		}
		if i > 0 && cmpUTF16(localtable.Int64Key(ns[i-1]), k) >= 0 {
			t.Fatalf("Int64Key(%d) = %q does not sort before Int64Key(%d) = %q", ns[i-1], localtable.Int64Key(ns[i-1]), n, k)
		}
	}
	for _, bad := range []string{"", "42", "+000000000000000042", "00000000000000000042", "9223372036854775808",
		"-9999999999999999999", "-0000000000000000000", "-0776627963145224190", "-1", "000000000000000004a",
		" 000000000000000042", "-", "--999999999999999998", "٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠"} {
		if n, err := localtable.ParseInt64Key(bad); !errors.Is(err, localtable.ErrInvalidInput) {
			t.Errorf("ParseInt64Key(%q) = %d, %v; want ErrInvalidInput", bad, n, err)
		}
	}
}

func TestInvertedTicksKey(t *testing.T) {
	epoch := time.Unix(0, 0)
	fixed := []struct {
		t    time.Time
		want string
	}{
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), "3155378975999999999"},                        // DateTime.MaxValue.Ticks
		{epoch, "2534023007999999999"},                                                           // minus 621355968000000000
		{epoch.Add(150 * time.Nanosecond), "2534023007999999998"},                                // one tick later, truncated
		{localtable.MaxDateTime, "0000000000000000000"},                                          // the last tick
		{time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC), "3155378975999999999"},                      // clamped
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), "0000000000000000000"},                    // clamped
		{time.Date(2024, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600)), "2516930099999999999"}, // 11:00 UTC
	}
	for _, c := range fixed {
		if got := localtable.InvertedTicksKey(c.t); got != c.want {
			t.Errorf("InvertedTicksKey(%v) = %q, want %q", c.t, got, c.want)
		}
	}
	// Newest first, round trip at 100 ns.
	base := time.Date(2024, 3, 1, 11, 0, 0, 0, time.UTC)
	var ts []time.Time
	for _, d := range []time.Duration{0, 100, 200, time.Microsecond, time.Second, time.Hour, 24 * 365 * time.Hour} {
		ts = append(ts, base.Add(d), base.Add(-d))
	}
	for range 1000 {
		ts = append(ts, time.Unix(0, rand.Int64()).UTC(), time.Unix(rand.Int64N(253402300799+62135596800)-62135596800, rand.Int64N(1e9)).UTC())
	}
	ts = append(ts, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), localtable.MaxDateTime)
	for _, a := range ts {
		k := localtable.InvertedTicksKey(a)
		checkValidKey(t, k)
		back, err := localtable.ParseInvertedTicksKey(k)
		if want := a.Truncate(100); err != nil || !back.Equal(want) || back.Location() != time.UTC {
			t.Fatalf("ParseInvertedTicksKey(InvertedTicksKey(%v) = %q) = %v, %v; want %v", a, k, back, err, want)
		}
		for _, b := range ts[:20] {
			want := -sign(localtable.TimeToTicks(a) - localtable.TimeToTicks(b)) // later sorts first
			if got := sign(cmpUTF16(k, localtable.InvertedTicksKey(b))); got != want {
				t.Fatalf("%v vs %v: keys compare %d, want %d", a, b, got, want)
			}
		}
	}
	for _, bad := range []string{"", "3155378976000000000", "9999999999999999999", "315537897599999999", "-000000000000000001", "0x00000000000000000"} {
		if tm, err := localtable.ParseInvertedTicksKey(bad); !errors.Is(err, localtable.ErrInvalidInput) {
			t.Errorf("ParseInvertedTicksKey(%q) = %v, %v; want ErrInvalidInput", bad, tm, err)
		}
	}
}

func TestCompoundKey(t *testing.T) {
	fixed := []struct {
		parts []string
		want  string
	}{
		{[]string{"order", "2024-01-05", "42"}, "order!2024-01-05!42"},
		{[]string{"Smith", "José"}, "Smith!José"},
		{[]string{"New York"}, `New"20York`},
		{[]string{"a!b", `"#$`}, `a"21b!"22"23$`},
		{[]string{"x/y", "a.b", "?>", `[\]`}, "x.2Fy!a.2Eb!>3F>3E![5B[5C]"},
		{[]string{"~\x7f\u0080\u009f\u00a0"}, "~7E~7F~80~9F\u00a0"},
		{[]string{"\x00\t\n\x1f"}, `"00"09"0A"1F`},
		{[]string{"\xff", "a\xc3"}, "~xFF!a~xC3"},
		{[]string{""}, ""},
		{[]string{"", ""}, "!"},
		{[]string{"a", ""}, "a!"},
		{[]string{"", "a"}, "!a"},
		{[]string{"\U0001F600", "\uFFFD"}, "\U0001F600!\uFFFD"},
	}
	for _, c := range fixed {
		got := localtable.CompoundKey(c.parts...)
		if got != c.want {
			t.Errorf("CompoundKey(%q) = %q, want %q", c.parts, got, c.want)
		}
		checkValidKey(t, got)
		back, err := localtable.SplitCompoundKey(got)
		if err != nil || !slices.Equal(back, c.parts) {
			t.Errorf("SplitCompoundKey(%q) = %q, %v; want %q", got, back, err, c.parts)
		}
	}
	if got := localtable.CompoundKey(); got != "" {
		t.Errorf("CompoundKey() = %q", got)
	}

	// Order: every pair of tuples from a set chosen around the escapes
	// and the separator compares as the tuples do.
	atoms := []string{"", " ", "!", "\"", "#", "$", "-", ".", "/", "0", ">", "?", "@", "[", "\\", "]", "a", "a b",
		"a!", "a.", "ab", "~", "\x7f", "\u009f", "\u00a0", "é", "\uE000", "\uFFFD", "\U0001F600", "\x00", "\x1f"}
	var tuples [][]string
	for _, a := range atoms {
		tuples = append(tuples, []string{a})
		for _, b := range atoms[:12] {
			tuples = append(tuples, []string{a, b}, []string{a + b}, []string{a, b, a})
		}
	}
	keys := make([][]uint16, len(tuples)) // UTF-16, compared as the service does
	parts := make([][][]uint16, len(tuples))
	for i, p := range tuples {
		keys[i] = utf16.Encode([]rune(localtable.CompoundKey(p...)))
		for _, s := range p {
			parts[i] = append(parts[i], utf16.Encode([]rune(s)))
		}
	}
	for i := range tuples {
		for j := range tuples {
			want := slices.CompareFunc(parts[i], parts[j], slices.Compare)
			if got := slices.Compare(keys[i], keys[j]); got != want {
				t.Fatalf("%q vs %q: keys %q, %q compare %d, tuples %d", tuples[i], tuples[j],
					localtable.CompoundKey(tuples[i]...), localtable.CompoundKey(tuples[j]...), got, want)
			}
		}
	}

	for _, bad := range []string{
		"a/b", "a#", "a?", `a\`, "a\x00", "a\u0085", "\xff", // characters keys may not hold
		"a b", `a"`, "a.", "a>", "a[", "a~", // characters that are escaped
		`"2`, `"24`, ".2D", ".30", ">40", "[5D", "~7D", "~A0", `"2g`, `"0a`, // escapes CompoundKey does not make
		"~x41", "~x7F", "~xC3~xA9", "~xE2~x82~xAC", "~x", "~xF", "~xGG", // raw bytes that are not needed
	} {
		if parts, err := localtable.SplitCompoundKey(bad); !errors.Is(err, localtable.ErrInvalidInput) {
			t.Errorf("SplitCompoundKey(%q) = %q, %v; want ErrInvalidInput", bad, parts, err)
		}
	}
}

// TestCompoundKeyTableOrder: entities whose RowKeys are compound keys come
// back from a query in the order of their parts, on every engine.
func TestCompoundKeyTableOrder(t *testing.T) {
	tuples := [][]string{
		{"a"}, {"a", ""}, {"a", "", "x"}, {"a", " "}, {"a", "/"}, {"a", "b"}, {"a", "b", "0"}, {"a", "b c"},
		{"a", "b#"}, {"a", "bc"}, {"a", "é"}, {"a", "\U0001F600"}, {"a", "\uFFFD"}, {"a b"}, {"a!"}, {"a.b"}, {"a/b"},
		{"a0"}, {"a?"}, {"ab"}, {"a~"}, {"a\u0080"}, {"a\u00a0"},
	}
	if !slices.IsSortedFunc(tuples, cmpTuple) {
		t.Fatal("test tuples are not in order")
	}
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		for _, i := range rand.Perm(len(tuples)) {
			if _, err := tbl.Insert(ctx, tabletest.Ent("p", localtable.CompoundKey(tuples[i]...))); err != nil {
				t.Fatalf("insert %q: %v", tuples[i], err)
			}
		}
		var got [][]string
		for e, err := range tbl.QueryAll(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			parts, err := localtable.SplitCompoundKey(e.RowKey)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, parts)
		}
		if !slices.EqualFunc(got, tuples, slices.Equal) {
			t.Errorf("query order = %q\nwant %q", got, tuples)
		}
	})
}

func FuzzInt64Key(f *testing.F) {
	f.Add(int64(0), int64(-1), "0000000000000000000")
	f.Add(int64(math.MinInt64), int64(math.MaxInt64), "-0776627963145224191")
	f.Fuzz(func(t *testing.T, a, b int64, s string) {
		ka, kb := localtable.Int64Key(a), localtable.Int64Key(b)
		for n, k := range map[int64]string{a: ka, b: kb} {
			checkValidKey(t, k)
			if back, err := localtable.ParseInt64Key(k); err != nil || back != n {
				t.Fatalf("ParseInt64Key(Int64Key(%d) = %q) = %d, %v", n, k, back, err)
			}
		}
		want := 0
		if a < b {
			want = -1
		} else if a > b {
			want = 1
		}
		if got := sign(cmpUTF16(ka, kb)); got != want {
			t.Fatalf("%d vs %d: keys %q, %q compare %d", a, b, ka, kb, got)
		}
		// Any string: no panic, and what parses is canonical.
		if n, err := localtable.ParseInt64Key(s); err == nil && localtable.Int64Key(n) != s {
			t.Fatalf("ParseInt64Key(%q) = %d, whose key is %q", s, n, localtable.Int64Key(n))
		}
	})
}

func FuzzInvertedTicksKey(f *testing.F) {
	f.Add(int64(0), int64(0), int64(1), int64(99), "2534023007999999999")
	f.Add(int64(-62135596800), int64(0), int64(253402300799), int64(999999999), "0000000000000000000")
	f.Fuzz(func(t *testing.T, sa, na, sb, nb int64, s string) {
		ta, tb := time.Unix(sa, na), time.Unix(sb, nb)
		ka, kb := localtable.InvertedTicksKey(ta), localtable.InvertedTicksKey(tb)
		for _, c := range []struct {
			t time.Time
			k string
		}{{ta, ka}, {tb, kb}} {
			checkValidKey(t, c.k)
			back, err := localtable.ParseInvertedTicksKey(c.k)
			if err != nil {
				t.Fatalf("ParseInvertedTicksKey(%q): %v", c.k, err)
			}
			if y := c.t.UTC().Year(); y >= 1 && y <= 9999 && !back.Equal(c.t.Truncate(100)) {
				t.Fatalf("ParseInvertedTicksKey(InvertedTicksKey(%v) = %q) = %v", c.t, c.k, back)
			}
		}
		if y1, y2 := ta.UTC().Year(), tb.UTC().Year(); y1 >= 1 && y1 <= 9999 && y2 >= 1 && y2 <= 9999 {
			want := -sign(localtable.TimeToTicks(ta) - localtable.TimeToTicks(tb))
			if got := sign(cmpUTF16(ka, kb)); got != want {
				t.Fatalf("%v vs %v: keys %q, %q compare %d, want %d", ta, tb, ka, kb, got, want)
			}
		}
		if tm, err := localtable.ParseInvertedTicksKey(s); err == nil && localtable.InvertedTicksKey(tm) != s {
			t.Fatalf("ParseInvertedTicksKey(%q) = %v, whose key is %q", s, tm, localtable.InvertedTicksKey(tm))
		}
	})
}

func FuzzCompoundKey(f *testing.F) {
	f.Add("a", "b", "a", "c")
	f.Add("a", "", "a b", "x/y")
	f.Add("\x00#?", "~\u0085", "\U0001F600", "\uFFFD")
	f.Add("\xff\xc3", "é", "!", `"`)
	f.Fuzz(func(t *testing.T, a1, a2, b1, b2 string) {
		tuples := [][]string{{a1}, {a1, a2}, {b1, b2}, {a1, a2, b1}, {b1}}
		keys := make([]string, len(tuples))
		for i, p := range tuples {
			k := localtable.CompoundKey(p...)
			keys[i] = k
			if !utf8.ValidString(k) {
				t.Fatalf("CompoundKey(%q) = %q is not valid UTF-8", p, k)
			}
			checkValidKey(t, k)
			back, err := localtable.SplitCompoundKey(k)
			if err != nil || !slices.Equal(back, p) {
				t.Fatalf("SplitCompoundKey(CompoundKey(%q) = %q) = %q, %v", p, k, back, err)
			}
		}
		valid := true
		for _, s := range []string{a1, a2, b1, b2} {
			valid = valid && utf8.ValidString(s)
		}
		if valid { // order is defined on text
			for i, p := range tuples {
				for j, q := range tuples {
					if got, want := sign(cmpUTF16(keys[i], keys[j])), cmpTuple(p, q); got != want {
						t.Fatalf("%q vs %q: keys %q, %q compare %d, tuples %d", p, q, keys[i], keys[j], got, want)
					}
				}
			}
		}
		// Any string: no panic, and what splits is canonical.
		for _, s := range []string{a1, a1 + "!" + b2, strings.ToUpper(a2)} {
			if parts, err := localtable.SplitCompoundKey(s); err == nil && localtable.CompoundKey(parts...) != s {
				t.Fatalf("SplitCompoundKey(%q) = %q, which joins to %q", s, parts, localtable.CompoundKey(parts...))
			}
		}
	})
}
