package memory

import (
	"bytes"
	"runtime"
	"testing"
	"unsafe"

	"github.com/localtable/localtable/storage"
)

// TestItemLayout guards the item's size: every commit copies the items of
// the nodes on its paths, so a larger item makes every write slower.
func TestItemLayout(t *testing.T) {
	if n := unsafe.Sizeof(item{}); n > 16 {
		t.Errorf("item is %d bytes; want at most 16", n)
	}
}

func TestItemKeyValue(t *testing.T) {
	cases := []struct{ key, value []byte }{
		{[]byte("k"), []byte("v")},
		{[]byte("key"), nil},
		{nil, []byte("value")},
		{nil, nil},
		{[]byte{}, []byte{}},
	}
	for _, c := range cases {
		it := newItem(c.key, c.value)
		if !bytes.Equal(it.key(), c.key) || !bytes.Equal(it.value(), c.value) {
			t.Errorf("newItem(%q, %q): key %q, value %q", c.key, c.value, it.key(), it.value())
		}
		if it.value() == nil {
			t.Errorf("newItem(%q, %q): nil value; an empty value is present, not absent", c.key, c.value)
		}
		if k := it.key(); len(k) != cap(k) {
			t.Errorf("newItem(%q, %q): key capacity %d reaches into the value", c.key, c.value, cap(k))
		}
		if itemLess(it, probe(c.key)) || itemLess(probe(c.key), it) {
			t.Errorf("newItem(%q, %q): differs from the probe of its key", c.key, c.value)
		}
	}
	// The buffer is a copy: changing the arguments changes nothing.
	k, v := []byte("key"), []byte("value")
	it := newItem(k, v)
	k[0], v[0] = 'X', 'X'
	if string(it.key()) != "key" || string(it.value()) != "value" {
		t.Errorf("item changed with its arguments: %q=%q", it.key(), it.value())
	}
}

// TestSetNested: SetNested stores the outer value with each inner write's
// key and value inserted at its At, and each inner write, all in one
// buffer (the inner items point into the outer one's), all copies of the
// arguments; inner writes out of place are an error, and nothing is set.
func TestSetNested(t *testing.T) {
	in := func(k, v string, at int) storage.Nested {
		return storage.Nested{Key: []byte(k), Value: []byte(v), At: at}
	}
	cases := []struct {
		name    string
		value   string
		inner   []storage.Nested
		want    string // the outer value stored
		wantErr bool
	}{
		{"one at the end", "head:", []storage.Nested{in("ka", "1", 5)}, "head:ka1", false},
		{"three", "h|x|y|", []storage.Nested{in("ka", "1", 2), in("kb", "22", 4), in("kc", "", 6)}, "h|ka1x|kb22y|kc", false},
		{"two at one place", "ab", []storage.Nested{in("k1", "v1", 1), in("k2", "v2", 1)}, "ak1v1k2v2b", false},
		{"at the start", "", []storage.Nested{in("k", "v", 0)}, "kv", false},
		{"none", "value", nil, "value", false},
		{"empty inner key", "ab", []storage.Nested{in("", "v", 1)}, "avb", false},
		{"past the end", "ab", []storage.Nested{in("k", "v", 3)}, "", true},
		{"negative place", "ab", []storage.Nested{in("k", "v", -1)}, "", true},
		{"out of order", "abc", []storage.Nested{in("k1", "v", 2), in("k2", "v", 1)}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := New(nil)
			defer e.Close()
			b := e.NewBatch().(*memBatch)
			key, value := []byte("outer"), []byte(c.value)
			var inner []storage.Nested
			for _, n := range c.inner {
				inner = append(inner, storage.Nested{Key: bytes.Clone(n.Key), Value: bytes.Clone(n.Value), At: n.At})
			}
			err := b.SetNested(key, value, inner)
			if c.wantErr {
				if err == nil || len(b.ops) != 0 {
					t.Fatalf("SetNested: %v, %d writes in the batch; want an error and none", err, len(b.ops))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(b.ops) != 1+len(c.inner) {
				t.Fatalf("%d writes in the batch, want %d", len(b.ops), 1+len(c.inner))
			}
			start := uintptr(unsafe.Pointer(b.ops[0].it.p))
			end := start + uintptr(len(key)+len(c.want))
			for i, n := range c.inner {
				if p := uintptr(unsafe.Pointer(b.ops[1+i].it.p)); p < start || p > end {
					t.Errorf("inner item %q not in the outer one's buffer", n.Key)
				}
			}
			clear(key)
			clear(value)
			for _, n := range inner {
				clear(n.Key)
				clear(n.Value)
			}
			if err := b.Commit(false); err != nil {
				t.Fatal(err)
			}
			kvs := [][2]string{{"outer", c.want}}
			for _, n := range c.inner {
				kvs = append(kvs, [2]string{string(n.Key), string(n.Value)})
			}
			for _, kv := range kvs {
				v, _, err := e.Get([]byte(kv[0]))
				if err != nil || string(v) != kv[1] {
					t.Errorf("Get(%q) = %q, %v; want %q", kv[0], v, err, kv[1])
				}
			}
		})
	}
	// On a closed batch, ErrClosed.
	e := New(nil)
	defer e.Close()
	b := e.NewBatch()
	b.Close()
	if err := b.(*memBatch).SetNested([]byte("k"), []byte("v"), []storage.Nested{{Key: []byte("k"), At: 1}}); err != storage.ErrClosed {
		t.Errorf("SetNested on a closed batch: %v, want storage.ErrClosed", err)
	}
}

// TestSetNestedAligned: the first write nested in a buffer of 256 bytes
// or more (which the runtime allocates at a multiple of 32 bytes) has
// its key at a multiple of nestAlign bytes in memory, wherever it lies
// in the outer value; the writes are stored as given.
func TestSetNestedAligned(t *testing.T) {
	e := New(nil)
	defer e.Close()
	for at := range 40 {
		for _, klen := range []int{1, 9, 17} {
			key := bytes.Repeat([]byte{'o'}, klen)
			value := make([]byte, 300)
			for i := range value {
				value[i] = byte(i)
			}
			ik, iv := bytes.Repeat([]byte{'k'}, 10), bytes.Repeat([]byte{'v'}, 40)
			b := e.NewBatch().(*memBatch)
			if err := b.SetNested(key, value, []storage.Nested{{Key: ik, Value: iv, At: at}}); err != nil {
				t.Fatal(err)
			}
			in := b.ops[1].it
			if p := uintptr(unsafe.Pointer(in.p)); p%nestAlign != 0 {
				t.Errorf("key %d, inner at %d: the inner key at %#x, not a multiple of %d", klen, at, p, nestAlign)
			}
			if got := uintptr(unsafe.Pointer(in.p)) - uintptr(unsafe.Pointer(b.ops[0].it.p)); got != uintptr(klen+at) {
				t.Errorf("key %d, inner at %d: the inner key %d bytes after the outer one, want %d", klen, at, got, klen+at)
			}
			whole := append(append(append(bytes.Clone(value[:at]), ik...), iv...), value[at:]...)
			want := [][2][]byte{{key, whole}, {ik, iv}}
			if err := b.Commit(false); err != nil {
				t.Fatal(err)
			}
			for _, kv := range want {
				if v, _, err := e.Get(kv[0]); err != nil || !bytes.Equal(v, kv[1]) {
					t.Fatalf("Get(%q) = %q, %v; want %q", kv[0], v, err, kv[1])
				}
			}
		}
	}
}

// TestSetNestedEmptyAtEnd: an inner write with an empty key and value at
// the end of the outer value, whose buffer it would point past (a crash
// of the collector, or of checkptr under -race), is stored as any other.
func TestSetNestedEmptyAtEnd(t *testing.T) {
	e := New(nil)
	defer e.Close()
	for n := range 64 {
		key, value := []byte{'k', byte(n)}, bytes.Repeat([]byte{'v'}, n)
		b := e.NewBatch().(*memBatch)
		if err := b.SetNested(key, value, []storage.Nested{{At: n}}); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		if v, _, err := e.Get(key); err != nil || !bytes.Equal(v, value) {
			t.Fatalf("Get(%q) = %q, %v; want %q", key, v, err, value)
		}
		if v, _, err := e.Get(nil); err != nil || len(v) != 0 {
			t.Fatalf("Get of the empty key = %q, %v; want an empty value", v, err)
		}
	}
}
