package main

import (
	"bytes"
	"context"
	"errors"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"testing"
)

// want is the program's whole output: the data is fixed, so the costs and
// counts are exact.
const want = `2000 login attempts a day for 3 days, stored both ways

one table for all days: expire 2026-11-01
  find the expired attempts:                   scanned   6000, returned  2000  (full scan)
  deleted 2000 entities in 200 transactions (one per partition)

a table per day: expire 2026-11-01
  deleted table Logins20261101: 1 operation, no entity read

what is left:
  Logins20261102: 2000 attempts
  Logins20261103: 2000 attempts
  LoginAttempts: 4000 attempts

user0007's failed logins over the last 2 days: 6 (one query per day table)
`

func TestHighVolumeDelete(t *testing.T) {
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

	// The final state: day 0 is gone from both designs, the other days
	// remain whole.
	if _, err := acct.GetTable(ctx, dayTable(0)); !errors.Is(err, localtable.ErrTableNotFound) {
		t.Fatalf("GetTable(%s) = %v, want ErrTableNotFound", dayTable(0), err)
	}
	for d := 1; d < 3; d++ {
		n, err := count(ctx, acct.Table(dayTable(d)), nil)
		if err != nil || n != users*attemptsByDay {
			t.Fatalf("%s holds %d attempts (%v), want %d", dayTable(d), n, err, users*attemptsByDay)
		}
	}
	old, err := count(ctx, acct.Table("LoginAttempts"), filter.RowKey().Lt("20261102"))
	if err != nil || old != 0 {
		t.Fatalf("LoginAttempts still holds %d attempts of day 0 (%v)", old, err)
	}
	n, err := count(ctx, acct.Table("LoginAttempts"), nil)
	if err != nil || n != 2*users*attemptsByDay {
		t.Fatalf("LoginAttempts holds %d attempts (%v), want %d", n, err, 2*users*attemptsByDay)
	}
}
