package main

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/localtable/localtable"
)

// want is the whole output: the costs are exact, since the data is fixed.
const want = `500 employees in partition "Sales": 1000 entities, each pair written by one transaction

by id (point query):                           scanned      1, returned     1  (1 key range)
  found Dara Ahmed <ahmedd223@contoso.com>
by email, through the index (point query):     scanned      1, returned     1  (1 key range)
  found Dara Ahmed <ahmedd223@contoso.com>
by email, without the index (partition scan):  scanned    500, returned     1  (1 key range)
  found Dara Ahmed <ahmedd223@contoso.com>
ids 000100-000199 (range):                     scanned    100, returned   100  (1 key range)
emails starting with 'a' (range):              scanned     90, returned    90  (1 key range)

changed employee 000223's email to dara.ahmed@contoso.com in one transaction of 3 actions
a writer with stale ETags fails at action 0 (UpdateConditionNotSatisfied): nothing of its change is applied

index consistent: 500 employees, each with exactly one email_ entry
`

func TestIntraPartitionIndex(t *testing.T) {
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
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}

	// The final state: the new email is indexed, the old one is gone, and
	// the empid_ copy carries the new address.
	tbl := acct.Table("Employees")
	byID, err := localtable.GetAs[Employee](ctx, tbl, dept, idKey(223))
	if err != nil || byID.Email != "dara.ahmed@contoso.com" {
		t.Fatalf("empid_000223 = %+v, %v", byID, err)
	}
	byEmail, err := localtable.GetAs[Employee](ctx, tbl, dept, emailKey("dara.ahmed@contoso.com"))
	if err != nil || byEmail.EmployeeID != "000223" {
		t.Fatalf("email_dara.ahmed@contoso.com = %+v, %v", byEmail, err)
	}
	if _, err := tbl.Get(ctx, dept, emailKey("ahmedd223@contoso.com"), nil); !errors.Is(err, localtable.ErrEntityNotFound) {
		t.Fatalf("the old email_ copy: %v, want ErrEntityNotFound", err)
	}
	if _, err := tbl.Get(ctx, dept, emailKey("someone.else@contoso.com"), nil); !errors.Is(err, localtable.ErrEntityNotFound) {
		t.Fatalf("the stale writer's email_ copy: %v, want ErrEntityNotFound", err)
	}
	n := 0
	for _, err := range tbl.QueryAll(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2*employees {
		t.Fatalf("%d entities, want %d", n, 2*employees)
	}
}
