package localtable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/localtable/localtable/internal/keyenc"
)

// TestFindProperty checks findProperty against the full decoder: every
// property is found with its value, and names before, between and after
// the record's names are absent.
func TestFindProperty(t *testing.T) {
	p := sampleProps()
	rec := appendRecord(nil, 12345, p)
	for name, want := range p {
		got, ok, err := findProperty(rec, name)
		if err != nil || !ok || !got.Equal(want) {
			t.Errorf("findProperty(%q) = %v, %v, %v; want %v", name, got, ok, err, want)
		}
	}
	for _, name := range []string{"A", "Bio", "Zzz", "I", "I640", "", "s"} {
		if v, ok, err := findProperty(rec, name); ok || err != nil {
			t.Errorf("findProperty(%q) = %v, %v, %v; want absent", name, v, ok, err)
		}
	}
	empty := appendRecord(nil, 1, nil)
	if _, ok, err := findProperty(empty, "S"); ok || err != nil {
		t.Errorf("findProperty in an empty record = %v, %v", ok, err)
	}
	// A truncated record is an error or an absence, never a panic, and
	// never a wrong value.
	for i := range len(rec) {
		for name, want := range p {
			if v, ok, _ := findProperty(rec[:i], name); ok && !v.Equal(want) {
				t.Errorf("truncated at %d: %q = %v, want %v", i, name, v, want)
			}
		}
	}
}

// TestRecordReader reads the system properties through a Row, with
// keys whose encoding escapes bytes.
func TestRecordReader(t *testing.T) {
	for _, keys := range [][2]string{{"p", "r"}, {"", ""}, {"😀a", "b\U0010fffd"}, {"中", ""}} {
		key := keyenc.AppendEntityKey(nil, 7, keys[0], keys[1])
		rec := appendRecord(nil, 98765, sampleProps())
		var r Row
		r.reset(key, rec)
		if v, ok := r.Property(RowKeyName); !ok || v.String() != keys[1] {
			t.Errorf("RowKey = %v, %v; want %q", v, ok, keys[1])
		}
		if v, ok := r.Property(PartitionKeyName); !ok || v.String() != keys[0] {
			t.Errorf("PartitionKey = %v, %v; want %q", v, ok, keys[0])
		}
		if v, ok := r.Property(TimestampName); !ok || v.Ticks() != 98765 {
			t.Errorf("Timestamp = %v, %v", v, ok)
		}
		if v, ok := r.Property("S"); !ok || v.String() != "héllo" {
			t.Errorf("S = %v, %v", v, ok)
		}
		if r.err != nil {
			t.Errorf("keys %q: err %v", keys, r.err)
		}
	}
	// A corrupt key or record sets err.
	var r Row
	r.reset([]byte("e12345678\x00"), []byte{1, 2})
	if _, ok := r.Property(PartitionKeyName); ok || r.err == nil {
		t.Errorf("corrupt key: ok %v, err %v", ok, r.err)
	}
	r.reset(keyenc.AppendEntityKey(nil, 1, "p", "r"), []byte{9})
	if _, ok := r.Property("S"); ok || r.err == nil {
		t.Errorf("corrupt record: ok %v, err %v", ok, r.err)
	}
	r.reset(keyenc.AppendEntityKey(nil, 1, "p", "r"), []byte{9})
	if _, ok := r.Property(TimestampName); ok || r.err == nil {
		t.Errorf("corrupt record's Timestamp: ok %v, err %v", ok, r.err)
	}
}

// FuzzFindProperty checks that findProperty never panics, and agrees with
// the full decoder on every record that decodes.
func FuzzFindProperty(f *testing.F) {
	f.Add(appendRecord(nil, 1, sampleProps()), "S")
	f.Add(appendRecord(nil, 0, nil), "A")
	f.Add(recordAsV1(appendRecord(nil, 1, sampleProps())), "I64")
	f.Add(appendRecord(nil, 1, Properties{"Long": StringValue(strings.Repeat("x", 300)), "Z": Int32Value(1)}), "Z")
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}, "x")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		for k := range uint64(4) { // never a panic, whatever the bytes
			findAt(b, name, k)
		}
		v, ok, err := findProperty(b, name)
		_, props, derr := decodeRecord(b, nil)
		if derr != nil {
			return
		}
		want, has := props[name]
		if err != nil || ok != has || (ok && !v.Equal(want)) {
			t.Fatalf("findProperty(%x, %q) = %v, %v, %v; the decoder has %v, %v", b, name, v, ok, err, want, has)
		}
		// Every property is found, and a name past them all walks the
		// whole record without error.
		for name, want := range props {
			if v, ok, err := findProperty(b, name); err != nil || !ok || !v.Equal(want) {
				t.Fatalf("findProperty(%x, %q) = %v, %v, %v; the decoder has %v", b, name, v, ok, err, want)
			}
		}
		if v, ok, err := findProperty(b, "\xff"); ok || err != nil {
			t.Fatalf("findProperty(%x, past all) = %v, %v, %v", b, v, ok, err)
		}
		// findAt finds a property at its place, and nowhere else; in a
		// version 1 record, nowhere.
		names := slices.Sorted(maps.Keys(props))
		for k, name := range names {
			for j := range len(names) + 1 {
				v, ok := findAt(b, name, uint64(j))
				if want := j == k && b[0] == recordVersion && len(names) < 0x80; ok != want || ok && !v.Equal(props[name]) {
					t.Fatalf("findAt(%x, %q, %d) = %v, %v; the decoder has it at %d", b, name, j, v, ok, k)
				}
			}
		}
		// Whatever the hint, find agrees: a hint is only a first guess.
		for name, want := range props {
			for _, hint := range []uint64{0, 1, uint64(len(props)) / 2, uint64(len(props)) - 1, uint64(len(props)), noHint} {
				var w recordWalker
				w.init(b, true)
				_, kind, at, found, ok := w.find(name, hint)
				if !ok || !found || w.err != nil || !w.value(kind, at).Equal(want) {
					t.Fatalf("find(%x, %q, hint %d) = %v, %v, %v; the decoder has %v", b, name, hint, found, ok, w.err, want)
				}
			}
		}
	})
}

// TestRecordWalkerCorrupt checks that the readers of records refuse the
// same corruptions with errCorruptRecord, in both versions: the decoder;
// in version 1, a search for a name past every name, which walks the
// whole layout; in version 2, a search for the property a corruption
// touches, which reads that property alone. No search returns a wrong
// value.
func TestRecordWalkerCorrupt(t *testing.T) {
	props := Properties{"A": BoolValue(true), "B": Int32Value(1), "C": StringValue("x")}
	for _, version := range []byte{recordV1, recordVersion} {
		good := appendRecord(nil, 7, props)
		if version == recordV1 {
			good = recordAsV1(good)
		}
		a := bodyStart(t, good) // property A: name length, name, kind, payload
		bad := map[string]struct {
			rec   []byte
			touch string // the property the corruption is in
		}{
			"version":         {append([]byte{3}, good[1:]...), "A"},
			"short header":    {good[:8], "A"},
			"count":           {append(append([]byte(nil), good[:9]...), 0xff), "A"},
			"bool byte":       {bytesReplaced(good, a+3, 2), "A"},
			"kind":            {bytesReplaced(good, a+2, 99), "A"},
			"null kind":       {bytesReplaced(good, a+2, byte(KindNull)), "A"},
			"kind past GUID":  {bytesReplaced(good, a+2, byte(KindBinary)+1), "A"},
			"trailing":        {append(append([]byte(nil), good...), 0), "C"},
			"truncated":       {good[:len(good)-1], "C"},
			"empty, trailing": {append(appendRecord(nil, 7, nil), 0), ""},
		}
		if version == recordVersion {
			// The offsets: 1+8+1 is the width, then B's offset and C's.
			bad["width"] = struct {
				rec   []byte
				touch string
			}{bytesReplaced(good, 10, 3), "A"}
			bad["width not the least"] = struct {
				rec   []byte
				touch string
			}{append(append(append([]byte(nil), good[:10]...), 2, 0), good[11:]...), "A"}
			bad["offset inside a property"] = struct {
				rec   []byte
				touch string
			}{bytesReplaced(good, 11, good[11]+1), "B"}
			bad["offset past the body"] = struct {
				rec   []byte
				touch string
			}{bytesReplaced(good, 12, 200), "C"}
		}
		for what, c := range bad {
			what = fmt.Sprintf("version %d, %s", version, what)
			if _, _, err := decodeRecord(c.rec, nil); err != errCorruptRecord {
				t.Errorf("%s: decodeRecord: %v", what, err)
			}
			if version == recordV1 {
				if _, _, err := findProperty(c.rec, "\xff"); err != errCorruptRecord {
					t.Errorf("%s: findProperty past all: %v", what, err)
				}
			} else if c.touch != "" {
				if v, ok, err := findProperty(c.rec, c.touch); err != errCorruptRecord {
					t.Errorf("%s: findProperty(%q) = %v, %v, %v", what, c.touch, v, ok, err)
				}
			}
			for name, want := range props {
				if v, ok, _ := findProperty(c.rec, name); ok && !v.Equal(want) {
					t.Errorf("%s: findProperty(%q) = %v, want %v", what, name, v, want)
				}
			}
		}
		// Names out of order, or not UTF-8, are the decoder's to refuse.
		for what, rec := range map[string][]byte{
			"order": bytesReplaced(good, a+1, 'D'),
			"utf-8": bytesReplaced(good, a+1, 0xc0),
		} {
			if _, _, err := decodeRecord(rec, nil); err != errCorruptRecord {
				t.Errorf("version %d, %s: decodeRecord: %v", version, what, err)
			}
		}
	}
}

// recordAsV1 returns a version 2 record in version 1: without its offset
// width and offsets.
func recordAsV1(rec []byte) []byte {
	var w recordWalker
	if _, err := w.init(rec, true); err != nil || w.offs.width == 0 {
		panic("recordAsV1 of a record that is not a sound version 2 one")
	}
	out := append([]byte{recordV1}, rec[1:9]...)
	out = binary.AppendUvarint(out, w.n)
	return append(out, w.b...)
}

// bodyStart returns where the body of a record starts.
func bodyStart(t testing.TB, rec []byte) int {
	var w recordWalker
	if _, err := w.init(rec, true); err != nil {
		t.Fatal(err)
	}
	return len(rec) - len(w.b)
}

// bytesReplaced returns a copy of b with b[i] set to c.
func bytesReplaced(b []byte, i int, c byte) []byte {
	b = append([]byte(nil), b...)
	b[i] = c
	return b
}

// BenchmarkRecordWalk measures the record walker's readers on the record
// of benchProps: finding its first and its last property by name (as a
// filter's MatchReader does on each scanned entity), and decoding it whole
// (as each returned entity is). The cpu-ns/op figure is the one to
// compare on a busy machine.
func BenchmarkRecordWalk(b *testing.B) {
	rec := benchRecord()
	for _, name := range []string{"Active", "Score"} {
		b.Run("FindProperty/"+name, func(b *testing.B) {
			loop(b, func() {
				if _, ok, err := findProperty(rec, name); !ok || err != nil {
					b.Fatal(ok, err)
				}
			})
		})
	}
	for _, name := range []string{"Active", "Score"} {
		b.Run("RowProperty/"+name, func(b *testing.B) {
			// A Row read one entity after another, as a scan's filter
			// reads it: the name's place in the last record is tried first.
			var r Row
			key := keyenc.AppendEntityKey(nil, 1, "p", "r")
			loop(b, func() {
				r.reset(key, rec)
				if _, ok := r.Property(name); !ok {
					b.Fatal(name)
				}
			})
		})
	}
	b.Run("Walk", func(b *testing.B) {
		// Every property read in order, as Row.Properties and the
		// decoders read them, without building anything.
		var w recordWalker
		loop(b, func() {
			w.init(rec, true)
			n := 0
			for _, _, ok := w.next(); ok; _, _, ok = w.next() {
				n++
			}
			if n != 10 || w.err != nil {
				b.Fatal(n, w.err)
			}
		})
	})
	b.Run("DecodeView", func(b *testing.B) {
		loop(b, func() {
			if _, _, err := decodeProps(rec, selection{}, true); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("MapOnly", func(b *testing.B) {
		// The Properties map of DecodeView alone: made for its 10
		// properties and filled with values already decoded. It is the
		// floor of what returning an entity costs, whatever reads it.
		_, props, err := decodeProps(rec, selection{}, true)
		if err != nil {
			b.Fatal(err)
		}
		names := slices.Sorted(maps.Keys(props))
		vals := make([]Value, len(names))
		for i, n := range names {
			vals[i] = props[n]
		}
		var sink Properties
		loop(b, func() {
			m := make(Properties, len(names))
			for i, n := range names {
				m[n] = vals[i]
			}
			sink = m
		})
		_ = sink
	})
}

// TestRowErr checks that Row.Err reports the corruption a loop over a
// Row's Properties met (and ended early at), and nothing on a sound
// record: a GetRow's reader checks it to tell a whole entity from part
// of one.
func TestRowErr(t *testing.T) {
	good := appendRecord(nil, 7, Properties{"A": BoolValue(true), "B": Int32Value(1), "C": StringValue("x")})
	for what, c := range map[string]struct {
		rec  []byte
		want error
		n    int
	}{
		"sound":     {good, nil, 3},
		"kind":      {bytesReplaced(good, bodyStart(t, good)+2, 99), errCorruptRecord, 0},
		"truncated": {good[:len(good)-1], errCorruptRecord, 2},
	} {
		r := Row{keyed: true, pk: "p", rk: "r", ticks: 7, rec: c.rec}
		n := 0
		for range r.Properties() {
			n++
		}
		if n != c.n || !errors.Is(r.Err(), c.want) {
			t.Errorf("%s: %d properties, Err %v; want %d, %v", what, n, r.Err(), c.n, c.want)
		}
	}
}
