package localtable_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/internal/tabletest"
)

// The service properties persist with the account: a pebble-backed
// account reopened has them, and Verify accepts their key.
func TestServicePropertiesPersist(t *testing.T) {
	r := tabletest.NewReopener(t)
	a := r.Open(nil)
	if p, err := a.ServiceProperties(ctx); err != nil || p != nil {
		t.Fatalf("before any set: %q, %v", p, err)
	}
	want := []byte("<StorageServiceProperties><Cors><CorsRule/></Cors></StorageServiceProperties>")
	if err := a.SetServiceProperties(ctx, want); err != nil {
		t.Fatal(err)
	}
	a = r.Open(nil)
	if p, err := a.ServiceProperties(ctx); err != nil || string(p) != string(want) {
		t.Fatalf("after reopening: %q, %v", p, err)
	}
	if rep, err := a.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify: %v %+v", err, rep)
	}
	if err := a.SetServiceProperties(ctx, nil); err != nil {
		t.Fatal(err)
	}
	a = r.Open(nil)
	if p, err := a.ServiceProperties(ctx); err != nil || p != nil {
		t.Fatalf("cleared, after reopening: %q, %v", p, err)
	}
	big := make([]byte, localtable.MaxServiceProperties+1)
	if err := a.SetServiceProperties(ctx, big); !errors.Is(err, localtable.ErrInvalidInput) {
		t.Fatalf("too large: %v", err)
	}
}

// On a shared engine, an Account sees the properties another set, and
// concurrent updates of two Accounts are each applied once.
func TestServicePropertiesShared(t *testing.T) {
	s := sharedmem.New()
	a, b := openShared(t, s, nil), openShared(t, s, nil)
	if err := a.SetServiceProperties(ctx, []byte("<p>a</p>")); err != nil {
		t.Fatal(err)
	}
	if p, err := b.ServiceProperties(ctx); err != nil || string(p) != "<p>a</p>" {
		t.Fatalf("b sees %q, %v", p, err)
	}
	if err := b.SetServiceProperties(ctx, nil); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	for _, acct := range []*localtable.Account{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if err := acct.UpdateServiceProperties(ctx, func(cur []byte) ([]byte, error) {
					return append(cur, '.'), nil
				}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if p, err := a.ServiceProperties(ctx); err != nil || len(p) != 2*n {
		t.Fatalf("after %d updates: %d bytes, %v", 2*n, len(p), err)
	}
}
