package localtabletest_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	lt "github.com/localtable/localtable/localtabletest"
)

// Latency applies per operation, draws from the seeded source, and on a
// manual clock waits for the test to advance it: no real sleeping.
func TestLatencyManualClock(t *testing.T) {
	ctx := context.Background()
	srv, c := newOrders(t, lt.WithTime(time.Unix(1e9, 0)), lt.WithLatency(lt.Fixed(time.Second), lt.OpInsert))
	done := make(chan error, 1)
	go func() {
		_, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
		done <- err
	}()
	// Queries have no latency and pass the held insert.
	for {
		if _, err := c.NewListEntitiesPager(nil).NextPage(ctx); err != nil {
			t.Fatal(err)
		}
		if len(srv.Log().Op(lt.OpInsert)) == 1 {
			break
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the insert finished before the clock moved: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	srv.Clock.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ins := srv.Log().Op(lt.OpInsert)
	if ins[0].Delay != time.Second || ins[0].Status != 201 {
		t.Fatalf("insert: %+v", ins[0])
	}
	if q := srv.Log().Op(lt.OpQuery); q[0].Delay != 0 {
		t.Fatalf("a query got latency %v", q[0].Delay)
	}
}

// On the default clock latency is a real sleep, drawn from the
// distribution by the seed; SetLatency(nil) removes it.
func TestLatencyReal(t *testing.T) {
	delays := func(seed uint64) []time.Duration {
		srv, c := newOrders(t, lt.WithSeed(seed))
		srv.SetLatency(lt.Uniform(2*time.Millisecond, 12*time.Millisecond))
		t0 := time.Now()
		addEntity(t, c, "p", "r")
		addEntity(t, c, "p", "s")
		el := time.Since(t0)
		srv.SetLatency(nil)
		addEntity(t, c, "p", "t")
		var ds []time.Duration
		for _, r := range srv.Log() {
			ds = append(ds, r.Delay)
		}
		if el < ds[0]+ds[1] {
			t.Fatalf("two inserts took %v, under their latency %v", el, ds[0]+ds[1])
		}
		return ds
	}
	a, b, c := delays(3), delays(3), delays(4)
	for i, d := range a[:2] {
		if d < 2*time.Millisecond || d >= 12*time.Millisecond || d != b[i] {
			t.Fatalf("seed 3: %v and %v", a, b)
		}
	}
	if a[2] != 0 {
		t.Fatalf("latency after SetLatency(nil): %v", a[2])
	}
	if a[0] == c[0] && a[1] == c[1] {
		t.Fatalf("seeds 3 and 4 drew the same delays %v", a)
	}
}

func TestLatencyDistributions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		if d := lt.Uniform(time.Millisecond, 2*time.Millisecond)(r); d < time.Millisecond || d >= 2*time.Millisecond {
			t.Fatalf("Uniform gave %v", d)
		}
		if d := lt.Normal(time.Millisecond, 5*time.Millisecond)(r); d < 0 {
			t.Fatalf("Normal gave %v", d)
		}
	}
	if d := lt.Fixed(3 * time.Second)(r); d != 3*time.Second {
		t.Fatal(d)
	}
	if d := lt.Uniform(time.Second, time.Second)(r); d != time.Second {
		t.Fatal(d)
	}
}
