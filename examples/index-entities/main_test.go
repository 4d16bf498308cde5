package main

import (
	"bytes"
	"context"
	"github.com/localtable/localtable"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// want is the program's whole output: the data is fixed, so the costs and
// counts are exact.
const want = `8 goroutines hired 400 employees with 8 last names, each hire one transaction with its index entity
(this run: N transactions lost a race on an index entity and were retried)
employee 7 renamed from Sato to Jones: employee and both index entities in one transaction

the Joneses through the index:                 read     51 entities, found    50
the Joneses by filter (partition scan):        scanned    408, returned    50  (1 key range)

index entities checked against the employees: 0 problems
`

func TestIndexEntities(t *testing.T) {
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
	// The retries vary from run to run: compare the rest.
	retried := regexp.MustCompile(`this run: (\d+) transactions`)
	if m := retried.FindStringSubmatch(out.String()); m != nil {
		t.Logf("%s transactions retried", m[1])
	}
	if got := retried.ReplaceAllString(out.String(), "this run: N transactions"); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}

	// The final state: 400 employees, and each last name's index entity
	// lists exactly the employees who have it, once each.
	tbl := acct.Table("Employees")
	byName := map[string][]string{}
	n := 0
	for e, err := range tbl.QueryAll(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.RowKey, "emp_") {
			n++
			ln := e.Properties["LastName"].String()
			byName[ln] = append(byName[ln], e.RowKey)
		}
	}
	if n != hires {
		t.Fatalf("%d employees, want %d", n, hires)
	}
	for _, ln := range lastNames {
		idx, err := tbl.Get(ctx, dept, indexKey(ln), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(slices.Values(ids(idx)))
		if !slices.Equal(got, byName[ln]) {
			t.Errorf("index %s lists %v, want %v", ln, got, byName[ln])
		}
	}
}
