// Command index-entities shows the index entities pattern: to find every
// employee with a given last name (a non-unique value), keep an index
// entity per last name listing the ids of the employees who have it, and
// update it in the same entity group transaction as the employee.
//
// The problem: "all employees named Jones" by a filter on LastName scans
// the whole department. A secondary-index copy per employee (the
// intra-partition index pattern) needs unique RowKeys, which a last name
// is not.
//
// The pattern: an entity "lastname_Jones" in the department's partition
// holds the ids of the Joneses. Hiring an employee is one transaction:
// insert the employee, and insert or update their last name's index entity
// on the ETag read. Concurrent hires of two Joneses conflict on the index
// entity; the loser gets 412 (UpdateConditionNotSatisfied), nothing of its
// transaction is applied, and it re-reads and retries. A lookup is a point
// query for the index, then a point query per id.
//
// The trade-offs the design guide names: the index entity is a hot spot
// under concurrent writes (hence the retries), and it must stay within the
// entity size limits (a String holds 32K characters; split a long list
// over several index entities); it must share the employees' partition to
// be kept in one transaction.
//
// What the program proves: 8 goroutines hiring 400 employees over 8 last
// names, all contending, end with every index entity listing exactly its
// employees, each once; a last-name change moves the id between index
// entities atomically; the lookup reads 1 index entity plus the matches,
// against a scan of the whole partition.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

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

const (
	dept    = "Sales"
	hires   = 400
	workers = 8
)

var lastNames = []string{"Jones", "Smith", "Kim", "Okafor", "Nguyen", "Weber", "Rossi", "Sato"}

func empKey(id int) string            { return fmt.Sprintf("emp_%06d", id) }
func indexKey(lastName string) string { return "lastname_" + lastName }
func lastNameOf(id int) string        { return lastNames[(id+id/workers)%len(lastNames)] }

// ids reads an index entity's list.
func ids(e localtable.Entity) []string {
	v, ok := e.Properties["EmployeeIDs"]
	if !ok || v.String() == "" {
		return nil
	}
	return strings.Split(v.String(), " ")
}

func indexEntity(lastName string, list []string) localtable.Entity {
	return localtable.Entity{PartitionKey: dept, RowKey: indexKey(lastName),
		Properties: localtable.Properties{"EmployeeIDs": localtable.StringValue(strings.Join(list, " "))}}
}

// indexAction returns the action that writes list as lastName's index:
// an insert if there was none (so a concurrent first insert conflicts), a
// replace conditioned on the ETag read otherwise.
func indexAction(cur localtable.Entity, found bool, lastName string, list []string) localtable.Action {
	if !found {
		return localtable.Action{Type: localtable.ActionInsert, Entity: indexEntity(lastName, list)}
	}
	return localtable.Action{Type: localtable.ActionUpdateReplace, Entity: indexEntity(lastName, list), IfMatch: cur.ETag}
}

func readIndex(ctx context.Context, tbl *localtable.Table, lastName string) (localtable.Entity, bool, error) {
	e, err := tbl.Get(ctx, dept, indexKey(lastName), nil)
	if errors.Is(err, localtable.ErrEntityNotFound) {
		return e, false, nil
	}
	return e, err == nil, err
}

// retryable reports whether a transaction lost a race on an index entity.
func retryable(err error) bool {
	return errors.Is(err, localtable.ErrConditionNotMet) || errors.Is(err, localtable.ErrEntityExists)
}

// hire inserts an employee and adds them to their last name's index, in
// one transaction, retrying when another writer changed the index first.
// It returns the number of retries.
func hire(ctx context.Context, tbl *localtable.Table, id int, first, last string) (int, error) {
	emp := localtable.Entity{PartitionKey: dept, RowKey: empKey(id), Properties: localtable.Properties{
		"FirstName": localtable.StringValue(first), "LastName": localtable.StringValue(last)}}
	for retries := 0; ; retries++ {
		idx, found, err := readIndex(ctx, tbl, last)
		if err != nil {
			return retries, err
		}
		list := append(ids(idx), empKey(id))
		// Between the read and the write another writer may change the
		// index; over a network it often does. Yield, to let it here too.
		runtime.Gosched()
		_, err = tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionInsert, Entity: emp},
			indexAction(idx, found, last, list),
		})
		if retryable(err) {
			var te *localtable.TransactionError
			if errors.As(err, &te) && te.Index == 0 {
				return retries, err // the employee itself exists: not a race
			}
			continue
		}
		return retries, err
	}
}

// rename changes an employee's last name: the employee, the old index and
// the new index in one transaction, each on the ETag read.
func rename(ctx context.Context, tbl *localtable.Table, id int, newLast string) error {
	for {
		emp, err := tbl.Get(ctx, dept, empKey(id), nil)
		if err != nil {
			return err
		}
		oldLast := emp.Properties["LastName"].String()
		oldIdx, _, err := readIndex(ctx, tbl, oldLast)
		if err != nil {
			return err
		}
		newIdx, found, err := readIndex(ctx, tbl, newLast)
		if err != nil {
			return err
		}
		emp.Properties["LastName"] = localtable.StringValue(newLast)
		remaining := slices.DeleteFunc(ids(oldIdx), func(s string) bool { return s == empKey(id) })
		_, err = tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionUpdateReplace, Entity: emp, IfMatch: emp.ETag},
			{Type: localtable.ActionUpdateReplace, Entity: indexEntity(oldLast, remaining), IfMatch: oldIdx.ETag},
			indexAction(newIdx, found, newLast, append(ids(newIdx), empKey(id))),
		})
		if retryable(err) {
			continue
		}
		return err
	}
}

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	tbl, err := acct.CreateTable(ctx, "Employees")
	if err != nil {
		return err
	}
	// 8 goroutines hire 400 employees; the 8 last names make every index
	// entity contended.
	var retries atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := g + 1; id <= hires; id += workers {
				n, err := hire(ctx, tbl, id, fmt.Sprintf("First%d", id), lastNameOf(id))
				retries.Add(int64(n))
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d goroutines hired %d employees with %d last names, each hire one transaction with its index entity\n",
		workers, hires, len(lastNames))
	// The number of retries varies from run to run.
	fmt.Fprintf(w, "(this run: %d transactions lost a race on an index entity and were retried)\n", retries.Load())

	if err := rename(ctx, tbl, 7, "Jones"); err != nil {
		return err
	}
	fmt.Fprintf(w, "employee 7 renamed from %s to Jones: employee and both index entities in one transaction\n\n", lastNameOf(7))

	// Find the Joneses: the index, then a point query per id.
	idx, _, err := readIndex(ctx, tbl, "Jones")
	if err != nil {
		return err
	}
	var found []string
	for _, id := range ids(idx) {
		e, err := tbl.Get(ctx, dept, id, nil)
		if err != nil {
			return err
		}
		if e.Properties["LastName"].String() == "Jones" {
			found = append(found, id)
		}
	}
	fmt.Fprintf(w, "%-46s read %6d entities, found %5d\n", "the Joneses through the index:", 1+len(ids(idx)), len(found))
	scan, err := show.Filter(ctx, w, "the Joneses by filter (partition scan)", tbl,
		filter.And(filter.PartitionKey().Eq(dept), filter.Prop("LastName").Eq("Jones")))
	if err != nil {
		return err
	}
	if len(scan.Entities) != len(found) {
		return fmt.Errorf("the index finds %d Joneses, the scan %d", len(found), len(scan.Entities))
	}

	bad, err := checkIndex(ctx, tbl)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nindex entities checked against the employees: %d problems\n", bad)
	return nil
}

// checkIndex compares every index entity with the employees: each employee
// listed exactly once, under their last name only.
func checkIndex(ctx context.Context, tbl *localtable.Table) (int, error) {
	want := map[string][]string{}
	got := map[string][]string{}
	for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: filter.PartitionKey().Eq(dept)}) {
		if err != nil {
			return 0, err
		}
		switch {
		case strings.HasPrefix(e.RowKey, "emp_"):
			ln := e.Properties["LastName"].String()
			want[ln] = append(want[ln], e.RowKey)
		case strings.HasPrefix(e.RowKey, "lastname_"):
			got[strings.TrimPrefix(e.RowKey, "lastname_")] = ids(e)
		}
	}
	bad := 0
	for _, ln := range lastNames {
		w, g := slices.Sorted(slices.Values(want[ln])), slices.Sorted(slices.Values(got[ln]))
		if !slices.Equal(w, g) {
			bad++
		}
	}
	return bad, nil
}
