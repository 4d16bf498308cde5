package localtable

import (
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

// TestRecordReader reads the system properties through the reader, with
// keys whose encoding escapes bytes.
func TestRecordReader(t *testing.T) {
	for _, keys := range [][2]string{{"p", "r"}, {"", ""}, {"😀a", "b\U0010fffd"}, {"中", ""}} {
		key := keyenc.AppendEntityKey(nil, 7, keys[0], keys[1])
		rec := appendRecord(nil, 98765, sampleProps())
		var r recordReader
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
	var r recordReader
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
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}, "x")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		v, ok, err := findProperty(b, name)
		_, props, derr := decodeRecord(b, nil)
		if derr != nil {
			return
		}
		want, has := props[name]
		if err != nil || ok != has || (ok && !v.Equal(want)) {
			t.Fatalf("findProperty(%x, %q) = %v, %v, %v; the decoder has %v, %v", b, name, v, ok, err, want, has)
		}
	})
}
