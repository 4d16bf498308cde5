package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/examples/internal/tablequeue"
	"github.com/localtable/localtable/filter"
)

// want is the program's whole output: the data and the clock are fixed.
const want = `Hired 500 employees into partition empid_Sales; 500 index updates wait in index-updates.
The worker applied 500 updates: partition email_Sales holds the index.

Find ahmedd223@contoso.com through the index, a point query:
  1 key range:
    [KeyAt('email_Sales', 'ahmedd223@contoso.com'), KeyAfter('email_Sales', 'ahmedd223@contoso.com'))
  residual: none
  scanned   1, returned 1: 000223 Dara Ahmed (version 1)
Find it without the index, a partition scan:
  1 key range:
    [PartitionStart('empid_Sales'), PartitionEnd('empid_Sales'))
  residual: Email eq 'ahmedd223@contoso.com'
  scanned 500, returned 1: 000223 Dara Ahmed

000223 changes email to dara.ahmed@contoso.com (version 2); the index update is queued.
Before the worker runs, the index is stale:
  index lookup dara.ahmed@contoso.com:           scanned   0, returned 0: not found
  index lookup ahmedd223@contoso.com:            scanned   1, returned 1: 000223 Dara Ahmed (version 1), STALE: the employee's email is now dara.ahmed@contoso.com
  partition scan dara.ahmed@contoso.com:         scanned 500, returned 1: 000223 Dara Ahmed
  [worker] wrote email_Sales/dara.ahmed@contoso.com -> 000223 (version 2)
  [worker] deleted email_Sales/ahmedd223@contoso.com
After the worker:
  index lookup dara.ahmed@contoso.com:           scanned   1, returned 1: 000223 Dara Ahmed (version 2)
  index lookup ahmedd223@contoso.com:            scanned   0, returned 0: not found
  partition scan dara.ahmed@contoso.com:         scanned 500, returned 1: 000223 Dara Ahmed

The same update delivered a second time (queues deliver at least once) changes nothing:
  [worker] email_Sales/dara.ahmed@contoso.com is up to date (version 2)
  [worker] email_Sales/ahmedd223@contoso.com is already gone

000321 rossib321@contoso.com leaves; the worker removes the index entry:
  [worker] deleted email_Sales/rossib321@contoso.com
  index lookup rossib321@contoso.com:            scanned   0, returned 0: not found

Index consistent: 499 employees, 499 index entries, each matching its employee's email and version; 0 messages queued.
`

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

	// The final state, read back independently of the program: every
	// employee but 000321, each with exactly its own entry.
	tbl := acct.Table("Employees")
	emps := partition[Employee](t, tbl, "empid_Sales")
	entries := partition[EmailEntry](t, tbl, "email_Sales")
	if len(emps) != employees-1 || len(entries) != employees-1 {
		t.Fatalf("%d employees, %d entries; want %d of each", len(emps), len(entries), employees-1)
	}
	byEmail := map[string]EmailEntry{}
	for _, ix := range entries {
		byEmail[ix.RowKey] = ix
	}
	for _, emp := range emps {
		want := newEmployee(atoi(t, emp.RowKey))
		wantVersion := int64(1)
		if emp.RowKey == "000223" {
			want.Email, wantVersion = "dara.ahmed@contoso.com", 2
		}
		if emp.RowKey == "000321" || emp.Email != want.Email || emp.Version != wantVersion {
			t.Fatalf("employee %+v; want email %s, version %d", emp, want.Email, wantVersion)
		}
		ix, ok := byEmail[emp.Email]
		if !ok || ix != (EmailEntry{PartitionKey: "email_Sales", RowKey: emp.Email, EmployeeID: emp.RowKey,
			FirstName: want.FirstName, LastName: want.LastName, Version: wantVersion}) {
			t.Fatalf("entry for %s = %+v, %v", emp.Email, ix, ok)
		}
	}
	q, err := tablequeue.New(acct.Table("Queues"), "index-updates", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustLen(t, q, 0)
	mustLen(t, q.Poison(), 0)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	if _, err := fmt.Sscan(strings.TrimLeft(s, "0"), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// partition reads a whole partition into structs.
func partition[T any](t *testing.T, tbl *localtable.Table, pk string) []T {
	t.Helper()
	var out []T
	for e, err := range tbl.QueryAll(context.Background(), &localtable.QueryOptions{Filter: filter.PartitionKey().Eq(pk)}) {
		if err != nil {
			t.Fatal(err)
		}
		var v T
		if err := localtable.Unmarshal(e, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func mustLen(t *testing.T, q *tablequeue.Queue, want int) {
	t.Helper()
	if n, err := q.Len(context.Background()); err != nil || n != want {
		t.Fatalf("%s: %d messages, %v; want %d", q.Name(), n, err, want)
	}
}

// small is a store with 20 employees, indexed.
func small(t *testing.T) *store { return smallWith(t, 0) }

// smallWith is small with the queue's MaxDequeueCount set.
func smallWith(t *testing.T, maxDequeueCount int) *store {
	t.Helper()
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acct.Close() })
	st, err := openStore(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	if maxDequeueCount != 0 {
		st.queue, err = tablequeue.New(acct.Table("Queues"), "index-updates", &tablequeue.Options{
			VisibilityTimeout: visibilityTimeout, MaxDequeueCount: maxDequeueCount, Clock: st.clk.Now})
		if err != nil {
			t.Fatal(err)
		}
	}
	for id := 1; id <= 20; id++ {
		if err := st.hire(ctx, newEmployee(id)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := (&worker{store: st, name: "bulk", log: io.Discard}).drain(ctx); err != nil || n != 20 {
		t.Fatalf("drain: %d, %v", n, err)
	}
	return st
}

// mustConsistent checks the index against the employees and that the
// queue is empty.
func mustConsistent(t *testing.T, st *store, log fmt.Stringer) {
	t.Helper()
	if err := st.check(context.Background(), io.Discard); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	mustLen(t, st.queue, 0)
}

// entry reads the index entry for email; ok is false if there is none.
func entry(t *testing.T, st *store, email string) (EmailEntry, bool) {
	t.Helper()
	ix, err := localtable.GetAs[EmailEntry](context.Background(), st.tbl, "email_Sales", email)
	if errors.Is(err, localtable.ErrEntityNotFound) {
		return ix, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return ix, true
}

var errCrash = errors.New("crashed")

// A worker killed after any step leaves the index stale until the message
// reappears; the next worker then makes it consistent.
func TestCrashAfterEveryStep(t *testing.T) {
	for s := StepDequeue; s <= StepDeleteMessage; s++ {
		t.Run(s.String(), func(t *testing.T) {
			ctx := context.Background()
			st := small(t)
			old := newEmployee(7).Email
			if _, err := st.update(ctx, "000007", func(e *Employee) { e.Email = "bo.new@contoso.com" }); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			a := &worker{store: st, name: "a", log: &log, after: func(got Step) error {
				if got == s {
					return errCrash
				}
				return nil
			}}
			if ok, err := a.process(ctx); !ok || !errors.Is(err, errCrash) {
				t.Fatalf("worker a: %v, %v", ok, err)
			}
			_, hasNew := entry(t, st, "bo.new@contoso.com")
			_, hasOld := entry(t, st, old)
			if wantNew, wantOld := s >= StepWriteEntry, s < StepDropOld; hasNew != wantNew || hasOld != wantOld {
				t.Fatalf("after the crash: new entry %v, old entry %v; want %v, %v", hasNew, hasOld, wantNew, wantOld)
			}
			b := &worker{store: st, name: "b", log: &log}
			if n, err := b.drain(ctx); err != nil || n != 0 {
				t.Fatalf("worker b before the timeout: %d, %v", n, err)
			}
			st.clk.Advance(visibilityTimeout)
			n, err := b.drain(ctx)
			if wantN := map[bool]int{true: 0, false: 1}[s == StepDeleteMessage]; err != nil || n != wantN {
				t.Fatalf("worker b: %d, %v; want %d", n, err, wantN)
			}
			mustConsistent(t, st, &log)
			if ix, ok := entry(t, st, "bo.new@contoso.com"); !ok || ix.EmployeeID != "000007" || ix.Version != 2 {
				t.Fatalf("new entry = %+v, %v", ix, ok)
			}
			if _, ok := entry(t, st, old); ok {
				t.Fatal("the old entry survived")
			}
		})
	}
}

// pauseAfter returns a hook that runs meanwhile once, after step s.
func pauseAfter(s Step, meanwhile func()) func(Step) error {
	done := false
	return func(got Step) error {
		if got == s && !done {
			done = true
			meanwhile()
		}
		return nil
	}
}

// A worker that read the employee before a second email change writes an
// entry for an email the employee no longer has; it notices and removes
// it, where nothing else would.
func TestLateWorkerUndoesStaleEntry(t *testing.T) {
	ctx := context.Background()
	st := small(t)
	orig := newEmployee(5).Email
	if _, err := st.update(ctx, "000005", func(e *Employee) { e.Email = "b@contoso.com" }); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	b := &worker{store: st, name: "b", log: &log}
	a := &worker{store: st, name: "a", log: &log, after: pauseAfter(StepRead, func() {
		if _, err := st.update(ctx, "000005", func(e *Employee) { e.Email = "c@contoso.com" }); err != nil {
			t.Fatal(err)
		}
		if n, err := b.drain(ctx); err != nil || n != 1 {
			t.Fatalf("worker b: %d, %v", n, err)
		}
	})}
	if ok, err := a.process(ctx); !ok || err != nil {
		t.Fatalf("worker a: %v, %v\n%s", ok, err, &log)
	}
	if !strings.Contains(log.String(), "[a] 000005 changed meanwhile: removed the stale email_Sales/b@contoso.com again") {
		t.Fatalf("log:\n%s", &log)
	}
	mustConsistent(t, st, &log)
	for email, want := range map[string]bool{orig: false, "b@contoso.com": false, "c@contoso.com": true} {
		if _, ok := entry(t, st, email); ok != want {
			t.Fatalf("entry %s exists: %v, want %v\n%s", email, ok, want, &log)
		}
	}
}

// A worker holding an older version does not overwrite an entry written
// from a newer one.
func TestVersionGuard(t *testing.T) {
	ctx := context.Background()
	st := small(t)
	if _, err := st.update(ctx, "000009", func(e *Employee) { e.Email = "j@contoso.com" }); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	b := &worker{store: st, name: "b", log: &log}
	a := &worker{store: st, name: "a", log: &log, after: pauseAfter(StepRead, func() {
		// A name change (version 3) is indexed while a holds version 2.
		if _, err := st.update(ctx, "000009", func(e *Employee) { e.LastName = "Okafor-Smith" }); err != nil {
			t.Fatal(err)
		}
		if n, err := b.drain(ctx); err != nil || n != 1 {
			t.Fatalf("worker b: %d, %v", n, err)
		}
	})}
	if ok, err := a.process(ctx); !ok || err != nil {
		t.Fatalf("worker a: %v, %v\n%s", ok, err, &log)
	}
	if !strings.Contains(log.String(), "[a] email_Sales/j@contoso.com is up to date (version 3)") {
		t.Fatalf("log:\n%s", &log)
	}
	mustConsistent(t, st, &log)
	if ix, ok := entry(t, st, "j@contoso.com"); !ok || ix.LastName != "Okafor-Smith" || ix.Version != 3 {
		t.Fatalf("entry = %+v, %v", ix, ok)
	}
}

// An address one employee gives up and another takes ends up pointing to
// the new owner, whichever update is applied first.
func TestEmailReassigned(t *testing.T) {
	ctx := context.Background()
	st := small(t)
	shared := newEmployee(1).Email
	if _, err := st.update(ctx, "000001", func(e *Employee) { e.Email = "first@contoso.com" }); err != nil {
		t.Fatal(err)
	}
	if _, err := st.update(ctx, "000002", func(e *Employee) { e.Email = shared }); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	b := &worker{store: st, name: "b", log: &log}
	// a takes 000001's update first and stalls; b applies 000002's.
	a := &worker{store: st, name: "a", log: &log, after: pauseAfter(StepDequeue, func() {
		if n, err := b.drain(ctx); err != nil || n != 1 {
			t.Fatalf("worker b: %d, %v", n, err)
		}
	})}
	if ok, err := a.process(ctx); !ok || err != nil {
		t.Fatalf("worker a: %v, %v\n%s", ok, err, &log)
	}
	if !strings.Contains(log.String(), "[a] email_Sales/"+shared+" belongs to 000002 now: left alone") {
		t.Fatalf("log:\n%s", &log)
	}
	mustConsistent(t, st, &log)
	if ix, ok := entry(t, st, shared); !ok || ix.EmployeeID != "000002" {
		t.Fatalf("entry %s = %+v, %v", shared, ix, ok)
	}
}

// Workers racing each other and a client that keeps changing emails (and
// names) converge: once the queue is drained, the index is exact.
func TestConcurrentWorkersConverge(t *testing.T) {
	ctx := context.Background()
	st := smallWith(t, -1) // conflicts are retried: never poison here

	const workers, changes = 4, 120
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := &worker{store: st, name: fmt.Sprint("w", i), log: io.Discard}
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := wk.process(ctx); err != nil && !errors.Is(err, errConflict) {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range changes {
		id := pad(1+i%4, 6) // four employees, many changes each
		_, err := st.update(ctx, id, func(e *Employee) {
			e.Email = fmt.Sprintf("%s.%d@contoso.com", id, i%3) // addresses recur
			e.LastName = fmt.Sprint("Name", i)
		})
		if err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			st.clk.Advance(visibilityTimeout) // let failed attempts reappear
		}
	}
	close(done)
	wg.Wait()

	wk := &worker{store: st, name: "final", log: io.Discard}
	for range 50 {
		st.clk.Advance(visibilityTimeout)
		if _, err := wk.drain(ctx); err != nil && !errors.Is(err, errConflict) {
			t.Fatal(err)
		}
		if n, _ := st.queue.Len(ctx); n == 0 {
			break
		}
	}
	mustConsistent(t, st, &bytes.Buffer{})
}
