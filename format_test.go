package localtable

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

func setKey(t *testing.T, eng storage.Engine, k, v []byte) {
	t.Helper()
	b := eng.NewBatch()
	defer b.Close()
	if err := b.Set(k, v); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
}

// A store without a format version (every store written before it was
// recorded) or of version 1 or 2 gets version 3 recorded; version 3 checks; a
// later version, or one that does not decode, is refused with
// ErrUnknownFormat naming it.
func TestPlanFormat(t *testing.T) {
	for _, stored := range [][]byte{nil, encodeFormat(1), encodeFormat(2)} {
		if ws, err := planFormat(stored, stored != nil); err != nil || len(ws) != 1 || string(ws[0].key) != string(metaFormat) || string(ws[0].value) != string(encodeFormat(3)) {
			t.Fatalf("stored %x: %+v, %v", stored, ws, err)
		}
	}
	if ws, err := planFormat(encodeFormat(3), true); err != nil || ws != nil {
		t.Fatalf("version 3: %+v, %v", ws, err)
	}
	for _, c := range []struct {
		v    []byte
		want string
	}{
		{encodeFormat(4), "format version 4; this localtable reads versions 1 to 3"},
		{encodeFormat(0), "format version 0"},
		{[]byte{1}, "not 8 bytes"},
	} {
		_, err := planFormat(c.v, true)
		if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("version %x: %v, want ErrUnknownFormat with %q", c.v, err, c.want)
		}
	}
}

// Open records the version in a store without one, and refuses a store
// of another version, leaving it as it was; on a shared engine it never
// overwrites a version another process recorded.
func TestOpenChecksFormat(t *testing.T) {
	eng := memory.New(nil)
	a, err := Open(&Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	v, c, err := eng.Get(metaFormat)
	if err != nil || string(v) != string(encodeFormat(formatVersion)) {
		t.Fatalf("after Open: %x, %v", v, err)
	}
	c.Close()
	a.Close()

	for _, name := range []string{"memory", "shared"} {
		var eng, other storage.Engine
		if name == "memory" {
			eng = memory.New(nil)
			other = eng
		} else {
			store := sharedmem.New()
			eng, other = store.Open(), store.Open()
			defer other.Close()
		}
		setKey(t, other, metaFormat, encodeFormat(4)) // a newer localtable's store
		if _, err := Open(&Options{Engine: eng}); !errors.Is(err, ErrUnknownFormat) {
			t.Fatalf("%s: Open of a version 4 store: %v", name, err)
		}
		if name == "memory" {
			continue // a failed Open closes its engine
		}
		v, c, err := other.Get(metaFormat)
		if err != nil || string(v) != string(encodeFormat(4)) {
			t.Fatalf("%s: the version 4 was overwritten: %x, %v", name, v, err)
		}
		c.Close()
	}
}

// Verify knows the format key: a store with version 3 recorded is clean,
// another version is a problem.
func TestVerifyFormatKey(t *testing.T) {
	ctx := context.Background()
	eng := memory.New(nil)
	acct, err := Open(&Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	rep, err := acct.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("version 3 recorded: %v %+v", err, rep)
	}
	setKey(t, eng, metaFormat, encodeFormat(4))
	rep, err = acct.Verify(ctx)
	if err != nil || rep.OK() || !strings.Contains(strings.Join(rep.Problems, "\n"), "format version is 4") {
		t.Fatalf("version 4 recorded: %v %+v", err, rep)
	}
}

// A Restore keeps the store's format version this localtable's, whatever
// the checkpoint holds: the store goes on with this localtable's records.
// The memory engine restores a checkpoint itself; a shared engine's is
// copied back from a snapshot.
func TestRestoreKeepsFormat(t *testing.T) {
	ctx := context.Background()
	for name, eng := range map[string]storage.Engine{"memory": memory.New(nil), "shared": sharedmem.New().Open()} {
		a, err := Open(&Options{Engine: eng})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		setKey(t, eng, metaFormat, encodeFormat(1)) // as an older store's
		cp, err := a.Checkpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Restore(ctx, cp); err != nil {
			t.Fatal(err)
		}
		v, c, err := eng.Get(metaFormat)
		if err != nil || string(v) != string(encodeFormat(formatVersion)) {
			t.Fatalf("%s: after Restore: %x, %v; want version %d", name, v, err, formatVersion)
		}
		c.Close()
	}
}
