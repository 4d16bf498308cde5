package memory

import (
	"bytes"
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

// TestSetNested: SetNested stores every write, whatever the bytes; each
// inner write whose key and value are the outer value's bytes from its At
// lies in the outer item's buffer (one allocation for them all), the
// others apart; all are copies of the arguments.
func TestSetNested(t *testing.T) {
	outer := []byte("record-head:ka1va1|kb2vb22|kc3")
	in := func(k, v string, at int) storage.Nested {
		return storage.Nested{Key: []byte(k), Value: []byte(v), At: at}
	}
	type nested struct {
		n      storage.Nested
		shared bool
	}
	cases := []struct {
		name       string
		key, value []byte
		inner      []nested
	}{
		{"one at the end", []byte("outer"), outer, []nested{{in("kc", "3", 27), true}}},
		{"three", []byte("outer"), outer, []nested{{in("ka", "1va1", 12), true}, {in("kb", "2vb22", 19), true}, {in("kc", "3", 27), true}}},
		{"empty inner value", []byte("outer"), []byte("headinner"), []nested{{in("inner", "", 4), true}}},
		{"the whole value", []byte("outer"), []byte("kv"), []nested{{in("k", "v", 0), true}}},
		{"none", []byte("outer"), outer, nil},
		{"one elsewhere", []byte("outer"), outer, []nested{{in("ka", "1va1", 12), true}, {in("kb", "2vb22", 18), false}, {in("kc", "3", 27), true}}},
		{"value differs", []byte("outer"), outer, []nested{{in("kc", "X", 27), false}}},
		{"past the end", []byte("outer"), outer, []nested{{in("kc", "3|", 27), false}, {in("x", "", 30), false}}},
		{"negative place", []byte("outer"), outer, []nested{{in("r", "e", -1), false}}},
		{"longer than the value", []byte("outer"), []byte("v"), []nested{{in("key", "value", 0), false}}},
		{"empty inner key", []byte("outer"), outer, []nested{{in("", "ka", 12), false}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := New(nil)
			defer e.Close()
			b := e.NewBatch()
			key, value := bytes.Clone(c.key), bytes.Clone(c.value)
			var inner []storage.Nested
			for _, n := range c.inner {
				inner = append(inner, storage.Nested{Key: bytes.Clone(n.n.Key), Value: bytes.Clone(n.n.Value), At: n.n.At})
			}
			if err := b.(*memBatch).SetNested(key, value, inner); err != nil {
				t.Fatal(err)
			}
			ops := b.(*memBatch).ops
			if len(ops) != 1+len(c.inner) {
				t.Fatalf("%d writes in the batch, want %d", len(ops), 1+len(c.inner))
			}
			start, end := uintptr(unsafe.Pointer(ops[0].it.p)), uintptr(unsafe.Pointer(ops[0].it.p))+uintptr(len(c.key)+len(c.value))
			for i, n := range c.inner {
				in := uintptr(unsafe.Pointer(ops[1+i].it.p))
				if shared := in >= start && in < end; shared != n.shared {
					t.Errorf("inner item %q in the outer one's buffer: %v, want %v", n.n.Key, shared, n.shared)
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
			kvs := [][2][]byte{{c.key, c.value}}
			for _, n := range c.inner {
				kvs = append(kvs, [2][]byte{n.n.Key, n.n.Value})
			}
			for _, kv := range kvs {
				v, _, err := e.Get(kv[0])
				if err != nil || !bytes.Equal(v, kv[1]) {
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
	if err := b.(*memBatch).SetNested([]byte("k"), []byte("vk"), []storage.Nested{{Key: []byte("k"), At: 1}}); err != storage.ErrClosed {
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
			ik, iv := value[at:at+10], value[at+10:at+50]
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
			want := [][2][]byte{{key, value}, {ik, iv}}
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
