package tablequeue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/examples/internal/tablequeue"
)

var start = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

// newQueue returns the queue "orders" in a new in-memory table, on a
// stalled manual clock.
func newQueue(t testing.TB, opts tablequeue.Options) (*tablequeue.Queue, *tablequeue.ManualClock, *localtable.Table) {
	t.Helper()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acct.Close() })
	tbl, err := acct.CreateTable(context.Background(), "Queues")
	if err != nil {
		t.Fatal(err)
	}
	clk := tablequeue.NewManualClock(start)
	opts.Clock = clk.Now
	q, err := tablequeue.New(tbl, "orders", &opts)
	if err != nil {
		t.Fatal(err)
	}
	return q, clk, tbl
}

func mustEnqueue(t testing.TB, q *tablequeue.Queue, bodies ...string) []tablequeue.Message {
	t.Helper()
	var ms []tablequeue.Message
	for _, b := range bodies {
		m, err := q.Enqueue(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

func mustDequeue(t testing.TB, q *tablequeue.Queue) tablequeue.Message {
	t.Helper()
	m, ok, err := q.Dequeue(context.Background())
	if err != nil || !ok {
		t.Fatalf("Dequeue = %+v, %v, %v; want a message", m, ok, err)
	}
	return m
}

func mustBeEmpty(t testing.TB, q *tablequeue.Queue) {
	t.Helper()
	if m, ok, err := q.Dequeue(context.Background()); err != nil || ok {
		t.Fatalf("Dequeue = %+v, %v, %v; want no visible message", m, ok, err)
	}
}

func mustLen(t testing.TB, q *tablequeue.Queue, want int) {
	t.Helper()
	n, err := q.Len(context.Background())
	if err != nil || n != want {
		t.Fatalf("%s: Len = %d, %v; want %d", q.Name(), n, err, want)
	}
}

// One handle's messages come out in enqueue order even when the clock does
// not move between them.
func TestFIFO(t *testing.T) {
	q, _, _ := newQueue(t, tablequeue.Options{})
	bodies := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	ms := mustEnqueue(t, q, bodies...)
	for i := 1; i < len(ms); i++ {
		if ms[i].ID <= ms[i-1].ID {
			t.Fatalf("IDs not increasing: %q then %q", ms[i-1].ID, ms[i].ID)
		}
	}
	for _, want := range bodies {
		if m := mustDequeue(t, q); m.Body != want {
			t.Fatalf("dequeued %q, want %q", m.Body, want)
		}
	}
	mustBeEmpty(t, q)
}

func TestVisibilityTimeout(t *testing.T) {
	q, clk, _ := newQueue(t, tablequeue.Options{VisibilityTimeout: 10 * time.Second})
	ctx := context.Background()
	sent := mustEnqueue(t, q, "hello")[0]

	// Peek changes nothing.
	for range 2 {
		ps, err := q.Peek(ctx, 5)
		if err != nil || len(ps) != 1 || ps[0].ID != sent.ID || ps[0].DequeueCount != 0 || ps[0].PopReceipt != "" {
			t.Fatalf("Peek = %+v, %v", ps, err)
		}
	}

	m := mustDequeue(t, q)
	if m.ID != sent.ID || m.Body != "hello" || m.DequeueCount != 1 || m.PopReceipt == "" ||
		!m.InsertedAt.Equal(start) || !m.NextVisible.Equal(start.Add(10*time.Second)) {
		t.Fatalf("first dequeue = %+v", m)
	}
	// Hidden, but still in the queue.
	mustBeEmpty(t, q)
	mustLen(t, q, 1)
	if ps, err := q.Peek(ctx, 5); err != nil || len(ps) != 0 {
		t.Fatalf("Peek of a hidden message = %+v, %v", ps, err)
	}
	clk.Advance(10*time.Second - time.Microsecond)
	mustBeEmpty(t, q)

	// Visible again at NextVisible, with a new receipt and count.
	clk.Advance(time.Microsecond)
	m2 := mustDequeue(t, q)
	if m2.ID != m.ID || m2.DequeueCount != 2 || m2.PopReceipt == m.PopReceipt ||
		!m2.NextVisible.Equal(start.Add(20*time.Second)) {
		t.Fatalf("second dequeue = %+v (first %+v)", m2, m)
	}
}

func TestDeleteNeedsPopReceipt(t *testing.T) {
	q, clk, _ := newQueue(t, tablequeue.Options{VisibilityTimeout: 30 * time.Second})
	ctx := context.Background()
	mustEnqueue(t, q, "job")

	a := mustDequeue(t, q) // worker A's lease expires...
	clk.Advance(31 * time.Second)
	b := mustDequeue(t, q) // ...and worker B holds the message now.

	err := q.Delete(ctx, a.ID, a.PopReceipt)
	if !errors.Is(err, tablequeue.ErrPopReceiptMismatch) || localtable.ErrorCodeOf(err) != "PopReceiptMismatch" {
		t.Fatalf("delete with A's stale receipt: %v, want PopReceiptMismatch", err)
	}
	for _, receipt := range []string{"", string(localtable.ETagAny)} {
		if err := q.Delete(ctx, b.ID, receipt); !errors.Is(err, tablequeue.ErrPopReceiptMismatch) {
			t.Fatalf("delete with receipt %q: %v, want PopReceiptMismatch", receipt, err)
		}
	}
	mustLen(t, q, 1)

	if err := q.Delete(ctx, b.ID, b.PopReceipt); err != nil {
		t.Fatalf("delete with B's receipt: %v", err)
	}
	mustLen(t, q, 0)
	err = q.Delete(ctx, b.ID, b.PopReceipt)
	if !errors.Is(err, tablequeue.ErrMessageNotFound) || localtable.ErrorCodeOf(err) != "MessageNotFound" {
		t.Fatalf("second delete: %v, want MessageNotFound", err)
	}
}

// As in the service, a receipt outlives the timeout while nobody else
// dequeues the message.
func TestReceiptValidAfterTimeout(t *testing.T) {
	q, clk, _ := newQueue(t, tablequeue.Options{})
	mustEnqueue(t, q, "slow job")
	m := mustDequeue(t, q)
	clk.Advance(time.Hour)
	if err := q.Delete(context.Background(), m.ID, m.PopReceipt); err != nil {
		t.Fatal(err)
	}
	mustLen(t, q, 0)
}

func TestPoison(t *testing.T) {
	q, clk, _ := newQueue(t, tablequeue.Options{VisibilityTimeout: time.Minute, MaxDequeueCount: 3})
	ctx := context.Background()
	bad := mustEnqueue(t, q, "bad")[0]
	for i := 1; i <= 3; i++ {
		if m := mustDequeue(t, q); m.ID != bad.ID || m.DequeueCount != i {
			t.Fatalf("dequeue %d = %+v", i, m)
		}
		clk.Advance(time.Minute)
	}
	good := mustEnqueue(t, q, "good")[0]

	// The fourth dequeue of "bad" would exceed 3: it is moved, and the same
	// call returns the next message.
	if m := mustDequeue(t, q); m.ID != good.ID {
		t.Fatalf("dequeue after poisoning = %+v, want %q", m, good.ID)
	}
	mustLen(t, q, 1)
	p := q.Poison()
	if p.Name() != "orders-poison" || p.Poison() != nil {
		t.Fatalf("poison queue %q, its poison %v", p.Name(), p.Poison())
	}
	mustLen(t, p, 1)
	pm := mustDequeue(t, p)
	if pm.ID != bad.ID || pm.Body != "bad" || !pm.InsertedAt.Equal(start) || pm.DequeueCount != 1 {
		t.Fatalf("poison message = %+v", pm)
	}
	// The poison queue never poisons.
	for range 10 {
		clk.Advance(time.Minute)
		pm = mustDequeue(t, p)
	}
	if pm.DequeueCount != 11 {
		t.Fatalf("poison message count = %d, want 11", pm.DequeueCount)
	}
	if err := p.Delete(ctx, pm.ID, pm.PopReceipt); err != nil {
		t.Fatal(err)
	}
	mustLen(t, p, 0)
	mustLen(t, q, 1)
}

func TestDefaultsAndNoLimit(t *testing.T) {
	q, clk, _ := newQueue(t, tablequeue.Options{})
	mustEnqueue(t, q, "x")
	for i := 1; i <= tablequeue.DefaultMaxDequeueCount; i++ {
		m := mustDequeue(t, q)
		if !m.NextVisible.Equal(clk.Now().Add(tablequeue.DefaultVisibilityTimeout)) {
			t.Fatalf("NextVisible = %v, want now + %v", m.NextVisible, tablequeue.DefaultVisibilityTimeout)
		}
		clk.Advance(tablequeue.DefaultVisibilityTimeout)
	}
	mustBeEmpty(t, q)
	mustLen(t, q.Poison(), 1)

	q, clk, _ = newQueue(t, tablequeue.Options{MaxDequeueCount: -1})
	mustEnqueue(t, q, "x")
	for i := 1; i <= 20; i++ {
		if m := mustDequeue(t, q); m.DequeueCount != i {
			t.Fatalf("dequeue %d: count %d", i, m.DequeueCount)
		}
		clk.Advance(time.Hour)
	}
	mustLen(t, q.Poison(), 0)
}

// Queues sharing a table see only their own messages.
func TestQueuesShareATable(t *testing.T) {
	q, clk, tbl := newQueue(t, tablequeue.Options{})
	other, err := tablequeue.New(tbl, "orders-eu", &tablequeue.Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, q, "a", "b")
	mustEnqueue(t, other, "c")
	mustLen(t, q, 2)
	mustLen(t, other, 1)
	if m := mustDequeue(t, other); m.Body != "c" {
		t.Fatalf("other queue dequeued %q", m.Body)
	}
	mustBeEmpty(t, other)
	// A second handle on the same name is the same queue.
	same, err := tablequeue.New(tbl, "orders", &tablequeue.Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if m := mustDequeue(t, same); m.Body != "a" {
		t.Fatalf("second handle dequeued %q", m.Body)
	}
}

// Eight dequeuers racing over one queue: every message is handed out
// exactly once while none becomes visible again.
func TestConcurrentDequeue(t *testing.T) {
	const messages, workers = 300, 8
	q, _, _ := newQueue(t, tablequeue.Options{})
	ctx := context.Background()
	want := make([]string, messages)
	for i := range want {
		want[i] = fmt.Sprintf("m%03d", i)
	}
	mustEnqueue(t, q, want...)

	got := make([][]tablequeue.Message, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, ok, err := q.Dequeue(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					return
				}
				got[w] = append(got[w], m)
			}
		}()
	}
	wg.Wait()

	var bodies []string
	for _, ms := range got {
		for _, m := range ms {
			if m.DequeueCount != 1 {
				t.Errorf("%s dequeued with count %d", m.Body, m.DequeueCount)
			}
			bodies = append(bodies, m.Body)
		}
	}
	slices.Sort(bodies)
	if !slices.Equal(bodies, want) {
		t.Fatalf("dequeued %d messages (%d distinct), want each of %d once", len(bodies), len(slices.Compact(slices.Clone(bodies))), messages)
	}
	mustLen(t, q, messages)

	// Each worker deletes what it holds, concurrently.
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, m := range got[w] {
				if err := q.Delete(ctx, m.ID, m.PopReceipt); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	mustLen(t, q, 0)
}

// Dequeuers racing over messages due for the poison queue move each exactly
// once, and return none of them.
func TestConcurrentPoison(t *testing.T) {
	const messages, workers = 50, 8
	q, clk, _ := newQueue(t, tablequeue.Options{MaxDequeueCount: 1, VisibilityTimeout: time.Second})
	ctx := context.Background()
	for i := range messages {
		mustEnqueue(t, q, fmt.Sprintf("m%03d", i))
	}
	for range messages {
		mustDequeue(t, q)
	}
	clk.Advance(time.Second)

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if m, ok, err := q.Dequeue(ctx); err != nil || ok {
					t.Errorf("Dequeue = %+v, %v, %v; want nothing", m, ok, err)
				}
			}
		}()
	}
	wg.Wait()
	mustLen(t, q, 0)
	mustLen(t, q.Poison(), messages)
	ps, err := q.Poison().Peek(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ps {
		if want := fmt.Sprintf("m%03d", i); m.Body != want {
			t.Fatalf("poison message %d = %q, want %q", i, m.Body, want)
		}
	}
}

func TestNew(t *testing.T) {
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	tbl := acct.Table("Queues")
	for _, name := range []string{"abc", "a-b-c", "0rders", "q12345678901234567890123456789012345678901234567890123456789012"} {
		if _, err := tablequeue.New(tbl, name, nil); err != nil {
			t.Errorf("New(%q): %v", name, err)
		}
	}
	for _, name := range []string{"", "ab", "Orders", "-abc", "abc-", "a--b", "a_b", "a.b", "ünï",
		"q123456789012345678901234567890123456789012345678901234567890123"} {
		_, err := tablequeue.New(tbl, name, nil)
		if !errors.Is(err, tablequeue.ErrInvalidQueueName) || localtable.ErrorCodeOf(err) != "InvalidResourceName" {
			t.Errorf("New(%q): %v, want InvalidResourceName", name, err)
		}
	}
	for _, d := range []time.Duration{-time.Second, tablequeue.MaxVisibilityTimeout + 1} {
		if _, err := tablequeue.New(tbl, "abc", &tablequeue.Options{VisibilityTimeout: d}); !errors.Is(err, tablequeue.ErrOutOfRange) {
			t.Errorf("VisibilityTimeout %v: %v, want ErrOutOfRange", d, err)
		}
	}
	q, _ := tablequeue.New(tbl, "abc", nil)
	if _, err := q.Peek(context.Background(), 0); !errors.Is(err, tablequeue.ErrOutOfRange) {
		t.Errorf("Peek(0): %v, want ErrOutOfRange", err)
	}
	// The table does not exist: the table's error comes through.
	if _, err := q.Enqueue(context.Background(), "x"); !errors.Is(err, localtable.ErrTableNotFound) {
		t.Errorf("Enqueue into a missing table: %v", err)
	}
}
