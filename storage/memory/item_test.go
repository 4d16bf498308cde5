package memory

import (
	"bytes"
	"testing"
	"unsafe"
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
