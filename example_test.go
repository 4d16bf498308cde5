package localtable_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/localtable/localtable"
)

// The package documentation's first example, as a program.
func Example() {
	if err := tour(context.Background()); err != nil {
		panic(err)
	}
	// Output: 42
}

// tour is the package documentation's first example, line for line
// (TestDocSnippets checks that the two agree).
func tour(ctx context.Context) error {
	acct, err := localtable.Open(nil) // nil Options: in memory
	if err != nil {
		return err
	}
	defer acct.Close()
	tbl, err := acct.CreateTable(ctx, "People")
	if err != nil {
		return err
	}
	_, err = tbl.Insert(ctx, localtable.Entity{
		PartitionKey: "Smith",
		RowKey:       "John",
		Properties:   localtable.Properties{"Age": localtable.Int32Value(42)},
	})
	if err != nil {
		return err
	}
	e, err := tbl.Get(ctx, "Smith", "John", nil)
	if err != nil {
		return err
	}
	fmt.Println(e.Properties["Age"].Int32()) // 42
	return nil
}

// An error the service would also answer is an *Error: errors.Is matches
// it to the sentinel of its meaning, errors.As reaches its code and
// message, and ErrorCodeOf reads the code through any wrapping.
func ExampleError() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "People")

	_, err := tbl.Get(ctx, "Smith", "John", nil)
	err = fmt.Errorf("loading John: %w", err)
	fmt.Println(errors.Is(err, localtable.ErrEntityNotFound))
	var le *localtable.Error
	if errors.As(err, &le) {
		fmt.Println(le.Code)
	}
	fmt.Println(localtable.ErrorCodeOf(err))

	// A key the service refuses: InvalidInput, with what was wrong.
	_, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: "a/b", RowKey: "1"})
	fmt.Println(errors.Is(err, localtable.ErrInvalidInput))
	fmt.Println(err)

	// An Error made as a literal, as a layer over localtable makes its own,
	// matches the sentinel of its code.
	mine := &localtable.Error{Code: localtable.CodeEntityAlreadyExists, Message: "taken"}
	fmt.Println(errors.Is(mine, localtable.ErrEntityExists))
	// Output:
	// true
	// ResourceNotFound
	// ResourceNotFound
	// true
	// localtable: InvalidInput: PartitionKey "a/b": character U+002F at byte 1 is not allowed in keys (/ \ # ? and control characters U+0000-U+001F, U+007F-U+009F)
	// true
}

// A read-modify-write loop under optimistic concurrency: each attempt
// writes only if the entity still has the ETag it read, and starts over
// when another writer came first. Eight concurrent increments all count.
func ExampleTable_Update_retry() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Counters")
	tbl.Insert(ctx, localtable.Entity{PartitionKey: "c", RowKey: "hits",
		Properties: localtable.Properties{"N": localtable.Int64Value(0)}})

	increment := func() error {
		for {
			e, err := tbl.Get(ctx, "c", "hits", nil)
			if err != nil {
				return err
			}
			e.Properties["N"] = localtable.Int64Value(e.Properties["N"].Int64() + 1)
			_, err = tbl.Update(ctx, e, &localtable.UpdateOptions{IfMatch: e.ETag})
			if !errors.Is(err, localtable.ErrConditionNotMet) {
				return err // nil, or an error that trying again cannot fix
			}
			// Another write came first: read it and try again.
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := increment(); err != nil {
				panic(err)
			}
		}()
	}
	wg.Wait()
	e, _ := tbl.Get(ctx, "c", "hits", nil)
	fmt.Println(e.Properties["N"].Int64())
	// Output: 8
}

func ExampleOpen() {
	ctx := context.Background()
	acct, err := localtable.Open(nil) // in memory
	if err != nil {
		panic(err)
	}
	defer acct.Close()
	tbl, err := acct.CreateTable(ctx, "Orders")
	if err != nil {
		panic(err)
	}
	fmt.Println(tbl.Name())
	// Output: Orders
}

func ExampleAccount_CreateTable() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	acct.CreateTable(ctx, "Orders")
	_, err := acct.CreateTable(ctx, "orders") // names are case-insensitive
	fmt.Println(errors.Is(err, localtable.ErrTableExists), localtable.ErrorCodeOf(err))
	_, err = acct.CreateTable(ctx, "my-table")
	fmt.Println(localtable.ErrorCodeOf(err))
	// Output:
	// true TableAlreadyExists
	// InvalidResourceName
}

func ExampleAccount_Tables() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	for _, name := range []string{"Zebra", "apple", "Mango"} {
		acct.CreateTable(ctx, name)
	}
	for t, err := range acct.Tables(ctx, nil) {
		if err != nil {
			panic(err)
		}
		fmt.Println(t.Name)
	}
	// Output:
	// apple
	// Mango
	// Zebra
}

func ExampleTable_Insert() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "People")
	_, err := tbl.Insert(ctx, localtable.Entity{
		PartitionKey: "Smith",
		RowKey:       "John",
		Properties: localtable.Properties{
			"Age":      localtable.Int32Value(42),
			"Balance":  localtable.Int64Value(1 << 40),
			"Joined":   localtable.DateTimeValue(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)),
			"Verified": localtable.BoolValue(true),
		},
	})
	fmt.Println(err)
	_, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: "Smith", RowKey: "John"})
	fmt.Println(errors.Is(err, localtable.ErrEntityExists))
	// Output:
	// <nil>
	// true
}

func ExampleTable_Get() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "People")
	tbl.Insert(ctx, localtable.Entity{PartitionKey: "Smith", RowKey: "John",
		Properties: localtable.Properties{"Age": localtable.Int32Value(42), "City": localtable.StringValue("Oslo")}})

	e, err := tbl.Get(ctx, "Smith", "John", &localtable.GetOptions{Select: []string{"Age"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.PartitionKey, e.RowKey, e.Properties["Age"].Int32(), len(e.Properties))
	_, err = tbl.Get(ctx, "Smith", "Jane", nil)
	fmt.Println(errors.Is(err, localtable.ErrEntityNotFound), localtable.ErrorCodeOf(err))
	// Output:
	// Smith John 42 1
	// true ResourceNotFound
}

func ExampleTable_Update() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Counters")
	tbl.Insert(ctx, localtable.Entity{PartitionKey: "c", RowKey: "hits",
		Properties: localtable.Properties{"N": localtable.Int64Value(0)}})

	// Optimistic concurrency: read, modify, write back under the ETag read.
	e, _ := tbl.Get(ctx, "c", "hits", nil)
	e.Properties["N"] = localtable.Int64Value(e.Properties["N"].Int64() + 1)
	_, err := tbl.Update(ctx, e, &localtable.UpdateOptions{IfMatch: e.ETag})
	fmt.Println(err)
	// A second write with the now stale ETag fails.
	_, err = tbl.Update(ctx, e, &localtable.UpdateOptions{IfMatch: e.ETag})
	fmt.Println(errors.Is(err, localtable.ErrConditionNotMet), localtable.ErrorCodeOf(err))
	// Output:
	// <nil>
	// true UpdateConditionNotSatisfied
}

func ExampleTable_Upsert() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Series")
	// Insert-or-merge: the first call creates, later calls merge hours in.
	for h := int32(0); h < 3; h++ {
		tbl.Upsert(ctx, localtable.Entity{PartitionKey: "2024-01-01", RowKey: "sensor1",
			Properties: localtable.Properties{fmt.Sprintf("H%02d", h): localtable.Int32Value(h * 10)}}, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})

	}
	e, _ := tbl.Get(ctx, "2024-01-01", "sensor1", nil)
	fmt.Println(len(e.Properties), e.Properties["H02"])
	// Output: 3 20
}

func ExampleTable_Delete() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "People")
	tbl.Insert(ctx, localtable.Entity{PartitionKey: "Smith", RowKey: "John"})
	fmt.Println(tbl.Delete(ctx, "Smith", "John", nil))
	fmt.Println(errors.Is(tbl.Delete(ctx, "Smith", "John", nil), localtable.ErrEntityNotFound))
	// Output:
	// <nil>
	// true
}

func ExampleTable_Transact() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Employees")
	tbl.Insert(ctx, localtable.Entity{PartitionKey: "Sales", RowKey: "email_jones@contoso.com"})

	// An entity and its index entry, written together or not at all.
	_, err := tbl.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "Sales", RowKey: "empid_000223"}},
		{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "Sales", RowKey: "email_jones@contoso.com"}},
	})
	var te *localtable.TransactionError
	if errors.As(err, &te) {
		fmt.Println(te.Index, te.Err.Code)
	}
	_, err = tbl.Get(ctx, "Sales", "empid_000223", nil)
	fmt.Println(errors.Is(err, localtable.ErrEntityNotFound))
	// Output:
	// 1 EntityAlreadyExists
	// true
}

func ExampleGetAs() {
	type Person struct {
		PartitionKey string
		RowKey       string
		Age          int32
		Email        string `table:"EmailAddress"`
	}
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "People")
	e, _ := localtable.Marshal(Person{PartitionKey: "Smith", RowKey: "John", Age: 42, Email: "john@example.com"})
	tbl.Insert(ctx, e)

	p, err := localtable.GetAs[Person](ctx, tbl, "Smith", "John")
	fmt.Println(p.Age, p.Email, err)
	// Output: 42 john@example.com <nil>
}

func ExampleOptions_clock() {
	ctx := context.Background()
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	acct, _ := localtable.Open(&localtable.Options{Clock: func() time.Time { return now }})
	defer acct.Close()
	tbl, _ := acct.CreateTable(ctx, "Audit")
	tag1, _ := tbl.Insert(ctx, localtable.Entity{PartitionKey: "a", RowKey: "1"})
	tag2, _ := tbl.Insert(ctx, localtable.Entity{PartitionKey: "a", RowKey: "2"}) // clock stalled
	fmt.Println(tag1)
	fmt.Println(tag2)
	// Output:
	// W/"datetime'2024-05-06T07%3A08%3A09.0000000Z'"
	// W/"datetime'2024-05-06T07%3A08%3A09.0000001Z'"
}

func ExampleParseGUID() {
	g, err := localtable.ParseGUID("{4185404A-5818-48C3-B9BE-F217DF0DBA6F}")
	fmt.Println(g, err)
	// Output: 4185404a-5818-48c3-b9be-f217df0dba6f <nil>
}

func ExampleValue() {
	vs := []localtable.Value{
		localtable.StringValue("it's"),
		localtable.Int64Value(123456789012),
		localtable.DoubleValue(2),
		localtable.DateTimeValue(time.Date(2013, 8, 2, 17, 37, 43, 9004300, time.UTC)),
		localtable.BinaryValue([]byte("SomeBinary")),
	}
	for _, v := range vs {
		fmt.Println(v.Kind(), v)
	}
	// Output:
	// Edm.String it's
	// Edm.Int64 123456789012
	// Edm.Double 2
	// Edm.DateTime 2013-08-02T17:37:43.0090043Z
	// Edm.Binary U29tZUJpbmFyeQ==
}

// A property that holds numbers of several Edm types, as SDKs write them
// (5 as an Int32, 250.5 as a Double), reads with Number; Double would
// panic on the Int32.
func ExampleValue_Number() {
	sum := 0.0
	for _, v := range []localtable.Value{localtable.Int32Value(5), localtable.DoubleValue(250.5), localtable.Int64Value(1 << 40), localtable.StringValue("5")} {
		if n, ok := v.Number(); ok {
			sum += n
		} else {
			fmt.Println("not a number:", v.Kind())
		}
	}
	fmt.Println(sum)
	// Output:
	// not a number: Edm.String
	// 1.0995116280315e+12
}
