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
// recorded) is version 1; once recorded, it checks; another version, or
// one that does not decode, is refused with ErrUnknownFormat naming it.
func TestCheckFormat(t *testing.T) {
	ctx := context.Background()
	eng := memory.New(nil)
	defer eng.Close()
	if recorded, err := checkFormat(eng); recorded || err != nil {
		t.Fatalf("no version: %v %v", recorded, err)
	}
	if err := recordFormat(ctx, eng); err != nil {
		t.Fatal(err)
	}
	if recorded, err := checkFormat(eng); !recorded || err != nil {
		t.Fatalf("recorded: %v %v", recorded, err)
	}
	for _, c := range []struct {
		v    []byte
		want string
	}{
		{encodeFormat(2), "format version 2; this localtable reads version 1"},
		{[]byte{1}, "not 8 bytes"},
	} {
		setKey(t, eng, metaFormat, c.v)
		_, err := checkFormat(eng)
		if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("version %x: %v, want ErrUnknownFormat with %q", c.v, err, c.want)
		}
	}
}

// On a shared engine recordFormat never overwrites a version another
// process recorded: it checks that one instead.
func TestRecordFormatShared(t *testing.T) {
	ctx := context.Background()
	store := sharedmem.New()
	e1, e2 := store.Open(), store.Open()
	defer e1.Close()
	defer e2.Close()
	if recorded, err := checkFormat(e1); recorded || err != nil {
		t.Fatalf("no version: %v %v", recorded, err)
	}
	setKey(t, e2, metaFormat, encodeFormat(2)) // a newer process, since
	if err := recordFormat(ctx, e1); !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("recordFormat over a newer version: %v", err)
	}
	if _, err := checkFormat(e2); !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("the newer version was overwritten: %v", err)
	}
	store2 := sharedmem.New()
	e3 := store2.Open()
	defer e3.Close()
	if err := recordFormat(ctx, e3); err != nil {
		t.Fatal(err)
	}
	if recorded, err := checkFormat(e3); !recorded || err != nil {
		t.Fatalf("recorded: %v %v", recorded, err)
	}
}

// Verify knows the format key: a store with version 1 recorded is clean,
// another version is a problem.
func TestVerifyFormatKey(t *testing.T) {
	ctx := context.Background()
	eng := memory.New(nil)
	if err := recordFormat(ctx, eng); err != nil {
		t.Fatal(err)
	}
	acct, err := Open(&Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	rep, err := acct.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("version 1 recorded: %v %+v", err, rep)
	}
	setKey(t, eng, metaFormat, encodeFormat(2))
	rep, err = acct.Verify(ctx)
	if err != nil || rep.OK() || !strings.Contains(strings.Join(rep.Problems, "\n"), "format version is 2") {
		t.Fatalf("version 2 recorded: %v %+v", err, rep)
	}
}
