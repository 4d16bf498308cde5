// Command wide-entities shows the wide entities pattern: a logical record
// with more properties than one entity may hold (252 custom properties) is
// split across several entities of one partition, written in one entity
// group transaction and read back with one range query.
//
// The problem: a survey response holds 600 answers, Q001 … Q600. As one
// entity it is refused with TooManyProperties.
//
// The pattern: the response is stored as entities "<id>_00", "<id>_01", …
// each with at most 250 of the answers; the first also records how many
// parts there are. They share a PartitionKey, so one transaction writes
// them all or none, and their RowKeys are adjacent, so one range query
// reads exactly them.
//
// The trade-offs the design guide names: a record split this way is
// written and read as a unit only by the application; the parts together
// must stay within the 100 actions and 4 MiB of a transaction; filters on
// a property find only the part that holds it.
//
// What the program proves: the single entity is refused; the split record
// is written atomically (a failing part leaves nothing behind), reads back
// equal through one range query that scans exactly its parts, and a
// rewrite that shrinks it removes the parts it no longer needs in the same
// transaction.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"slices"

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

// perPart is the number of record properties an entity holds; one more
// ("Parts") is on the first.
const perPart = 250

func partKey(id string, i int) string { return fmt.Sprintf("%s_%02d", id, i) }

// partRange selects every part of record id.
func partRange(pk, id string) *filter.Filter {
	return filter.And(filter.PartitionKey().Eq(pk), filter.RowKey().Ge(id+"_"), filter.RowKey().Lt(id+"`"))
}

// split returns the entities that hold props, in name order.
func split(pk, id string, props localtable.Properties) []localtable.Entity {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range props {
			if !yield(n) {
				return
			}
		}
	})
	var parts []localtable.Entity
	for i := 0; i < len(names) || i == 0; i += perPart {
		e := localtable.Entity{PartitionKey: pk, RowKey: partKey(id, len(parts)), Properties: localtable.Properties{}}
		for _, n := range names[i:min(i+perPart, len(names))] {
			e.Properties[n] = props[n]
		}
		parts = append(parts, e)
	}
	parts[0].Properties["Parts"] = localtable.Int32Value(int32(len(parts)))
	return parts
}

// write stores the record in one transaction: it replaces the parts it
// has and deletes parts a previous, larger version had.
func write(ctx context.Context, tbl *localtable.Table, pk, id string, props localtable.Properties) error {
	parts := split(pk, id, props)
	old := 0
	if e, err := tbl.Get(ctx, pk, partKey(id, 0), &localtable.GetOptions{Select: []string{"Parts"}}); err == nil {
		old = int(e.Properties["Parts"].Int32())
	} else if !errors.Is(err, localtable.ErrEntityNotFound) {
		return err
	}
	var acts []localtable.Action
	for _, p := range parts {
		acts = append(acts, localtable.Action{Type: localtable.ActionUpsertReplace, Entity: p})
	}
	for i := len(parts); i < old; i++ {
		acts = append(acts, localtable.Action{Type: localtable.ActionDelete,
			Entity: localtable.Entity{PartitionKey: pk, RowKey: partKey(id, i)}, IfMatch: localtable.ETagAny})
	}
	_, err := tbl.Transact(ctx, acts)
	return err
}

// read reassembles the record with one range query.
func read(ctx context.Context, tbl *localtable.Table, pk, id string) (localtable.Properties, localtable.QueryStats, error) {
	r, err := show.Query(ctx, tbl, &localtable.QueryOptions{Filter: partRange(pk, id)})
	if err != nil {
		return nil, r.Stats, err
	}
	props := localtable.Properties{}
	for _, e := range r.Entities {
		for n, v := range e.Properties {
			if n != "Parts" {
				props[n] = v
			}
		}
	}
	return props, r.Stats, nil
}

func answers(n int, seed int) localtable.Properties {
	p := localtable.Properties{}
	for q := 1; q <= n; q++ {
		p[fmt.Sprintf("Q%03d", q)] = localtable.Int32Value(int32((q*seed)%5 + 1))
	}
	return p
}

func run(ctx context.Context, acct *localtable.Account, w io.Writer) error {
	tbl, err := acct.CreateTable(ctx, "SurveyResponses")
	if err != nil {
		return err
	}
	const pk = "survey2026"
	resp := answers(600, 7)

	// One entity cannot hold it.
	_, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: pk, RowKey: "resp0001", Properties: resp})
	var le *localtable.Error
	if !errors.As(err, &le) || !errors.Is(err, localtable.ErrTooManyProperties) {
		return fmt.Errorf("a 600-property entity should be refused with TooManyProperties, got %v", err)
	}
	fmt.Fprintf(w, "one entity of 600 properties: refused, %s\n", le.Code)

	// Split, in one transaction.
	if err := write(ctx, tbl, pk, "resp0001", resp); err != nil {
		return err
	}
	fmt.Fprintf(w, "split into %d entities of at most %d properties, written in one transaction\n", len(split(pk, "resp0001", resp)), perPart)
	if err := write(ctx, tbl, pk, "resp0002", answers(300, 3)); err != nil {
		return err
	}

	got, st, err := read(ctx, tbl, pk, "resp0001")
	if err != nil {
		return err
	}
	show.Cost(w, "read resp0001 back (range query)", partRange(pk, "resp0001"), st)
	fmt.Fprintf(w, "  %d properties, equal to what was written: %v\n", len(got), equal(got, resp))

	// A transaction fails whole: a bad property in the last part leaves
	// the stored version untouched.
	bad := answers(600, 11)
	bad["Q600"] = localtable.StringValue(string(make([]rune, 40000))) // over 64 KiB
	err = write(ctx, tbl, pk, "resp0001", bad)
	var te *localtable.TransactionError
	if !errors.As(err, &te) {
		return fmt.Errorf("an oversized value should fail the transaction, got %v", err)
	}
	got, _, err = read(ctx, tbl, pk, "resp0001")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "a rewrite with a bad value in part %d fails (%s): stored version unchanged: %v\n", te.Index, te.Err.Code, equal(got, resp))

	// A smaller version removes the parts it no longer needs.
	smaller := answers(120, 5)
	if err := write(ctx, tbl, pk, "resp0001", smaller); err != nil {
		return err
	}
	got, st, err = read(ctx, tbl, pk, "resp0001")
	if err != nil {
		return err
	}
	show.Cost(w, "after a rewrite with 120 answers", partRange(pk, "resp0001"), st)
	fmt.Fprintf(w, "  %d properties, equal to what was written: %v\n", len(got), equal(got, smaller))
	return nil
}

func equal(a, b localtable.Properties) bool {
	if len(a) != len(b) {
		return false
	}
	for n, v := range a {
		if !v.Equal(b[n]) {
			return false
		}
	}
	return true
}
