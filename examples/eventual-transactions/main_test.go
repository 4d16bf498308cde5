package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/examples/internal/tablequeue"
)

// want is the program's whole output: time is simulated, so it is exact.
const want = `5 employees in Current; workers get 30s per attempt and 3 attempts per message
   state: Current [000123 000456 000789 001011 001213], Archive [], archive-requests 0, archive-requests-poison 0

1. Archive 000456: every step succeeds.
[+0s] client: enqueued {"department":"Sales","employeeId":"000456"}
[+0s] worker-1: dequeued {"department":"Sales","employeeId":"000456"} (dequeue count 1, hidden until +30s)
[+0s] worker-1: read Sales/000456 from Current
[+0s] worker-1: copied Sales/000456 to Archive (insert-or-replace)
[+0s] worker-1: deleted Sales/000456 from Current (delete-if-exists)
[+0s] worker-1: deleted the message
   state: Current [000123 000789 001011 001213], Archive [000456], archive-requests 0, archive-requests-poison 0

2. Archive 000789: the worker dies after the copy.
[+0s] client: enqueued {"department":"Sales","employeeId":"000789"}
[+0s] worker-2: dequeued {"department":"Sales","employeeId":"000789"} (dequeue count 1, hidden until +30s)
[+0s] worker-2: read Sales/000789 from Current
[+0s] worker-2: copied Sales/000789 to Archive (insert-or-replace)
[+0s] worker-2: crashed after step "copy"
   state: Current [000123 000789 001011 001213], Archive [000456 000789], archive-requests 1, archive-requests-poison 0
   a reader now finds [000789] in both tables: no isolation, until the message reappears
[+0s] worker-3: no visible message
[+30s] worker-3: dequeued {"department":"Sales","employeeId":"000789"} (dequeue count 2, hidden until +60s)
[+30s] worker-3: read Sales/000789 from Current
[+30s] worker-3: copied Sales/000789 to Archive (insert-or-replace)
[+30s] worker-3: deleted Sales/000789 from Current (delete-if-exists)
[+30s] worker-3: deleted the message
   state: Current [000123 001011 001213], Archive [000456 000789], archive-requests 0, archive-requests-poison 0

3. Archive 001011: the worker stalls after reading, past its timeout.
[+30s] client: enqueued {"department":"Sales","employeeId":"001011"}
[+30s] worker-4: dequeued {"department":"Sales","employeeId":"001011"} (dequeue count 1, hidden until +60s)
[+30s] worker-4: read Sales/001011 from Current
[+30s] worker-4: stalls for 40s
[+70s] worker-5: dequeued {"department":"Sales","employeeId":"001011"} (dequeue count 2, hidden until +100s)
[+70s] worker-5: read Sales/001011 from Current
[+70s] worker-5: copied Sales/001011 to Archive (insert-or-replace)
[+70s] worker-5: deleted Sales/001011 from Current (delete-if-exists)
[+70s] worker-5: deleted the message
[+70s] worker-4: resumes
[+70s] worker-4: copied Sales/001011 to Archive (insert-or-replace)
[+70s] worker-4: Sales/001011 is already gone from Current
[+70s] worker-4: cannot delete the message (MessageNotFound): another worker took it over
   state: Current [000123 001213], Archive [000456 000789 001011], archive-requests 0, archive-requests-poison 0

4. A message no worker can process.
[+70s] client: enqueued "archive Sales/001213 please"
[+70s] worker-3: dequeued "archive Sales/001213 please" (dequeue count 1, hidden until +100s)
[+70s] worker-3: failed: not an archive request; the message reappears at +100s
[+100s] worker-3: dequeued "archive Sales/001213 please" (dequeue count 2, hidden until +130s)
[+100s] worker-3: failed: not an archive request; the message reappears at +130s
[+130s] worker-3: dequeued "archive Sales/001213 please" (dequeue count 3, hidden until +160s)
[+130s] worker-3: failed: not an archive request; the message reappears at +160s
[+160s] worker-3: no visible message
   archive-requests-poison holds "archive Sales/001213 please": the fourth dequeue moved it there
   state: Current [000123 001213], Archive [000456 000789 001011], archive-requests 0, archive-requests-poison 1

Final check:
   000123 Ana    Jones     in Current only, data intact
   000456 Bo     Kim       in Archive only, data intact
   000789 Chen   Okafor    in Archive only, data intact
   001011 Dara   Ahmed     in Archive only, data intact
   001213 Eli    Rossi     in Current only, data intact
`

// state is what the store holds after a run: the RowKeys in each table
// and the number of messages in each queue.
type state struct {
	Current, Archive []string
	Queue, Poison    int
}

func stateOf(t *testing.T, wd *world) state {
	t.Helper()
	ctx := context.Background()
	var s state
	var err error
	if s.Current, err = ids(ctx, wd.current); err != nil {
		t.Fatal(err)
	}
	if s.Archive, err = ids(ctx, wd.archive); err != nil {
		t.Fatal(err)
	}
	if s.Queue, err = wd.queue.Len(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Poison, err = wd.queue.Poison().Len(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s state) String() string {
	return fmt.Sprintf("Current %v, Archive %v, queue %d, poison %d", s.Current, s.Archive, s.Queue, s.Poison)
}

func (s state) equal(o state) bool {
	return slices.Equal(s.Current, o.Current) && slices.Equal(s.Archive, o.Archive) && s.Queue == o.Queue && s.Poison == o.Poison
}

func mustState(t *testing.T, wd *world, want state) {
	t.Helper()
	if got := stateOf(t, wd); !got.equal(want) {
		t.Fatalf("state = %v, want %v", got, want)
	}
}

// mustArchived checks that each employee named is in Archive only, with
// its original data.
func mustArchived(t *testing.T, wd *world, ids ...string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		orig := staffByID(t, id)
		got, err := localtable.GetAs[Employee](ctx, wd.archive, "Sales", id)
		if err != nil || !same(got, orig) {
			t.Fatalf("Archive/%s = %+v, %v; want %+v", id, got, err, orig)
		}
		if _, err := wd.current.Get(ctx, "Sales", id, nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Fatalf("Current/%s: %v, want ErrEntityNotFound", id, err)
		}
	}
}

func staffByID(t *testing.T, id string) Employee {
	t.Helper()
	for _, e := range staff {
		if e.RowKey == id {
			return e
		}
	}
	t.Fatalf("no employee %s", id)
	return Employee{}
}

func newTestWorld(t *testing.T) (*world, *bytes.Buffer) {
	t.Helper()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acct.Close() })
	var out bytes.Buffer
	wd, err := newWorld(context.Background(), acct, &out)
	if err != nil {
		t.Fatal(err)
	}
	return wd, &out
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	var out bytes.Buffer
	if err := run(ctx, acct, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}

	// The store, read back independently of the program.
	wd := &world{current: acct.Table("Current"), archive: acct.Table("Archive")}
	q, err := tablequeue.New(acct.Table("Queues"), "archive-requests", nil)
	if err != nil {
		t.Fatal(err)
	}
	wd.queue = q
	mustState(t, wd, state{Current: []string{"000123", "001213"}, Archive: []string{"000456", "000789", "001011"}, Poison: 1})
	mustArchived(t, wd, "000456", "000789", "001011")
	for _, id := range []string{"000123", "001213"} {
		got, err := localtable.GetAs[Employee](ctx, wd.current, "Sales", id)
		if err != nil || !same(got, staffByID(t, id)) {
			t.Fatalf("Current/%s = %+v, %v", id, got, err)
		}
	}
	ps, err := q.Poison().Peek(ctx, 10)
	if err != nil || len(ps) != 1 || ps[0].Body != "archive Sales/001213 please" {
		t.Fatalf("poison queue = %+v, %v", ps, err)
	}
}

// crashAt returns a hook that kills the worker after step s.
func crashAt(s Step) func(Step) error {
	return func(got Step) error {
		if got == s {
			return errCrash
		}
		return nil
	}
}

// A worker killed after any step leaves a state that the next worker,
// once the message reappears, completes: the employee ends in Archive
// only, with its data, and the queue empty.
func TestCrashAfterEveryStep(t *testing.T) {
	const id = "000456"
	rest := []string{"000123", "000789", "001011", "001213"}
	all := []string{"000123", "000456", "000789", "001011", "001213"}
	// What a reader sees right after the crash.
	after := map[Step]state{
		StepDequeue:       {Current: all, Queue: 1},
		StepRead:          {Current: all, Queue: 1},
		StepCopy:          {Current: all, Archive: []string{id}, Queue: 1}, // in both tables
		StepDeleteSource:  {Current: rest, Archive: []string{id}, Queue: 1},
		StepDeleteMessage: {Current: rest, Archive: []string{id}},
	}
	for s := StepDequeue; s <= StepDeleteMessage; s++ {
		t.Run(s.String(), func(t *testing.T) {
			ctx := context.Background()
			wd, out := newTestWorld(t)
			if err := wd.requestArchive(ctx, "Sales", id); err != nil {
				t.Fatal(err)
			}
			a := &worker{world: wd, name: "a", after: crashAt(s)}
			if ok, err := a.process(ctx); !ok || !errors.Is(err, errCrash) {
				t.Fatalf("worker a: %v, %v; want a crash", ok, err)
			}
			mustState(t, wd, after[s])

			// The message stays hidden until its timeout...
			b := &worker{world: wd, name: "b"}
			if ok, err := b.process(ctx); ok || err != nil {
				t.Fatalf("worker b before the timeout: %v, %v; want no message", ok, err)
			}
			// ...then the next worker completes the move.
			wd.clk.Advance(visibilityTimeout)
			ok, err := b.process(ctx)
			if err != nil || ok != (s != StepDeleteMessage) {
				t.Fatalf("worker b after the timeout: %v, %v\n%s", ok, err, out)
			}
			mustState(t, wd, state{Current: rest, Archive: []string{id}})
			mustArchived(t, wd, id)
			if s != StepDeleteMessage && !strings.Contains(out.String(), "b: dequeued {\"department\":\"Sales\",\"employeeId\":\"000456\"} (dequeue count 2") {
				t.Fatalf("worker b did not redeliver the message:\n%s", out)
			}
		})
	}
}

// A worker that stalls after any step, past its timeout, while another
// worker does the whole move, finishes harmlessly: it cannot delete the
// message, and the result is the same.
func TestStallAfterEveryStep(t *testing.T) {
	const id = "000789"
	for s := StepDequeue; s < StepDeleteMessage; s++ {
		t.Run(s.String(), func(t *testing.T) {
			ctx := context.Background()
			wd, out := newTestWorld(t)
			if err := wd.requestArchive(ctx, "Sales", id); err != nil {
				t.Fatal(err)
			}
			b := &worker{world: wd, name: "b"}
			a := &worker{world: wd, name: "a", after: func(got Step) error {
				if got != s {
					return nil
				}
				wd.clk.Advance(visibilityTimeout + time.Second)
				if ok, err := b.process(ctx); !ok || err != nil {
					t.Errorf("worker b: %v, %v", ok, err)
				}
				return nil
			}}
			if ok, err := a.process(ctx); !ok || err != nil {
				t.Fatalf("worker a: %v, %v\n%s", ok, err, out)
			}
			if !strings.Contains(out.String(), "a: cannot delete the message (MessageNotFound)") {
				t.Fatalf("worker a deleted a message it no longer held:\n%s", out)
			}
			mustState(t, wd, state{Current: []string{"000123", "000456", "001011", "001213"}, Archive: []string{id}})
			mustArchived(t, wd, id)
		})
	}
}

// A stale worker whose message another worker holds (not yet deleted)
// gets PopReceiptMismatch, and the holder then deletes it.
func TestStaleReceipt(t *testing.T) {
	ctx := context.Background()
	wd, out := newTestWorld(t)
	if err := wd.requestArchive(ctx, "Sales", "001011"); err != nil {
		t.Fatal(err)
	}
	var bErr error
	b := &worker{world: wd, name: "b", after: func(s Step) error {
		if s != StepDeleteSource {
			return nil
		}
		// b pauses before deleting the message; a resumes meanwhile.
		return errPause
	}}
	a := &worker{world: wd, name: "a", after: func(s Step) error {
		if s != StepCopy {
			return nil
		}
		wd.clk.Advance(visibilityTimeout)
		_, bErr = b.process(ctx)
		return nil
	}}
	if _, err := a.process(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(bErr, errPause) {
		t.Fatalf("worker b: %v", bErr)
	}
	if !strings.Contains(out.String(), "a: cannot delete the message (PopReceiptMismatch)") {
		t.Fatalf("worker a:\n%s", out)
	}
	mustState(t, wd, state{Current: []string{"000123", "000456", "000789", "001213"}, Archive: []string{"001011"}, Queue: 1})
	// b's message is still its own to delete.
	wd.clk.Advance(visibilityTimeout)
	c := &worker{world: wd, name: "c"}
	if ok, err := c.process(ctx); !ok || err != nil {
		t.Fatal(ok, err)
	}
	mustState(t, wd, state{Current: []string{"000123", "000456", "000789", "001213"}, Archive: []string{"001011"}})
}

var errPause = errors.New("paused")

// A message whose processing fails every time is tried maxDequeueCount
// times, then moved to the poison queue; the employee is untouched.
func TestPoisonMessage(t *testing.T) {
	ctx := context.Background()
	wd, out := newTestWorld(t)
	if err := wd.requestArchive(ctx, "Sales", "000123"); err != nil {
		t.Fatal(err)
	}
	unavailable := errors.New("archive unavailable")
	w := &worker{world: wd, name: "w", after: func(s Step) error {
		if s == StepRead {
			return unavailable
		}
		return nil
	}}
	for i := 1; i <= maxDequeueCount; i++ {
		if ok, err := w.process(ctx); !ok || !errors.Is(err, unavailable) {
			t.Fatalf("attempt %d: %v, %v", i, ok, err)
		}
		wd.clk.Advance(visibilityTimeout)
	}
	if ok, err := w.process(ctx); ok || err != nil {
		t.Fatalf("attempt %d: %v, %v; want no message", maxDequeueCount+1, ok, err)
	}
	for i := 1; i <= maxDequeueCount; i++ {
		if !strings.Contains(out.String(), fmt.Sprintf("(dequeue count %d,", i)) {
			t.Fatalf("no attempt with count %d:\n%s", i, out)
		}
	}
	all := []string{"000123", "000456", "000789", "001011", "001213"}
	mustState(t, wd, state{Current: all, Poison: 1})
	ps, err := wd.queue.Poison().Peek(ctx, 1)
	if err != nil || len(ps) != 1 || ps[0].Body != `{"department":"Sales","employeeId":"000123"}` {
		t.Fatalf("poison = %+v, %v", ps, err)
	}
}

// An employee changed in Current after the copy is not deleted: the
// attempt fails, and the retry archives the new version.
func TestChangedAfterCopy(t *testing.T) {
	ctx := context.Background()
	wd, out := newTestWorld(t)
	if err := wd.requestArchive(ctx, "Sales", "001213"); err != nil {
		t.Fatal(err)
	}
	a := &worker{world: wd, name: "a", after: func(s Step) error {
		if s == StepCopy {
			e := localtable.Entity{PartitionKey: "Sales", RowKey: "001213"}
			e.Set("Age", localtable.Int32Value(39))
			if _, err := wd.current.Update(ctx, e, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge}); err != nil {
				t.Error(err)
			}
		}
		return nil
	}}
	if ok, err := a.process(ctx); !ok || err == nil {
		t.Fatalf("worker a: %v, %v; want a failure\n%s", ok, err, out)
	}
	if !strings.Contains(out.String(), "changed in Current after it was copied (UpdateConditionNotSatisfied)") {
		t.Fatalf("output:\n%s", out)
	}
	wd.clk.Advance(visibilityTimeout)
	b := &worker{world: wd, name: "b"}
	if ok, err := b.process(ctx); !ok || err != nil {
		t.Fatal(ok, err)
	}
	got, err := localtable.GetAs[Employee](ctx, wd.archive, "Sales", "001213")
	if err != nil || got.Age != 39 || got.LastName != "Rossi" {
		t.Fatalf("archived = %+v, %v; want the new version", got, err)
	}
	mustState(t, wd, state{Current: []string{"000123", "000456", "000789", "001011"}, Archive: []string{"001213"}})
}
