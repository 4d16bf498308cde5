package localtable

import (
	"testing"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

// plainBatch hides a batch's storage.NestedSetter.
type plainBatch struct{ storage.Batch }

// TestApplyWritesNested: a write set with writes nested in others stores
// the same pairs whether the batch nests them (storage.NestedSetter) or
// not (the outer values put together first): each outer value with its
// nested writes' keys and values inserted at their places, and each
// nested write on its own.
func TestApplyWritesNested(t *testing.T) {
	ws := []write{
		{key: []byte("e1"), value: []byte("v1")},
		{key: []byte("e2"), value: []byte("value2")},
		{key: []byte("plain"), value: []byte("p")},
		{key: []byte("e3"), value: []byte("v3")},
		{key: []byte("gone"), del: true},
	}
	ws = append(ws, write{key: []byte("outer"), value: []byte("<a|b|c>")})
	nestIn(ws, 0, 1)
	nestIn(ws, 1, 3)
	nestIn(ws, 3, 3) // two at one place, in the order nested
	ws = append(ws, write{key: []byte("entry"), value: emptyValue})
	want := map[string]string{
		"e1": "v1", "e2": "value2", "e3": "v3", "plain": "p",
		"outer": "<e1v1a|e2value2e3v3b|c>",
		"entry": "",
	}
	for _, nests := range []bool{true, false} {
		eng := memory.New(nil)
		if b := eng.NewBatch(); b != nil {
			b.Set([]byte("gone"), []byte("x"))
			if err := b.Commit(false); err != nil {
				t.Fatal(err)
			}
		}
		var b storage.Batch = eng.NewBatch()
		if !nests {
			b = plainBatch{b}
		}
		if err := applyWrites(b, ws, nil); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		it, err := eng.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for ok := it.First(); ok; ok = it.Next() {
			got[string(it.Key())] = string(it.Value())
		}
		it.Close()
		eng.Close()
		if len(got) != len(want) {
			t.Errorf("nests %v: %d pairs stored, want %d: %q", nests, len(got), len(want), got)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("nests %v: %q = %q, want %q", nests, k, got[k], v)
			}
		}
	}
}

// TestApplyWritesNestedOutOfPlace: a nested write out of place (past its
// outer value's end) is an error whether the batch nests writes or not,
// never a panic.
func TestApplyWritesNestedOutOfPlace(t *testing.T) {
	for _, nests := range []bool{true, false} {
		ws := []write{{key: []byte("e"), value: []byte("v")}, {key: []byte("outer"), value: []byte("ab")}}
		nestIn(ws, 0, 3)
		eng := memory.New(nil)
		var b storage.Batch = eng.NewBatch()
		if !nests {
			b = plainBatch{b}
		}
		if err := applyWrites(b, ws, nil); err == nil {
			t.Errorf("nests %v: no error", nests)
		}
		b.Close()
		eng.Close()
	}
}
