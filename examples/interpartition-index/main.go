// Command interpartition-index shows the inter-partition secondary index
// pattern: employees are stored in the partition "empid_<department>" under
// their employee ID, and a copy keyed by email address is kept in another
// partition, "email_<department>", so that finding an employee by email is
// a point query instead of a partition scan.
//
// The problem: the service indexes PartitionKey and RowKey only. Finding
// an employee by email without an index reads every employee of the
// department. The intra-partition index keeps the copies in the same
// partition, consistent through entity group transactions, but then every
// lookup of either kind hits that one partition; putting the index in its
// own partition (or table) spreads the load, and no transaction spans two
// partitions.
//
// The pattern: a change to an employee is written to its primary entity,
// and an index update is put on a queue (package tablequeue). A worker
// applies it: it reads the employee as it is now, writes the index entry
// for the current email, deletes the entry for the old one, and then
// deletes the message. Each step is idempotent, and each index write is
// guarded: every change of an employee raises its Version, and an entry
// already written from the same or a newer version is left alone; a worker
// that finds the employee changed under it undoes its own write. So
// repeated, reordered or late deliveries all converge to the same index.
// The index copies only what an email lookup needs (the seed's advice): not
// the age.
//
// The trade-off the design guide names: the index is eventually
// consistent. Between the change and the worker's run, a lookup through
// the index misses the new email and still finds the old one; readers that
// cannot accept that must check the primary entity (one more point query).
// The copies cost storage, and each change costs a queue message and a few
// more writes. A client that dies between its write and its enqueue leaves
// the index stale until a repair pass re-enqueues updates for employees
// whose index entry is missing or older than their Version.
//
// What the program proves: the index lookup reads 1 entity where the scan
// reads all 500; the stale window exists and then closes; a duplicate
// delivery changes nothing; a departure removes the entry; and at the end
// every employee has exactly one index entry, with its current email and
// version, and there is no other entry. Time is simulated: the program
// never sleeps.
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
	"github.com/localtable/localtable/filter"
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

// Employee is the primary entity, in partition "empid_<department>".
type Employee struct {
	PartitionKey string // "empid_Sales"
	RowKey       string // the employee ID, zero-padded: "000223"
	FirstName    string
	LastName     string
	Email        string
	Age          int32
	// Version is raised by every change; index entries record the version
	// they were written from.
	Version int64
}

// EmailEntry is the index entry, in partition "email_<department>".
type EmailEntry struct {
	PartitionKey string // "email_Sales"
	RowKey       string // the email address
	EmployeeID   string
	FirstName    string
	LastName     string
	Version      int64 // the employee's Version this entry was written from
}

func empPartition(dept string) string   { return "empid_" + dept }
func emailPartition(dept string) string { return "email_" + dept }

// pad formats n zero-padded to width digits, so that IDs sort as numbers.
func pad(n, width int) string {
	s := strconv.Itoa(n)
	return strings.Repeat("0", max(0, width-len(s))) + s
}

const (
	dept      = "Sales"
	employees = 500
)

var (
	firstNames = []string{"Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivo", "Jun"}
	lastNames  = []string{"Jones", "Alvarez", "Brown", "Kim", "Okafor", "Nguyen", "Smith", "Weber", "Rossi", "Sato", "Ahmed", "Tanaka"}
)

func newEmployee(id int) Employee {
	first, last := firstNames[id%len(firstNames)], lastNames[(id/len(firstNames))%len(lastNames)]
	return Employee{
		RowKey: pad(id, 6), FirstName: first, LastName: last, Age: int32(20 + id%45),
		Email: fmt.Sprintf("%s%s%d@contoso.com", strings.ToLower(last), strings.ToLower(first[:1]), id),
	}
}

// indexUpdate is the queue message: which employee changed, and the email
// its index entry had before the change ("" for a new employee).
type indexUpdate struct {
	Department string `json:"department"`
	EmployeeID string `json:"employeeId"`
	OldEmail   string `json:"oldEmail,omitempty"`
}

// store is the table and queue that clients and workers share, and the
// simulated clock.
type store struct {
	tbl   *localtable.Table // both partitions; they could as well be two tables
	queue *tablequeue.Queue
	clk   *tablequeue.ManualClock
}

const visibilityTimeout = 30 * time.Second

func openStore(ctx context.Context, acct *localtable.Account) (*store, error) {
	tbl, err := acct.CreateTable(ctx, "Employees")
	if err != nil {
		return nil, err
	}
	queues, err := acct.CreateTable(ctx, "Queues")
	if err != nil {
		return nil, err
	}
	st := &store{tbl: tbl, clk: tablequeue.NewManualClock(time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC))}
	st.queue, err = tablequeue.New(queues, "index-updates", &tablequeue.Options{
		VisibilityTimeout: visibilityTimeout,
		Clock:             st.clk.Now,
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// The client's side: each change writes the primary entity, then enqueues
// the index update.

func (st *store) enqueue(ctx context.Context, u indexUpdate) error {
	body, err := json.Marshal(u)
	if err != nil {
		return err
	}
	_, err = st.queue.Enqueue(ctx, string(body))
	return err
}

// hire adds an employee at version 1.
func (st *store) hire(ctx context.Context, emp Employee) error {
	emp.PartitionKey, emp.Version = empPartition(dept), 1
	e, err := localtable.Marshal(emp)
	if err != nil {
		return err
	}
	if _, err := st.tbl.Insert(ctx, e); err != nil {
		return err
	}
	return st.enqueue(ctx, indexUpdate{Department: dept, EmployeeID: emp.RowKey})
}

// update changes an employee with change, raising its version, under
// optimistic concurrency: a concurrent change makes it fail with
// ErrConditionNotMet rather than be lost. It returns the employee as
// written.
func (st *store) update(ctx context.Context, id string, change func(*Employee)) (Employee, error) {
	e, err := st.tbl.Get(ctx, empPartition(dept), id, nil)
	if err != nil {
		return Employee{}, err
	}
	var emp Employee
	if err := localtable.Unmarshal(e, &emp); err != nil {
		return Employee{}, err
	}
	old := emp.Email
	change(&emp)
	emp.Version++
	ne, err := localtable.Marshal(emp)
	if err != nil {
		return Employee{}, err
	}
	if _, err := st.tbl.Update(ctx, ne, &localtable.UpdateOptions{IfMatch: e.ETag}); err != nil {
		return Employee{}, err
	}
	return emp, st.enqueue(ctx, indexUpdate{Department: dept, EmployeeID: id, OldEmail: old})
}

// leave deletes an employee.
func (st *store) leave(ctx context.Context, id string) error {
	e, err := st.tbl.Get(ctx, empPartition(dept), id, nil)
	if err != nil {
		return err
	}
	if err := st.tbl.Delete(ctx, e.PartitionKey, e.RowKey, &localtable.DeleteOptions{IfMatch: e.ETag}); err != nil {
		return err
	}
	return st.enqueue(ctx, indexUpdate{Department: dept, EmployeeID: id, OldEmail: e.Properties["Email"].String()})
}

// Step is a step of the worker.
type Step int

// The worker's steps, in order.
const (
	StepDequeue       Step = iota // take the message: hidden, not deleted
	StepRead                      // read the employee as it is now
	StepWriteEntry                // write the entry for the current email
	StepDropOld                   // delete the entry for the old email
	StepDeleteMessage             // delete the message
)

var stepNames = [...]string{"dequeue", "read", "write entry", "drop old entry", "delete message"}

func (s Step) String() string { return stepNames[s] }

// errConflict: another writer changed an index entry between our read and
// our write. The message is retried when it reappears.
var errConflict = errors.New("index entry changed concurrently; retry")

// worker applies index updates.
type worker struct {
	*store
	name string
	log  io.Writer // where the worker reports what it did
	// after, if set, runs after each step; an error stops the worker at
	// once (a crash). Tests use it to kill or pause a worker between steps.
	after func(Step) error
}

func (wk *worker) logf(format string, args ...any) {
	fmt.Fprintf(wk.log, "  [%s] %s\n", wk.name, fmt.Sprintf(format, args...))
}

func (wk *worker) step(s Step) error {
	if wk.after == nil {
		return nil
	}
	return wk.after(s)
}

// process applies one index update; it returns false if no message was
// visible. An error leaves the message to reappear.
func (wk *worker) process(ctx context.Context) (bool, error) {
	m, ok, err := wk.queue.Dequeue(ctx)
	if err != nil || !ok {
		return false, err
	}
	if err := wk.step(StepDequeue); err != nil {
		return true, err
	}
	var u indexUpdate
	if err := json.Unmarshal([]byte(m.Body), &u); err != nil || u.Department == "" || u.EmployeeID == "" {
		return true, fmt.Errorf("message %s is not an index update", m.ID)
	}
	if err := wk.apply(ctx, u); err != nil {
		return true, err
	}
	err = wk.queue.Delete(ctx, m.ID, m.PopReceipt)
	if errors.Is(err, tablequeue.ErrPopReceiptMismatch) || errors.Is(err, tablequeue.ErrMessageNotFound) {
		// Our lease ran out and another worker took the message over; the
		// work is idempotent, so there is nothing to undo.
		wk.logf("message taken over by another worker (%s)", localtable.ErrorCodeOf(err))
		return true, nil
	}
	if err != nil {
		return true, err
	}
	return true, wk.step(StepDeleteMessage)
}

// drain processes messages until none is visible.
func (wk *worker) drain(ctx context.Context) (int, error) {
	n := 0
	for {
		ok, err := wk.process(ctx)
		if err != nil || !ok {
			return n, err
		}
		n++
	}
}

// readEmployee returns the employee as stored now, and false if it does
// not exist.
func (wk *worker) readEmployee(ctx context.Context, u indexUpdate) (Employee, bool, error) {
	var emp Employee
	e, err := wk.tbl.Get(ctx, empPartition(u.Department), u.EmployeeID, nil)
	if errors.Is(err, localtable.ErrEntityNotFound) {
		return emp, false, nil
	}
	if err != nil {
		return emp, false, err
	}
	return emp, true, localtable.Unmarshal(e, &emp)
}

// apply brings the index in line with the employee as it is now.
func (wk *worker) apply(ctx context.Context, u indexUpdate) error {
	emp, exists, err := wk.readEmployee(ctx, u)
	if err != nil {
		return err
	}
	if err := wk.step(StepRead); err != nil {
		return err
	}
	current := ""
	if exists {
		current = emp.Email
		if err := wk.writeEntry(ctx, u, emp); err != nil {
			return err
		}
		if err := wk.step(StepWriteEntry); err != nil {
			return err
		}
	}
	if u.OldEmail != "" && u.OldEmail != current {
		if err := wk.dropEntry(ctx, u, u.OldEmail); err != nil {
			return err
		}
		if err := wk.step(StepDropOld); err != nil {
			return err
		}
	}
	return nil
}

// writeEntry writes the index entry for emp's email, unless an entry
// written from the same or a newer version of emp is there. Each write is
// conditioned on what was read, so two workers cannot interleave on it.
func (wk *worker) writeEntry(ctx context.Context, u indexUpdate, emp Employee) error {
	pk, rk := emailPartition(u.Department), emp.Email
	entry, err := localtable.Marshal(EmailEntry{PartitionKey: pk, RowKey: rk, EmployeeID: emp.RowKey,
		FirstName: emp.FirstName, LastName: emp.LastName, Version: emp.Version})
	if err != nil {
		return err
	}
	var tag localtable.ETag
	cur, err := wk.tbl.Get(ctx, pk, rk, nil)
	switch {
	case errors.Is(err, localtable.ErrEntityNotFound):
		tag, err = wk.tbl.Insert(ctx, entry)
		if errors.Is(err, localtable.ErrEntityExists) {
			return errConflict
		}
	case err != nil:
		return err
	default:
		var have EmailEntry
		if err := localtable.Unmarshal(cur, &have); err != nil {
			return err
		}
		if have.EmployeeID == emp.RowKey && have.Version >= emp.Version {
			wk.logf("%s/%s is up to date (version %d)", pk, rk, have.Version)
			return nil
		}
		tag, err = wk.tbl.Update(ctx, entry, &localtable.UpdateOptions{IfMatch: cur.ETag})
		if errors.Is(err, localtable.ErrConditionNotMet) || errors.Is(err, localtable.ErrEntityNotFound) {
			// Changed, or deleted (by another worker dropping it, or
			// undoing its stale write), since we read it.
			return errConflict
		}
	}
	if err != nil {
		return err
	}
	wk.logf("wrote %s/%s -> %s (version %d)", pk, rk, emp.RowKey, emp.Version)

	// If the employee changed email since we read it, what we wrote is
	// stale: the change's own update writes the new entry, and nothing
	// would ever delete this one. Undo it, unless someone wrote it since.
	now, exists, err := wk.readEmployee(ctx, u)
	if err != nil {
		return err
	}
	if !exists || now.Email != rk {
		err := wk.tbl.Delete(ctx, pk, rk, &localtable.DeleteOptions{IfMatch: tag})
		if err != nil && !errors.Is(err, localtable.ErrEntityNotFound) && !errors.Is(err, localtable.ErrConditionNotMet) {
			return err
		}
		wk.logf("%s changed meanwhile: removed the stale %s/%s again", emp.RowKey, pk, rk)
	}
	return nil
}

// dropEntry deletes the index entry for email, if it still points to the
// employee u names.
func (wk *worker) dropEntry(ctx context.Context, u indexUpdate, email string) error {
	pk := emailPartition(u.Department)
	cur, err := wk.tbl.Get(ctx, pk, email, nil)
	if errors.Is(err, localtable.ErrEntityNotFound) {
		wk.logf("%s/%s is already gone", pk, email)
		return nil
	}
	if err != nil {
		return err
	}
	var have EmailEntry
	if err := localtable.Unmarshal(cur, &have); err != nil {
		return err
	}
	if have.EmployeeID != u.EmployeeID {
		wk.logf("%s/%s belongs to %s now: left alone", pk, email, have.EmployeeID)
		return nil
	}
	err = wk.tbl.Delete(ctx, pk, email, &localtable.DeleteOptions{IfMatch: cur.ETag})
	switch {
	case errors.Is(err, localtable.ErrEntityNotFound):
		return nil
	case errors.Is(err, localtable.ErrConditionNotMet):
		return errConflict
	case err != nil:
		return err
	}
	wk.logf("deleted %s/%s", pk, email)
	return nil
}

// The reader's side.

// lookup is the result of one query.
type lookup struct {
	found []localtable.Entity
	stats localtable.QueryStats
}

func (st *store) query(ctx context.Context, f *filter.Filter) (lookup, error) {
	var l lookup
	opts := localtable.QueryOptions{Filter: f}
	for {
		page, err := st.tbl.Query(ctx, &opts)
		if err != nil {
			return l, err
		}
		l.found = append(l.found, page.Entities...)
		l.stats.Scanned += page.Stats.Scanned
		l.stats.Returned += page.Stats.Returned
		if page.Continuation.IsZero() {
			return l, nil
		}
		opts.Continuation = page.Continuation
	}
}

// byIndex is the point query on the index.
func byIndex(email string) *filter.Filter {
	return filter.And(filter.PartitionKey().Eq(emailPartition(dept)), filter.RowKey().Eq(email))
}

// byScan is the query without the index: a scan of the department.
func byScan(email string) *filter.Filter {
	return filter.And(filter.PartitionKey().Eq(empPartition(dept)), filter.Prop("Email").Eq(email))
}

// describe says what a lookup found: for an index entry, also whether it
// is stale, which takes a point query on the primary entity.
func (st *store) describe(ctx context.Context, l lookup) (string, error) {
	s := fmt.Sprintf("scanned %3d, returned %d", l.stats.Scanned, l.stats.Returned)
	if len(l.found) == 0 {
		return s + ": not found", nil
	}
	e := l.found[0]
	if e.PartitionKey == empPartition(dept) {
		var emp Employee
		if err := localtable.Unmarshal(e, &emp); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s: %s %s %s", s, emp.RowKey, emp.FirstName, emp.LastName), nil
	}
	var ix EmailEntry
	if err := localtable.Unmarshal(e, &ix); err != nil {
		return "", err
	}
	s = fmt.Sprintf("%s: %s %s %s (version %d)", s, ix.EmployeeID, ix.FirstName, ix.LastName, ix.Version)
	emp, err := localtable.GetAs[Employee](ctx, st.tbl, empPartition(dept), ix.EmployeeID)
	switch {
	case errors.Is(err, localtable.ErrEntityNotFound):
		s += ", STALE: the employee is gone"
	case err != nil:
		return "", err
	case emp.Email != e.RowKey:
		s += fmt.Sprintf(", STALE: the employee's email is now %s", emp.Email)
	}
	return s, nil
}

func (st *store) printLookup(ctx context.Context, w io.Writer, label string, f *filter.Filter) error {
	l, err := st.query(ctx, f)
	if err != nil {
		return err
	}
	d, err := st.describe(ctx, l)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-46s %s\n", label+":", d)
	return nil
}

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	st, err := openStore(ctx, acct)
	if err != nil {
		return err
	}
	for id := 1; id <= employees; id++ {
		if err := st.hire(ctx, newEmployee(id)); err != nil {
			return err
		}
	}
	n, err := st.queue.Len(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Hired %d employees into partition %s; %d index updates wait in %s.\n", employees, empPartition(dept), n, st.queue.Name())
	bulk := &worker{store: st, name: "worker", log: io.Discard}
	if n, err = bulk.drain(ctx); err != nil {
		return err
	}
	fmt.Fprintf(w, "The worker applied %d updates: partition %s holds the index.\n\n", n, emailPartition(dept))

	target := newEmployee(223)
	fmt.Fprintf(w, "Find %s through the index, a point query:\n", target.Email)
	if err := st.explain(ctx, w, byIndex(target.Email)); err != nil {
		return err
	}
	fmt.Fprintf(w, "Find it without the index, a partition scan:\n")
	if err := st.explain(ctx, w, byScan(target.Email)); err != nil {
		return err
	}

	newEmail := "dara.ahmed@contoso.com"
	emp, err := st.update(ctx, target.RowKey, func(e *Employee) { e.Email = newEmail })
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s changes email to %s (version %d); the index update is queued.\n", emp.RowKey, newEmail, emp.Version)
	fmt.Fprintln(w, "Before the worker runs, the index is stale:")
	if err := st.printLookups(ctx, w, target.Email, newEmail); err != nil {
		return err
	}
	wk := &worker{store: st, name: "worker", log: w}
	if _, err := wk.drain(ctx); err != nil {
		return err
	}
	fmt.Fprintln(w, "After the worker:")
	if err := st.printLookups(ctx, w, target.Email, newEmail); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nThe same update delivered a second time (queues deliver at least once) changes nothing:")
	if err := st.enqueue(ctx, indexUpdate{Department: dept, EmployeeID: target.RowKey, OldEmail: target.Email}); err != nil {
		return err
	}
	if _, err := wk.drain(ctx); err != nil {
		return err
	}

	leaver := newEmployee(321)
	if err := st.leave(ctx, leaver.RowKey); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s %s leaves; the worker removes the index entry:\n", leaver.RowKey, leaver.Email)
	if _, err := wk.drain(ctx); err != nil {
		return err
	}
	if err := st.printLookup(ctx, w, "index lookup "+leaver.Email, byIndex(leaver.Email)); err != nil {
		return err
	}

	fmt.Fprintln(w)
	return st.check(ctx, w)
}

func (st *store) explain(ctx context.Context, w io.Writer, f *filter.Filter) error {
	for _, line := range strings.Split(f.Explain(), "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
	l, err := st.query(ctx, f)
	if err != nil {
		return err
	}
	d, err := st.describe(ctx, l)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %s\n", d)
	return nil
}

func (st *store) printLookups(ctx context.Context, w io.Writer, oldEmail, newEmail string) error {
	if err := st.printLookup(ctx, w, "index lookup "+newEmail, byIndex(newEmail)); err != nil {
		return err
	}
	if err := st.printLookup(ctx, w, "index lookup "+oldEmail, byIndex(oldEmail)); err != nil {
		return err
	}
	return st.printLookup(ctx, w, "partition scan "+newEmail, byScan(newEmail))
}

// check verifies the index against the employees: every employee has an
// entry under its email, pointing to it, with its names and version, and
// there is no other entry. It prints the counts.
func (st *store) check(ctx context.Context, w io.Writer) error {
	emps := map[string]Employee{}
	for e, err := range st.tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: filter.PartitionKey().Eq(empPartition(dept))}) {
		if err != nil {
			return err
		}
		var emp Employee
		if err := localtable.Unmarshal(e, &emp); err != nil {
			return err
		}
		emps[emp.RowKey] = emp
	}
	entries := 0
	for e, err := range st.tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: filter.PartitionKey().Eq(emailPartition(dept))}) {
		if err != nil {
			return err
		}
		var ix EmailEntry
		if err := localtable.Unmarshal(e, &ix); err != nil {
			return err
		}
		emp, ok := emps[ix.EmployeeID]
		if !ok || emp.Email != ix.RowKey || emp.FirstName != ix.FirstName || emp.LastName != ix.LastName || emp.Version != ix.Version {
			return fmt.Errorf("index entry %s -> %s (version %d) does not match employee %+v", ix.RowKey, ix.EmployeeID, ix.Version, emp)
		}
		entries++
	}
	if entries != len(emps) {
		return fmt.Errorf("%d index entries for %d employees", entries, len(emps))
	}
	n, err := st.queue.Len(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Index consistent: %d employees, %d index entries, each matching its employee's email and version; %d messages queued.\n", len(emps), entries, n)
	return nil
}
