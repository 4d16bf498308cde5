// Command eventual-transactions shows the eventually consistent
// transactions pattern: an employee is archived (moved from the Current
// table to the Archive table) by a worker that takes the request from a
// queue, so that the move completes even when workers die half-way.
//
// The problem: an entity group transaction covers one partition of one
// table. Moving an entity between two tables takes two writes that no
// transaction can join, and a worker that fails between them would leave
// the employee in both tables, or in neither.
//
// The pattern: the client puts an archive request on a queue. A worker
// dequeues it, which hides the message without deleting it; reads the
// employee from Current; copies it to Archive with insert-or-replace;
// deletes it from Current with delete-if-exists; and only then deletes the
// message. Every step can be repeated with the same result, so when a
// worker dies anywhere, the message becomes visible again after its
// visibility timeout and the next worker redoes the steps from the start.
// A message that fails every time is moved to the poison queue after
// MaxDequeueCount tries, for a person to look at. The queue here is package
// tablequeue, a queue stored in a table with Azure queue semantics.
//
// One refinement over a plain delete-if-exists: the delete is conditioned
// on the ETag the worker read, so an employee changed in Current after it
// was copied is not deleted unarchived; the attempt fails, and the retry
// copies the newer version.
//
// The trade-off the design guide names: there is no isolation. Between the
// copy and the delete a reader sees the employee in both tables, and after
// a crash it stays so until the message reappears (the visibility timeout).
// The data is consistent only eventually. The copy and the delete must
// be idempotent for this to work; if isolation matters, redesign the tables
// so that one entity group transaction can do the job.
//
// What the program proves: a worker that crashes after copying leaves the
// employee in both tables until the message reappears and another worker
// finishes the move; a worker whose lease expired mid-way finishes
// harmlessly, and its pop receipt no longer deletes the message; a message
// no worker can process ends in the poison queue after 3 tries; and at the
// end every employee is in exactly one table with its data intact. Time is
// simulated: the program never sleeps.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/examples/internal/tablequeue"
)

func main() {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer acct.Close()
	if err := run(ctx, acct, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// Employee is the entity being archived: PartitionKey the department,
// RowKey the zero-padded employee ID.
type Employee struct {
	PartitionKey string
	RowKey       string
	FirstName    string
	LastName     string
	Email        string
	Age          int32
	Hired        time.Time
}

// staff is the Current table's initial content.
var staff = []Employee{
	{"Sales", pad(123, 6), "Ana", "Jones", "jonesa@contoso.com", 34, date(2015, 3, 2)},
	{"Sales", pad(456, 6), "Bo", "Kim", "kimb@contoso.com", 41, date(2009, 11, 16)},
	{"Sales", pad(789, 6), "Chen", "Okafor", "okaforc@contoso.com", 29, date(2019, 6, 3)},
	{"Sales", pad(1011, 6), "Dara", "Ahmed", "ahmedd@contoso.com", 52, date(2001, 1, 8)},
	{"Sales", pad(1213, 6), "Eli", "Rossi", "rossie@contoso.com", 38, date(2012, 9, 24)},
}

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// pad formats n zero-padded to width digits, so that IDs sort as numbers.
func pad(n, width int) string {
	s := strconv.Itoa(n)
	return strings.Repeat("0", max(0, width-len(s))) + s
}

// archiveRequest is the queue message's body.
type archiveRequest struct {
	Department string `json:"department"`
	EmployeeID string `json:"employeeId"`
}

// Queue settings: a worker has 30 seconds per attempt, and a message gets
// three attempts.
const (
	visibilityTimeout = 30 * time.Second
	maxDequeueCount   = 3
)

// world is the store the client and the workers share, and the simulated
// clock.
type world struct {
	clk              *tablequeue.ManualClock
	start            time.Time
	current, archive *localtable.Table
	queue            *tablequeue.Queue
	w                io.Writer
}

// newWorld creates the tables and the queue in acct and fills Current.
func newWorld(ctx context.Context, acct *localtable.Account, w io.Writer) (*world, error) {
	start := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	wd := &world{clk: tablequeue.NewManualClock(start), start: start, w: w}
	var err error
	if wd.current, err = acct.CreateTable(ctx, "Current"); err != nil {
		return nil, err
	}
	if wd.archive, err = acct.CreateTable(ctx, "Archive"); err != nil {
		return nil, err
	}
	queues, err := acct.CreateTable(ctx, "Queues")
	if err != nil {
		return nil, err
	}
	wd.queue, err = tablequeue.New(queues, "archive-requests", &tablequeue.Options{
		VisibilityTimeout: visibilityTimeout,
		MaxDequeueCount:   maxDequeueCount,
		Clock:             wd.clk.Now,
	})
	if err != nil {
		return nil, err
	}
	for _, emp := range staff {
		e, err := localtable.Marshal(emp)
		if err != nil {
			return nil, err
		}
		if _, err := wd.current.Insert(ctx, e); err != nil {
			return nil, err
		}
	}
	return wd, nil
}

// at formats t as the simulated time since the start.
func (wd *world) at(t time.Time) string { return fmt.Sprintf("+%ds", int(t.Sub(wd.start)/time.Second)) }

func (wd *world) logf(who, format string, args ...any) {
	fmt.Fprintf(wd.w, "[%s] %s: %s\n", wd.at(wd.clk.Now()), who, fmt.Sprintf(format, args...))
}

// requestArchive is the client's side: one queue message.
func (wd *world) requestArchive(ctx context.Context, dept, id string) error {
	body, err := json.Marshal(archiveRequest{Department: dept, EmployeeID: id})
	if err != nil {
		return err
	}
	if _, err := wd.queue.Enqueue(ctx, string(body)); err != nil {
		return err
	}
	wd.logf("client", "enqueued %s", body)
	return nil
}

// Step is a step of the worker. The design guide's sequence numbers them
// 2 to 6, after the client's enqueue (1).
type Step int

// The worker's steps, in order.
const (
	StepDequeue       Step = iota // 2: take the message: hidden, not deleted
	StepRead                      // 3: read the employee from Current
	StepCopy                      // 4: insert-or-replace it into Archive
	StepDeleteSource              // 5: delete it from Current, if it exists
	StepDeleteMessage             // 6: delete the message
)

var stepNames = [...]string{"dequeue", "read", "copy", "delete source", "delete message"}

func (s Step) String() string { return stepNames[s] }

// errCrash is what a test's hook returns to kill a worker after a step:
// the worker stops there and does nothing more, as a dead process would.
var errCrash = errors.New("crashed")

// worker archives employees, one message at a time.
type worker struct {
	*world
	name string
	// after, if set, runs after each step; an error stops the worker at
	// once (a crash). Tests use it to kill or pause a worker between steps.
	after func(Step) error
}

func (wk *worker) logf(format string, args ...any) { wk.world.logf(wk.name, format, args...) }

func (wk *worker) step(s Step) error {
	if wk.after == nil {
		return nil
	}
	if err := wk.after(s); err != nil {
		wk.logf("%v after step %q", err, s.String())
		return err
	}
	return nil
}

// process takes one message and archives the employee it names. It
// returns false if no message was visible. An error leaves the message
// hidden; it reappears when its visibility timeout ends.
func (wk *worker) process(ctx context.Context) (bool, error) {
	m, ok, err := wk.queue.Dequeue(ctx)
	if err != nil {
		return false, err
	}
	if !ok {
		wk.logf("no visible message")
		return false, nil
	}
	body := m.Body
	if !json.Valid([]byte(body)) {
		body = strconv.Quote(body)
	}
	wk.logf("dequeued %s (dequeue count %d, hidden until %s)", body, m.DequeueCount, wk.at(m.NextVisible))
	if err := wk.step(StepDequeue); err != nil {
		return true, err
	}
	if err := wk.archiveEmployee(ctx, m); err != nil {
		if !errors.Is(err, errCrash) {
			wk.logf("failed: %v; the message reappears at %s", err, wk.at(m.NextVisible))
		}
		return true, err
	}
	return true, nil
}

func (wk *worker) archiveEmployee(ctx context.Context, m tablequeue.Message) error {
	var req archiveRequest
	if err := json.Unmarshal([]byte(m.Body), &req); err != nil || req.Department == "" || req.EmployeeID == "" {
		return fmt.Errorf("not an archive request")
	}
	pk, rk := req.Department, req.EmployeeID

	e, err := wk.current.Get(ctx, pk, rk, nil)
	found := err == nil
	switch {
	case errors.Is(err, localtable.ErrEntityNotFound):
		wk.logf("%s/%s is not in Current: an earlier attempt moved it (or it never existed)", pk, rk)
	case err != nil:
		return err
	default:
		wk.logf("read %s/%s from Current", pk, rk)
	}
	if err := wk.step(StepRead); err != nil {
		return err
	}

	if found {
		// Insert-or-replace: a repeated copy writes the same entity again.
		dup := localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: e.Properties}
		if _, err := wk.archive.Upsert(ctx, dup, nil); err != nil {
			return err
		}
		wk.logf("copied %s/%s to Archive (insert-or-replace)", pk, rk)
		if err := wk.step(StepCopy); err != nil {
			return err
		}

		// Delete-if-exists, and only the version that was copied.
		err := wk.current.Delete(ctx, pk, rk, &localtable.DeleteOptions{IfMatch: e.ETag})
		switch {
		case errors.Is(err, localtable.ErrEntityNotFound):
			wk.logf("%s/%s is already gone from Current", pk, rk)
		case errors.Is(err, localtable.ErrConditionNotMet):
			return fmt.Errorf("%s/%s changed in Current after it was copied (%s)", pk, rk, localtable.ErrorCodeOf(err))
		case err != nil:
			return err
		default:
			wk.logf("deleted %s/%s from Current (delete-if-exists)", pk, rk)
		}
		if err := wk.step(StepDeleteSource); err != nil {
			return err
		}
	}

	err = wk.queue.Delete(ctx, m.ID, m.PopReceipt)
	switch {
	case errors.Is(err, tablequeue.ErrPopReceiptMismatch), errors.Is(err, tablequeue.ErrMessageNotFound):
		// Our lease ran out and another worker took the message. Our
		// steps were idempotent, so there is nothing to undo.
		wk.logf("cannot delete the message (%s): another worker took it over", localtable.ErrorCodeOf(err))
		return nil
	case err != nil:
		return err
	}
	wk.logf("deleted the message")
	return wk.step(StepDeleteMessage)
}

// ids lists the RowKeys in tbl.
func ids(ctx context.Context, tbl *localtable.Table) ([]string, error) {
	var out []string
	for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Select: []string{"LastName"}}) {
		if err != nil {
			return nil, err
		}
		out = append(out, e.RowKey)
	}
	return out, nil
}

// printState prints both tables and both queues.
func (wd *world) printState(ctx context.Context) error {
	cur, err := ids(ctx, wd.current)
	if err != nil {
		return err
	}
	arc, err := ids(ctx, wd.archive)
	if err != nil {
		return err
	}
	n, err := wd.queue.Len(ctx)
	if err != nil {
		return err
	}
	p, err := wd.queue.Poison().Len(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(wd.w, "   state: Current %v, Archive %v, %s %d, %s %d\n", cur, arc, wd.queue.Name(), n, wd.queue.Poison().Name(), p)
	return nil
}

// inBoth lists the employees a reader finds in both tables.
func (wd *world) inBoth(ctx context.Context) ([]string, error) {
	cur, err := ids(ctx, wd.current)
	if err != nil {
		return nil, err
	}
	var both []string
	for _, id := range cur {
		if _, err := wd.archive.Get(ctx, "Sales", id, nil); err == nil {
			both = append(both, id)
		} else if !errors.Is(err, localtable.ErrEntityNotFound) {
			return nil, err
		}
	}
	return both, nil
}

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	wd, err := newWorld(ctx, acct, w)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d employees in Current; workers get %v per attempt and %d attempts per message\n",
		len(staff), visibilityTimeout, maxDequeueCount)
	if err := wd.printState(ctx); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n1. Archive 000456: every step succeeds.")
	if err := wd.requestArchive(ctx, "Sales", pad(456, 6)); err != nil {
		return err
	}
	w1 := &worker{world: wd, name: "worker-1"}
	if _, err := w1.process(ctx); err != nil {
		return err
	}
	if err := wd.printState(ctx); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n2. Archive 000789: the worker dies after the copy.")
	if err := wd.requestArchive(ctx, "Sales", pad(789, 6)); err != nil {
		return err
	}
	w2 := &worker{world: wd, name: "worker-2", after: func(s Step) error {
		if s == StepCopy {
			return errCrash
		}
		return nil
	}}
	if _, err := w2.process(ctx); !errors.Is(err, errCrash) {
		return fmt.Errorf("worker-2 did not crash: %v", err)
	}
	if err := wd.printState(ctx); err != nil {
		return err
	}
	both, err := wd.inBoth(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   a reader now finds %v in both tables: no isolation, until the message reappears\n", both)
	w3 := &worker{world: wd, name: "worker-3"}
	if _, err := w3.process(ctx); err != nil {
		return err
	}
	wd.clk.Advance(visibilityTimeout)
	if _, err := w3.process(ctx); err != nil {
		return err
	}
	if err := wd.printState(ctx); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n3. Archive 001011: the worker stalls after reading, past its timeout.")
	if err := wd.requestArchive(ctx, "Sales", pad(1011, 6)); err != nil {
		return err
	}
	w5 := &worker{world: wd, name: "worker-5"}
	w4 := &worker{world: wd, name: "worker-4"}
	w4.after = func(s Step) error {
		if s != StepRead {
			return nil
		}
		wd.logf("worker-4", "stalls for 40s")
		wd.clk.Advance(40 * time.Second)
		if _, err := w5.process(ctx); err != nil {
			return err
		}
		wd.logf("worker-4", "resumes")
		return nil
	}
	if _, err := w4.process(ctx); err != nil {
		return err
	}
	if err := wd.printState(ctx); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n4. A message no worker can process.")
	if _, err := wd.queue.Enqueue(ctx, "archive Sales/001213 please"); err != nil {
		return err
	}
	wd.logf("client", "enqueued %q", "archive Sales/001213 please")
	for {
		ok, err := w3.process(ctx)
		if !ok {
			break
		}
		if err == nil {
			return errors.New("the bad message was processed")
		}
		wd.clk.Advance(visibilityTimeout)
	}
	poisoned, err := wd.queue.Poison().Peek(ctx, 10)
	if err != nil {
		return err
	}
	for _, m := range poisoned {
		fmt.Fprintf(w, "   %s holds %q: the fourth dequeue moved it there\n", wd.queue.Poison().Name(), m.Body)
	}
	if err := wd.printState(ctx); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nFinal check:")
	return wd.check(ctx, w)
}

// same reports whether two employees hold the same data.
func same(a, b Employee) bool {
	hired := a.Hired.Equal(b.Hired)
	a.Hired, b.Hired = time.Time{}, time.Time{}
	return hired && a == b
}

// check prints, for each employee, the one table it is in and whether its
// data equals the original, and fails if one is in both tables or neither.
func (wd *world) check(ctx context.Context, w io.Writer) error {
	for _, want := range staff {
		var where []string
		intact := true
		for _, tbl := range []*localtable.Table{wd.current, wd.archive} {
			got, err := localtable.GetAs[Employee](ctx, tbl, want.PartitionKey, want.RowKey)
			if errors.Is(err, localtable.ErrEntityNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			where = append(where, tbl.Name())
			intact = intact && same(got, want)
		}
		if len(where) != 1 || !intact {
			return fmt.Errorf("employee %s: in %v, data intact %v", want.RowKey, where, intact)
		}
		fmt.Fprintf(w, "   %s %-6s %-9s in %s only, data intact\n", want.RowKey, want.FirstName, want.LastName, where[0])
	}
	return nil
}
