// Command intrapartition-index shows the intra-partition secondary index
// pattern: every employee is stored twice in its department's partition,
// once under RowKey "empid_<id>" and once under "email_<address>", so that
// a lookup by either is a point query and a range of either is a key-range
// scan.
//
// The problem: the service indexes PartitionKey and RowKey only. Finding an
// employee by email without an index reads every employee of the
// partition.
//
// The pattern: write the copies in one entity group transaction (they
// share the partition, so one transaction can hold them) and change them
// together, each write conditioned on the ETag read, so the copies never
// disagree and a concurrent writer fails the whole change instead of half
// of it.
//
// The trade-offs the design guide names: the copies cost storage (cheap in
// Table storage, but count it); all copies of a partition share its
// scalability target; the copies must stay in one partition to be kept
// consistent by a transaction; numbers in RowKeys are zero-padded so they
// sort as numbers; an index copy need not carry every property.
//
// What the program proves: the point lookups read 1 entity where the scan
// reads the whole partition; the id and email ranges read exactly what they
// return; an email change is one transaction; a stale writer changes
// nothing; and at the end every empid_ entity has exactly one email_ twin.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/examples/internal/show"
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

// Employee is the logical record; each is stored as two entities.
type Employee struct {
	PartitionKey string // the department
	RowKey       string // "empid_000223" or "email_jonesj@contoso.com"
	EmployeeID   string
	FirstName    string
	LastName     string
	Email        string
	Age          int32
	ETag         localtable.ETag
}

const (
	dept      = "Sales"
	employees = 500
)

func idKey(id int) string          { return fmt.Sprintf("empid_%06d", id) }
func emailKey(email string) string { return "email_" + email }

var (
	firstNames = []string{"Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivo", "Jun"}
	lastNames  = []string{"Jones", "Alvarez", "Brown", "Kim", "Okafor", "Nguyen", "Smith", "Weber", "Rossi", "Sato", "Ahmed", "Tanaka"}
)

func newEmployee(id int) Employee {
	first, last := firstNames[id%len(firstNames)], lastNames[(id/len(firstNames))%len(lastNames)]
	return Employee{
		PartitionKey: dept, EmployeeID: fmt.Sprintf("%06d", id),
		FirstName: first, LastName: last, Age: int32(20 + id%45),
		Email: fmt.Sprintf("%s%s%d@contoso.com", strings.ToLower(last), strings.ToLower(first[:1]), id),
	}
}

// insertEmployee writes both copies in one transaction.
func insertEmployee(ctx context.Context, tbl *localtable.Table, emp Employee) error {
	byID, byEmail := emp, emp
	byID.RowKey, byEmail.RowKey = idKey(atoi(emp.EmployeeID)), emailKey(emp.Email)
	a, err := localtable.Marshal(byID)
	if err != nil {
		return err
	}
	b, err := localtable.Marshal(byEmail)
	if err != nil {
		return err
	}
	_, err = tbl.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionInsert, Entity: a},
		{Type: localtable.ActionInsert, Entity: b},
	})
	return err
}

// changeEmail moves an employee's email: it replaces the empid_ copy,
// deletes the old email_ copy and inserts the new one, in one transaction
// conditioned on the ETags the caller read. A writer that read before
// someone else's change fails, and nothing of its change is applied.
func changeEmail(ctx context.Context, tbl *localtable.Table, byID, byEmail Employee, newEmail string) error {
	updated := byID
	updated.Email = newEmail
	idEnt, err := localtable.Marshal(updated)
	if err != nil {
		return err
	}
	newCopy := updated
	newCopy.RowKey = emailKey(newEmail)
	emailEnt, err := localtable.Marshal(newCopy)
	if err != nil {
		return err
	}
	_, err = tbl.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionUpdateReplace, Entity: idEnt, IfMatch: byID.ETag},
		{Type: localtable.ActionDelete, Entity: localtable.Entity{PartitionKey: dept, RowKey: byEmail.RowKey}, IfMatch: byEmail.ETag},
		{Type: localtable.ActionInsert, Entity: emailEnt},
	})
	return err
}

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	tbl, err := acct.CreateTable(ctx, "Employees")
	if err != nil {
		return err
	}
	for id := 1; id <= employees; id++ {
		if err := insertEmployee(ctx, tbl, newEmployee(id)); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d employees in partition %q: %d entities, each pair written by one transaction\n\n", employees, dept, 2*employees)

	target := newEmployee(223)
	lookups := []struct {
		label string
		f     *filter.Filter
	}{
		{"by id (point query)", filter.And(filter.PartitionKey().Eq(dept), filter.RowKey().Eq(idKey(223)))},
		{"by email, through the index (point query)", filter.And(filter.PartitionKey().Eq(dept), filter.RowKey().Eq(emailKey(target.Email)))},
		{"by email, without the index (partition scan)", filter.And(filter.PartitionKey().Eq(dept),
			filter.RowKey().Ge("empid_"), filter.RowKey().Lt("empid`"), filter.Prop("Email").Eq(target.Email))},
		{"ids 000100-000199 (range)", filter.And(filter.PartitionKey().Eq(dept),
			filter.RowKey().Ge(idKey(100)), filter.RowKey().Le(idKey(199)))},
		{"emails starting with 'a' (range)", filter.And(filter.PartitionKey().Eq(dept),
			filter.RowKey().Ge("email_a"), filter.RowKey().Lt("email_b"))},
	}
	for _, l := range lookups {
		r, err := show.Filter(ctx, w, l.label, tbl, l.f)
		if err != nil {
			return err
		}
		if strings.Contains(l.label, "by ") {
			var e Employee
			if err := localtable.Unmarshal(r.Entities[0], &e); err != nil {
				return err
			}
			fmt.Fprintf(w, "  found %s %s <%s>\n", e.FirstName, e.LastName, e.Email)
		}
	}

	// Change employee 223's email. Read both copies; their ETags condition
	// the transaction.
	byID, err := localtable.GetAs[Employee](ctx, tbl, dept, idKey(223))
	if err != nil {
		return err
	}
	byEmail, err := localtable.GetAs[Employee](ctx, tbl, dept, emailKey(byID.Email))
	if err != nil {
		return err
	}
	newEmail := "dara.ahmed@contoso.com"
	if err := changeEmail(ctx, tbl, byID, byEmail, newEmail); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nchanged employee 000223's email to %s in one transaction of 3 actions\n", newEmail)

	// A second writer still holding the old copies tries its own change.
	err = changeEmail(ctx, tbl, byID, byEmail, "someone.else@contoso.com")
	var te *localtable.TransactionError
	if !errors.As(err, &te) || !errors.Is(err, localtable.ErrConditionNotMet) {
		return fmt.Errorf("a stale writer should fail with a condition error, got %v", err)
	}
	fmt.Fprintf(w, "a writer with stale ETags fails at action %d (%s): nothing of its change is applied\n", te.Index, te.Err.Code)

	n, err := checkConsistent(ctx, tbl)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nindex consistent: %d employees, each with exactly one email_ entry\n", n)
	return nil
}

// checkConsistent reads the partition and checks that empid_ and email_
// copies pair up one to one with equal properties.
func checkConsistent(ctx context.Context, tbl *localtable.Table) (int, error) {
	byID := map[string]Employee{}
	byEmail := map[string]Employee{}
	for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: filter.PartitionKey().Eq(dept)}) {
		if err != nil {
			return 0, err
		}
		var emp Employee
		if err := localtable.Unmarshal(e, &emp); err != nil {
			return 0, err
		}
		switch {
		case strings.HasPrefix(e.RowKey, "empid_"):
			byID[emp.EmployeeID] = emp
		case strings.HasPrefix(e.RowKey, "email_"):
			byEmail[emp.Email] = emp
		default:
			return 0, fmt.Errorf("unexpected RowKey %q", e.RowKey)
		}
	}
	if len(byID) != len(byEmail) {
		return 0, fmt.Errorf("%d empid_ entities but %d email_ entities", len(byID), len(byEmail))
	}
	for id, emp := range byID {
		twin, ok := byEmail[emp.Email]
		if !ok || twin.EmployeeID != id || twin.FirstName != emp.FirstName || twin.LastName != emp.LastName || twin.Age != emp.Age {
			return 0, fmt.Errorf("employee %s: email_ copy %+v does not match %+v", id, twin, emp)
		}
	}
	return len(byID), nil
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
