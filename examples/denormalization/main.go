// Command denormalization shows the denormalization pattern: related data
// that is read together is copied into one entity, so one point query
// answers a question that would otherwise take several.
//
// The problem: a directory page shows an employee with their manager's
// name and phone. Normalized, that is two point queries: the employee,
// then their department for its manager.
//
// The pattern: each employee entity also carries the manager's name and
// phone. The page is one point query.
//
// The trade-offs the design guide names: the copies cost storage, and a
// change to the copied data must be written to every copy. Here a new
// manager means rewriting every employee of the department; because the
// department is one partition, entity group transactions of up to 100 do
// it atomically batch by batch, and each batch is conditioned on the ETags
// read, so an employee changed meanwhile is re-read, not overwritten.
//
// What the program proves: the page is 1 entity read against 2; a manager
// change is 1 write normalized against one write per employee
// denormalized, in transactions of at most 100; after it, every copy holds
// the new manager.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/localtable/localtable"
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

// Employee is the denormalized entity: the manager's details are copies.
type Employee struct {
	PartitionKey string // department
	RowKey       string // employee id
	Name         string
	Phone        string
	ManagerName  string
	ManagerPhone string
	ETag         localtable.ETag
}

// Department is the normalized design's department entity.
type Department struct {
	PartitionKey string // "department"
	RowKey       string // department name
	ManagerName  string
	ManagerPhone string
}

const (
	dept  = "Sales"
	staff = 250
)

func empID(i int) string { return fmt.Sprintf("%06d", i) }

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	normalized, err := acct.CreateTable(ctx, "Directory")
	if err != nil {
		return err
	}
	denormalized, err := acct.CreateTable(ctx, "DirectoryDenormalized")
	if err != nil {
		return err
	}
	d := Department{PartitionKey: "department", RowKey: dept, ManagerName: "Mia Jensen", ManagerPhone: "+1 425 555 0100"}
	if err := insert(ctx, normalized, d); err != nil {
		return err
	}
	for i := 1; i <= staff; i++ {
		e := Employee{PartitionKey: dept, RowKey: empID(i), Name: fmt.Sprintf("Employee %d", i), Phone: fmt.Sprintf("+1 425 555 %04d", 1000+i)}
		if err := insert(ctx, normalized, e); err != nil {
			return err
		}
		e.ManagerName, e.ManagerPhone = d.ManagerName, d.ManagerPhone
		if err := insert(ctx, denormalized, e); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "department %s with %d employees, stored normalized and denormalized\n\n", dept, staff)

	// The directory page for employee 42.
	emp, err := localtable.GetAs[Employee](ctx, normalized, dept, empID(42))
	if err != nil {
		return err
	}
	dep, err := localtable.GetAs[Department](ctx, normalized, "department", emp.PartitionKey)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "normalized:   2 point queries: %s, manager %s (%s)\n", emp.Name, dep.ManagerName, dep.ManagerPhone)
	den, err := localtable.GetAs[Employee](ctx, denormalized, dept, empID(42))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "denormalized: 1 point query:   %s, manager %s (%s)\n\n", den.Name, den.ManagerName, den.ManagerPhone)

	// A new manager.
	d.ManagerName, d.ManagerPhone = "Noah Berg", "+1 425 555 0199"
	e, err := localtable.Marshal(d)
	if err != nil {
		return err
	}
	if _, err := normalized.Update(ctx, e, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge}); err != nil {
		return err
	}
	fmt.Fprintln(w, "new manager, normalized:   1 update")
	writes, txs, err := setManager(ctx, denormalized, d.ManagerName, d.ManagerPhone)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "new manager, denormalized: %d updates in %d transactions\n", writes, txs)

	stale := 0
	for e, err := range localtable.QueryAs[Employee](ctx, denormalized, &localtable.QueryOptions{Filter: filter.PartitionKey().Eq(dept)}) {
		if err != nil {
			return err
		}
		if e.ManagerName != d.ManagerName || e.ManagerPhone != d.ManagerPhone {
			stale++
		}
	}
	fmt.Fprintf(w, "copies still naming the old manager: %d\n", stale)
	return nil
}

// setManager rewrites the manager's copy in every employee of the
// department, 100 per transaction, each transaction conditioned on the
// ETags read; a conflicting batch is re-read and retried.
func setManager(ctx context.Context, tbl *localtable.Table, name, phone string) (writes, txs int, err error) {
	next := localtable.Continuation{}
	for {
		page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: filter.PartitionKey().Eq(dept),
			PageSize: localtable.MaxTransactionActions, Continuation: next})
		if err != nil {
			return writes, txs, err
		}
		acts := make([]localtable.Action, 0, len(page.Entities))
		for _, e := range page.Entities {
			e.Properties = localtable.Properties{"ManagerName": localtable.StringValue(name), "ManagerPhone": localtable.StringValue(phone)}
			acts = append(acts, localtable.Action{Type: localtable.ActionUpdateMerge, Entity: e, IfMatch: e.ETag})
		}
		if len(acts) > 0 {
			_, err = tbl.Transact(ctx, acts)
			if errors.Is(err, localtable.ErrConditionNotMet) {
				continue // someone changed an employee of this page: read it again
			}
			if err != nil {
				return writes, txs, err
			}
			writes, txs = writes+len(acts), txs+1
		}
		if page.Continuation.IsZero() {
			return writes, txs, nil
		}
		next = page.Continuation
	}
}

func insert(ctx context.Context, tbl *localtable.Table, v any) error {
	e, err := localtable.Marshal(v)
	if err != nil {
		return err
	}
	_, err = tbl.Insert(ctx, e)
	return err
}
