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

// TestSetNested: SetNested stores both writes, whatever the bytes; when
// the inner key and value end the outer value, the inner item lies in the
// outer one's buffer (one allocation), and both are copies of the
// arguments.
func TestSetNested(t *testing.T) {
	outer := []byte("record-head:inner-keyinner-value")
	ik, iv := outer[12:21], outer[21:]
	cases := []struct {
		name                 string
		key, value, ink, inv []byte
		shared               bool
	}{
		{"nested", []byte("outer"), outer, ik, iv, true},
		{"nested, empty inner value", []byte("outer"), []byte("headinner"), []byte("inner"), nil, true},
		{"equal bytes elsewhere", []byte("outer"), outer, []byte("inner-key"), []byte("inner-value"), true},
		{"not the end", []byte("outer"), outer, []byte("inner-ke"), []byte("y"), false},
		{"value differs", []byte("outer"), outer, ik, []byte("inner-valuX"), false},
		{"longer than the value", []byte("outer"), []byte("v"), []byte("key"), []byte("value"), false},
		{"empty inner key", []byte("outer"), outer, nil, []byte("inner-value"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := New(nil)
			defer e.Close()
			b := e.NewBatch()
			key, value := bytes.Clone(c.key), bytes.Clone(c.value)
			ink, inv := bytes.Clone(c.ink), bytes.Clone(c.inv)
			if err := b.(*memBatch).SetNested(key, value, ink, inv); err != nil {
				t.Fatal(err)
			}
			ops := b.(*memBatch).ops
			if len(ops) != 2 {
				t.Fatalf("%d writes in the batch, want 2", len(ops))
			}
			start, end := uintptr(unsafe.Pointer(ops[0].it.p)), uintptr(unsafe.Pointer(ops[0].it.p))+uintptr(len(c.key)+len(c.value))
			in := uintptr(unsafe.Pointer(ops[1].it.p))
			if shared := in >= start && in < end; shared != c.shared {
				t.Errorf("inner item in the outer one's buffer: %v, want %v", shared, c.shared)
			}
			clear(key)
			clear(value)
			clear(ink)
			clear(inv)
			if err := b.Commit(false); err != nil {
				t.Fatal(err)
			}
			for _, kv := range [][2][]byte{{c.key, c.value}, {c.ink, c.inv}} {
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
	if err := b.(*memBatch).SetNested([]byte("k"), []byte("vk"), []byte("k"), nil); err != storage.ErrClosed {
		t.Errorf("SetNested on a closed batch: %v, want storage.ErrClosed", err)
	}
}
