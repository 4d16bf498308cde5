// Command declared-index puts the two hand-kept secondary index patterns
// of the Table design guide next to an index the store keeps
// (Table.CreateIndex, a localtable extension), for the same lookup: an
// employee by email.
//
//   - intra-partition: every employee is stored twice in its department's
//     partition, under "empid_<id>" and "email_<address>", both written by
//     one entity group transaction;
//   - inter-partition: the employee under "empid_<id>" in partition
//     "Sales", and an index entity "email_<address>" holding the id in
//     partition "email_Sales": two partitions, so two writes, which no
//     transaction can join;
//   - declared: the employee once, and an index byEmail on its Email
//     property, which the store keeps in the same commit as every write.
//
// What the program shows: what each lookup reads; how many lines of this
// file each way takes (counted from the source); what goes wrong in each
// when a process dies between the two writes of an email change (the
// inter-partition pattern), or when a writer that does not know the
// pattern changes an email (the intra-partition one); and what it takes
// to find the damage (a sweep of every entity by hand; Account.Verify,
// and Table.RebuildIndex to repair, for the declared index).
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log"
	"os"

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

//go:embed main.go
var source string

const (
	dept      = "Sales"
	employees = 500
)

// Employee is the logical record.
type Employee struct {
	ID    int
	Name  string
	Email string
}

func newEmployee(id int) Employee {
	names := []string{"Ana Jones", "Bo Kim", "Chen Smith", "Dara Ahmed", "Eli Rossi"}
	return Employee{ID: id, Name: names[id%len(names)], Email: fmt.Sprintf("e%06d@contoso.com", id)}
}

func idKey(id int) string { return fmt.Sprintf("empid_%06d", id) }

func (e Employee) props() localtable.Properties {
	return localtable.Properties{"EmployeeID": localtable.Int32Value(int32(e.ID)), "Name": localtable.StringValue(e.Name), "Email": localtable.StringValue(e.Email)}
}

// errCrash stands for the process dying at that point: nothing after it
// runs.
var errCrash = errors.New("the process died here")

// ---- intra-partition: two copies in one partition, one transaction ----

func intraPut(ctx context.Context, t *localtable.Table, e Employee) error {
	_, err := t.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: dept, RowKey: idKey(e.ID), Properties: e.props()}},
		{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: dept, RowKey: "email_" + e.Email, Properties: e.props()}},
	})
	return err
}

// intraChangeEmail changes an employee's email: its copy under empid_
// replaced, the email_ copy moved, in one transaction.
func intraChangeEmail(ctx context.Context, t *localtable.Table, e Employee, email string) error {
	old := e.Email
	e.Email = email
	_, err := t.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionUpsertReplace, Entity: localtable.Entity{PartitionKey: dept, RowKey: idKey(e.ID), Properties: e.props()}},
		{Type: localtable.ActionDelete, Entity: localtable.Entity{PartitionKey: dept, RowKey: "email_" + old}},
		{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: dept, RowKey: "email_" + email, Properties: e.props()}},
	})
	return err
}

func intraByEmail(ctx context.Context, t *localtable.Table, email string) (*localtable.Entity, int, error) {
	return pointRead(ctx, t, dept, "email_"+email)
}

// ---- inter-partition: an index entity in another partition, two writes ----

func interPut(ctx context.Context, t *localtable.Table, e Employee) error {
	if _, err := t.Insert(ctx, localtable.Entity{PartitionKey: dept, RowKey: idKey(e.ID), Properties: e.props()}); err != nil {
		return err
	}
	_, err := t.Upsert(ctx, localtable.Entity{PartitionKey: "email_" + dept, RowKey: e.Email, Properties: localtable.Properties{"EmployeeID": localtable.Int32Value(int32(e.ID))}}, nil)
	return err
}

// interChangeEmail changes an employee's email: the employee first, then
// its index entity; crashAfter > 0 stops after that many writes.
func interChangeEmail(ctx context.Context, t *localtable.Table, e Employee, email string, crashAfter int) error {
	old := e.Email
	e.Email = email
	if _, err := t.Upsert(ctx, localtable.Entity{PartitionKey: dept, RowKey: idKey(e.ID), Properties: e.props()}, nil); err != nil {
		return err
	}
	if crashAfter == 1 {
		return errCrash
	}
	if _, err := t.Upsert(ctx, localtable.Entity{PartitionKey: "email_" + dept, RowKey: email, Properties: localtable.Properties{"EmployeeID": localtable.Int32Value(int32(e.ID))}}, nil); err != nil {
		return err
	}
	return t.Delete(ctx, "email_"+dept, old, nil)
}

func interByEmail(ctx context.Context, t *localtable.Table, email string) (*localtable.Entity, int, error) {
	ix, reads, err := pointRead(ctx, t, "email_"+dept, email)
	if ix == nil || err != nil {
		return nil, reads, err
	}
	e, more, err := pointRead(ctx, t, dept, idKey(int(ix.Properties["EmployeeID"].Int32())))
	return e, reads + more, err
}

// ---- declared: the employee once, the index kept by the store ----

func declaredSetup(ctx context.Context, t *localtable.Table) error {
	return t.CreateIndex(ctx, "byEmail", "Email") // at every start: a no-op once declared
}

func declaredPut(ctx context.Context, t *localtable.Table, e Employee) error {
	_, err := t.Insert(ctx, localtable.Entity{PartitionKey: dept, RowKey: idKey(e.ID), Properties: e.props()})
	return err
}

func declaredChangeEmail(ctx context.Context, t *localtable.Table, e Employee, email string) error {
	e.Email = email
	_, err := t.Upsert(ctx, localtable.Entity{PartitionKey: dept, RowKey: idKey(e.ID), Properties: e.props()}, nil)
	return err
}

func declaredByEmail(ctx context.Context, t *localtable.Table, email string) (*localtable.Entity, int, string, error) {
	r, err := show.Query(ctx, t, &localtable.QueryOptions{Filter: mustParse(fmt.Sprintf("Email eq '%s'", email))})
	if err != nil || len(r.Entities) == 0 {
		return nil, r.Stats.Scanned, r.Stats.Index, err
	}
	return &r.Entities[0], r.Stats.Scanned, r.Stats.Index, nil
}

// ---- the program ----

// pointRead reads one entity by a point query and returns it (nil: none)
// and the entities the query read.
func pointRead(ctx context.Context, t *localtable.Table, pk, rk string) (*localtable.Entity, int, error) {
	f := mustParse(fmt.Sprintf("PartitionKey eq '%s' and RowKey eq '%s'", pk, rk))
	r, err := show.Query(ctx, t, &localtable.QueryOptions{Filter: f})
	if err != nil || len(r.Entities) == 0 {
		return nil, r.Stats.Scanned, err
	}
	return &r.Entities[0], r.Stats.Scanned, nil
}

// linesOf counts the lines of this file's functions named.
func linesOf(names ...string) int {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", source, 0)
	if err != nil {
		panic(err)
	}
	n := 0
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			for _, name := range names {
				if fd.Name.Name == name {
					n += fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				}
			}
		}
	}
	return n
}

func describe(e *localtable.Entity) string {
	if e == nil {
		return "not found"
	}
	return fmt.Sprintf("%06d %s <%s>", e.Properties["EmployeeID"].Int32(), e.Properties["Name"].String(), e.Properties["Email"].String())
}

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	intra, err := acct.CreateTable(ctx, "EmployeesIntra")
	if err != nil {
		return err
	}
	inter, err := acct.CreateTable(ctx, "EmployeesInter")
	if err != nil {
		return err
	}
	declared, err := acct.CreateTable(ctx, "EmployeesDeclared")
	if err != nil {
		return err
	}
	if err := declaredSetup(ctx, declared); err != nil {
		return err
	}
	for id := range employees {
		e := newEmployee(id)
		if err := intraPut(ctx, intra, e); err != nil {
			return err
		}
		if err := interPut(ctx, inter, e); err != nil {
			return err
		}
		if err := declaredPut(ctx, declared, e); err != nil {
			return err
		}
	}
	// At the next start the application declares its index again: a no-op.
	if err := declaredSetup(ctx, declared); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d employees of %s, kept three ways\n\n", employees, dept)

	fmt.Fprintf(w, "find the employee of e000223@contoso.com:\n")
	e, reads, err := intraByEmail(ctx, intra, "e000223@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-36s %3d entities read: %s\n", "intra-partition (email_ twin)", reads, describe(e))
	e, reads, err = interByEmail(ctx, inter, "e000223@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-36s %3d entities read: %s\n", "inter-partition (email_Sales entry)", reads, describe(e))
	e, reads, index, err := declaredByEmail(ctx, declared, "e000223@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-36s %3d read (1 entry of index %s, holding the employee): %s\n", "declared index", reads, index, describe(e))
	r, err := show.Query(ctx, intra, &localtable.QueryOptions{Filter: mustParse("PartitionKey eq 'Sales' and RowKey ge 'empid_' and RowKey lt 'empid`' and Email eq 'e000223@contoso.com'")})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-36s %3d entities read\n\n", "no index (scan of the partition)", r.Stats.Scanned)

	fmt.Fprintf(w, "lines of this file that keep and read the index:\n")
	fmt.Fprintf(w, "  intra-partition %d, inter-partition %d, declared %d (each: a put, an email change, the lookup)\n\n",
		linesOf("intraPut", "intraChangeEmail", "intraByEmail"), linesOf("interPut", "interChangeEmail", "interByEmail"), linesOf("declaredSetup", "declaredPut", "declaredChangeEmail", "declaredByEmail"))

	// The inter-partition pattern: the process dies between its two writes.
	fmt.Fprintf(w, "employee 000042 changes email to dara@contoso.com; the process dies after the first write:\n")
	if err := interChangeEmail(ctx, inter, newEmployee(42), "dara@contoso.com", 1); !errors.Is(err, errCrash) {
		return fmt.Errorf("the crashed change: %v", err)
	}
	if err := declaredChangeEmail(ctx, declared, newEmployee(42), "dara@contoso.com"); err != nil {
		return err // one write: there is no second write to die before
	}
	if err := intraChangeEmail(ctx, intra, newEmployee(42), "dara@contoso.com"); err != nil {
		return err // one transaction: all of it or nothing
	}
	e, _, err = intraByEmail(ctx, intra, "dara@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  intra-partition, by the new email:  %s (one transaction: it cannot be split)\n", describe(e))
	e, _, err = interByEmail(ctx, inter, "dara@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  inter-partition, by the new email:  %s\n", describe(e))
	e, _, err = interByEmail(ctx, inter, "e000042@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  inter-partition, by the old email:  %s (an entry the reader must check)\n", describe(e))
	e, _, _, err = declaredByEmail(ctx, declared, "dara@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  declared, by the new email:         %s\n", describe(e))
	e, _, _, err = declaredByEmail(ctx, declared, "e000042@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  declared, by the old email:         %s\n\n", describe(e))

	// The intra-partition pattern: a writer that does not know it.
	fmt.Fprintf(w, "other code changes employee 000077's email to eli@contoso.com with a plain update of empid_000077:\n")
	e77 := newEmployee(77)
	e77.Email = "eli@contoso.com"
	if _, err := intra.Upsert(ctx, localtable.Entity{PartitionKey: dept, RowKey: idKey(77), Properties: e77.props()}, nil); err != nil {
		return err
	}
	if _, err := declared.Upsert(ctx, localtable.Entity{PartitionKey: dept, RowKey: idKey(77), Properties: e77.props()}, nil); err != nil {
		return err
	}
	e, _, err = intraByEmail(ctx, intra, "eli@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  intra-partition, by the new email:  %s\n", describe(e))
	e, _, err = intraByEmail(ctx, intra, "e000077@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  intra-partition, by the old email:  %s (a stale copy)\n", describe(e))
	e, _, _, err = declaredByEmail(ctx, declared, "eli@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  declared, by the new email:         %s\n\n", describe(e))

	// Finding the damage.
	bad, reads, err := sweep(ctx, inter)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "finding the damage:\n  inter-partition: a sweep of every employee and entry (%d entities read) finds %d wrong\n", reads, bad)
	bad, reads, err = sweepIntra(ctx, intra)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  intra-partition: a sweep of every copy (%d entities read) finds %d wrong\n", reads, bad)
	rep, err := acct.Verify(ctx)
	if err != nil {
		return err
	}
	for _, t := range rep.Tables {
		if t.Name == "EmployeesDeclared" {
			fmt.Fprintf(w, "  declared: Account.Verify finds %d problems and %d indexes to repair\n", len(t.Problems), len(t.RepairIndexes))
		}
	}
	return nil
}

// sweep checks the inter-partition index by hand: every employee has an
// entry of its email, and every entry names an employee of that email.
// It returns the employees or entries found wrong, and the reads.
func sweep(ctx context.Context, t *localtable.Table) (int, int, error) {
	r, err := show.Query(ctx, t, nil)
	if err != nil {
		return 0, 0, err
	}
	emails, entries := map[int32]string{}, map[string]int32{}
	for _, e := range r.Entities {
		if e.PartitionKey == dept {
			emails[e.Properties["EmployeeID"].Int32()] = e.Properties["Email"].String()
		} else {
			entries[e.RowKey] = e.Properties["EmployeeID"].Int32()
		}
	}
	bad := 0
	for id, email := range emails {
		if got, ok := entries[email]; !ok || got != id {
			bad++
		}
	}
	for email, id := range entries {
		if emails[id] != email {
			bad++
		}
	}
	return bad, r.Stats.Scanned, nil
}

// sweepIntra checks the intra-partition copies: every empid_ entity has
// an email_ twin of its email, and every email_ copy one employee.
func sweepIntra(ctx context.Context, t *localtable.Table) (int, int, error) {
	r, err := show.Query(ctx, t, nil)
	if err != nil {
		return 0, 0, err
	}
	byID, byEmail := map[int32]string{}, map[string]int32{}
	for _, e := range r.Entities {
		id, email := e.Properties["EmployeeID"].Int32(), e.Properties["Email"].String()
		if len(e.RowKey) > 6 && e.RowKey[:6] == "email_" {
			byEmail[e.RowKey[6:]] = id
		} else {
			byID[id] = email
		}
	}
	bad := 0
	for id, email := range byID {
		if got, ok := byEmail[email]; !ok || got != id {
			bad++
		}
	}
	for email, id := range byEmail {
		if byID[id] != email {
			bad++
		}
	}
	return bad, r.Stats.Scanned, nil
}

// mustParse parses a filter the program builds.
func mustParse(s string) *filter.Filter {
	f, err := filter.Parse(s)
	if err != nil {
		panic(err)
	}
	return f
}
