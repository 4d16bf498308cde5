// Command quickstart is a tour of localtable: it opens an in-memory account,
// creates a table, writes and reads typed entities, runs a filtered query,
// and shows optimistic concurrency refusing a write made with a stale ETag.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	acct, err := localtable.Open(nil) // nil options: in memory
	if err != nil {
		return err
	}
	defer acct.Close()

	tbl, err := acct.CreateTable(ctx, "Customers")
	if err != nil {
		return err
	}
	fmt.Println("created table", tbl.Name())

	// Write an entity with typed properties.
	tag, err := tbl.Insert(ctx, localtable.Entity{
		PartitionKey: "Smith",
		RowKey:       "John",
		Properties: localtable.Properties{
			"Email":    localtable.StringValue("john@contoso.com"),
			"Age":      localtable.Int32Value(42),
			"Balance":  localtable.Int64Value(12_345_678_901),
			"Rating":   localtable.DoubleValue(4.5),
			"Joined":   localtable.DateTimeValue(time.Date(2019, 3, 1, 9, 30, 0, 0, time.UTC)),
			"Verified": localtable.BoolValue(true),
			"Id":       localtable.GUIDValue(localtable.MustParseGUID("4185404a-5818-48c3-b9be-f217df0dba6f")),
			"Avatar":   localtable.BinaryValue([]byte{0x89, 'P', 'N', 'G'}),
		},
	})
	if err != nil {
		return err
	}
	fmt.Println("inserted Smith/John, ETag", tag)

	// Read it back: every value keeps its Edm type.
	e, err := tbl.Get(ctx, "Smith", "John", nil)
	if err != nil {
		return err
	}
	for _, name := range []string{"Email", "Age", "Balance", "Rating", "Joined", "Verified", "Id", "Avatar"} {
		v := e.Properties[name]
		fmt.Printf("  %-8s %-12s %s\n", name, v.Kind(), v)
	}

	// A filtered query: the Smiths over 40. PartitionKey eq reads one
	// partition; Age is checked on each entity read there.
	for _, e := range []localtable.Entity{
		{PartitionKey: "Smith", RowKey: "Jane", Properties: localtable.Properties{"Age": localtable.Int32Value(37)}},
		{PartitionKey: "Smith", RowKey: "Mary", Properties: localtable.Properties{"Age": localtable.Int32Value(58)}},
		{PartitionKey: "Jones", RowKey: "Ann", Properties: localtable.Properties{"Age": localtable.Int32Value(61)}},
	} {
		if _, err := tbl.Insert(ctx, e); err != nil {
			return err
		}
	}
	f := filter.And(filter.PartitionKey().Eq("Smith"), filter.Prop("Age").Gt(40))
	fmt.Println("query:", f)
	var over40 []string
	for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: f, Select: []string{"Age"}}) {
		if err != nil {
			return err
		}
		fmt.Printf("  %s/%s  Age %s\n", e.PartitionKey, e.RowKey, e.Properties["Age"])
		over40 = append(over40, e.RowKey)
	}
	if len(over40) != 2 || over40[0] != "John" || over40[1] != "Mary" {
		return fmt.Errorf("the Smiths over 40 are %v, want [John Mary]", over40)
	}

	// Optimistic concurrency: two writers read the same version...
	alice, _ := tbl.Get(ctx, "Smith", "John", nil)
	bob, _ := tbl.Get(ctx, "Smith", "John", nil)

	alice.Properties["Balance"] = localtable.Int64Value(alice.Properties["Balance"].Int64() + 100)
	if _, err := tbl.Update(ctx, alice, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: alice.ETag}); err != nil {
		return err
	}
	fmt.Println("alice's update succeeded")

	// ...and the second write, made with the stale ETag, is refused.
	bob.Properties["Balance"] = localtable.Int64Value(bob.Properties["Balance"].Int64() - 50)
	_, err = tbl.Update(ctx, bob, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: bob.ETag})
	switch {
	case errors.Is(err, localtable.ErrConditionNotMet):
		fmt.Println("bob's update refused:", localtable.ErrorCodeOf(err), "(re-read and retry)")
	case err != nil:
		return err
	default:
		return errors.New("bob's stale write was accepted")
	}

	// Rules of the service are enforced, with its error codes.
	_, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: "a/b", RowKey: "x"})
	fmt.Println("key with '/':", localtable.ErrorCodeOf(err))

	final, _ := tbl.Get(ctx, "Smith", "John", nil)
	fmt.Println("final balance:", final.Properties["Balance"])
	return nil
}
