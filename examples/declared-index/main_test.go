package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage/pebble"
)

// want is the whole output: the reads, the lines and the damage are exact.
const want = `500 employees of Sales, kept three ways

find the employee of e000223@contoso.com:
  intra-partition (email_ twin)          1 entities read: 000223 Dara Ahmed <e000223@contoso.com>
  inter-partition (email_Sales entry)    2 entities read: 000223 Dara Ahmed <e000223@contoso.com>
  declared index                         1 read (1 entry of index byEmail, holding the employee): 000223 Dara Ahmed <e000223@contoso.com>
  no index (scan of the partition)     500 entities read

lines of this file that keep and read the index:
  intra-partition 20, inter-partition 29, declared 19 (each: a put, an email change, the lookup)

employee 000042 changes email to dara@contoso.com; the process dies after the first write:
  intra-partition, by the new email:  000042 Chen Smith <dara@contoso.com> (one transaction: it cannot be split)
  inter-partition, by the new email:  not found
  inter-partition, by the old email:  000042 Chen Smith <dara@contoso.com> (an entry the reader must check)
  declared, by the new email:         000042 Chen Smith <dara@contoso.com>
  declared, by the old email:         not found

other code changes employee 000077's email to eli@contoso.com with a plain update of empid_000077:
  intra-partition, by the new email:  not found
  intra-partition, by the old email:  000077 Chen Smith <e000077@contoso.com> (a stale copy)
  declared, by the new email:         000077 Chen Smith <eli@contoso.com>

finding the damage:
  inter-partition: a sweep of every employee and entry (1000 entities read) finds 2 wrong
  intra-partition: a sweep of every copy (1000 entities read) finds 2 wrong
  declared: Account.Verify finds 0 problems and 0 indexes to repair
`

func TestDeclaredIndex(t *testing.T) {
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
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	rep, err := acct.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v, %v", rep, err)
	}
}

// TestCrashBetweenWrites stops the inter-partition email change after
// its first write on pebble and ends the account there, as a process
// dying would; reopened, the hand-kept index is wrong (the new email has
// no entry, the old one names an employee of another email) and stays so
// until a sweep finds it, where the declared index, kept in the same
// commit as the employee, finds the employee by its new email and
// Verify finds nothing to repair.
func TestCrashBetweenWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *localtable.Account {
		db, err := pebble.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := localtable.Open(&localtable.Options{Engine: db})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := open()
	inter, err := a.CreateTable(ctx, "EmployeesInter")
	if err != nil {
		t.Fatal(err)
	}
	declared, err := a.CreateTable(ctx, "EmployeesDeclared")
	if err != nil {
		t.Fatal(err)
	}
	if err := declaredSetup(ctx, declared); err != nil {
		t.Fatal(err)
	}
	for id := range 20 {
		if err := interPut(ctx, inter, newEmployee(id)); err != nil {
			t.Fatal(err)
		}
		if err := declaredPut(ctx, declared, newEmployee(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := interChangeEmail(ctx, inter, newEmployee(7), "new@contoso.com", 1); err != errCrash {
		t.Fatalf("the crashed change: %v", err)
	}
	if err := declaredChangeEmail(ctx, declared, newEmployee(7), "new@contoso.com"); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil { // the process ends here
		t.Fatal(err)
	}

	a = open()
	defer a.Close()
	inter, declared = a.Table("EmployeesInter"), a.Table("EmployeesDeclared")
	if e, reads, err := interByEmail(ctx, inter, "new@contoso.com"); err != nil || e != nil || reads != 0 {
		t.Fatalf("the hand-kept index by the new email: %v, %d reads, %v; want not found", describe(e), reads, err)
	}
	if e, _, err := interByEmail(ctx, inter, "e000007@contoso.com"); err != nil || e == nil || e.Properties["Email"].String() != "new@contoso.com" {
		t.Fatalf("the hand-kept index by the old email: %v, %v; want the employee, whose email is the new one", describe(e), err)
	}
	if bad, reads, err := sweep(ctx, inter); err != nil || bad != 2 || reads != 40 {
		t.Fatalf("sweep: %d wrong in %d reads, %v; want 2 in 40", bad, reads, err)
	}
	e, reads, index, err := declaredByEmail(ctx, declared, "new@contoso.com")
	if err != nil || e == nil || e.RowKey != idKey(7) || index != "byEmail" || reads != 2 { // on pebble the index is not covering: the entry, then the entity
		t.Fatalf("the declared index by the new email: %v via %q in %d reads, %v", describe(e), index, reads, err)
	}
	if e, _, _, err := declaredByEmail(ctx, declared, "e000007@contoso.com"); err != nil || e != nil {
		t.Fatalf("the declared index by the old email: %v, %v; want not found", describe(e), err)
	}
	rep, err := a.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v, %v", rep, err)
	}
}
