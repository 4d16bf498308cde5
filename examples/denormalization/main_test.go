package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/localtable/localtable"
	"testing"
)

// want is the program's whole output: the data is fixed, so the costs and
// counts are exact.
const want = `department Sales with 250 employees, stored normalized and denormalized

normalized:   2 point queries: Employee 42, manager Mia Jensen (+1 425 555 0100)
denormalized: 1 point query:   Employee 42, manager Mia Jensen (+1 425 555 0100)

new manager, normalized:   1 update
new manager, denormalized: 250 updates in 3 transactions
copies still naming the old manager: 0
`

func TestDenormalization(t *testing.T) {
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

	// The final state: the department names the new manager, and every
	// employee copy does too, with its own fields kept by the merge.
	dep, err := localtable.GetAs[Department](ctx, acct.Table("Directory"), "department", dept)
	if err != nil || dep.ManagerName != "Noah Berg" {
		t.Fatalf("department = %+v, %v", dep, err)
	}
	for i := 1; i <= staff; i++ {
		e, err := localtable.GetAs[Employee](ctx, acct.Table("DirectoryDenormalized"), dept, empID(i))
		if err != nil {
			t.Fatal(err)
		}
		if e.ManagerName != "Noah Berg" || e.ManagerPhone != "+1 425 555 0199" ||
			e.Name != fmt.Sprintf("Employee %d", i) || e.Phone != fmt.Sprintf("+1 425 555 %04d", 1000+i) {
			t.Fatalf("employee %d = %+v", i, e)
		}
	}
}
