package rawquery

import (
	"context"
	"iter"
	"testing"
)

// TestSetGet: Get returns the Func that Set was given, and panics for a
// Get with other types than the Set's.
func TestSetGet(t *testing.T) {
	old := query
	defer func() { query = old }()
	Set(func(t *int, _ context.Context, opts string, visit Visit[float64]) (bool, error) {
		return opts == "ok", visit("p", "r", 1, func(func(string, float64) bool) {})
	})
	got, err := Get[*int, string, bool, float64]()(nil, context.Background(), "ok", func(pk, rk string, ticks int64, _ iter.Seq2[string, float64]) error {
		if pk != "p" || rk != "r" || ticks != 1 {
			t.Errorf("visit(%q, %q, %d)", pk, rk, ticks)
		}
		return nil
	})
	if !got || err != nil {
		t.Errorf("the Func Set = %v, %v; want true, nil", got, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Get with other types than Set's did not panic")
		}
	}()
	Get[*int, string, bool, int]()
}
