package main

import (
	"bytes"
	"context"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"testing"
)

// want is the program's whole output: the data is fixed, so the costs and
// counts are exact.
const want = `1200 reviews: 200 employees × 6 years, RowKey = CompoundKey(Int64Key(id), year)
employee 123's 2024 review has RowKey 0000000000000000123!2024

employee 123, 2024 (point query):              scanned      1, returned     1  (1 key range)
  rating 3 by manager04
employee 123, every year (range):              scanned      6, returned     6  (1 key range)
  years: 2019 2020 2021 2022 2023 2024
employee 123, by property (partition scan):    scanned   1200, returned     6  (1 key range)

CompoundKey(["R&D/Team #2" "what?" "back\\slash" "tab\there"])
  = R&D.2FTeam"20"232!what>3F!back[5Cslash!tab"09here (a valid key, stored)
  splits back to ["R&D/Team #2" "what?" "back\\slash" "tab\there"]
`

func TestCompoundKey(t *testing.T) {
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

	// The final state: every review under its compound key, in (employee,
	// year) order, and the team entity under its escaped key.
	var prev Review
	n := 0
	for r, err := range localtable.QueryAs[Review](ctx, acct.Table("Reviews"), &localtable.QueryOptions{Filter: filter.PartitionKey().Eq(dept)}) {
		if err != nil {
			t.Fatal(err)
		}
		if r.RowKey != reviewKey(r.EmployeeID, r.Year) {
			t.Fatalf("review %+v under RowKey %q", r, r.RowKey)
		}
		if n > 0 && (r.EmployeeID < prev.EmployeeID || r.EmployeeID == prev.EmployeeID && r.Year <= prev.Year) {
			t.Fatalf("%+v after %+v", r, prev)
		}
		prev = r
		n++
	}
	if n != employees*years {
		t.Fatalf("%d reviews, want %d", n, employees*years)
	}
	k := localtable.CompoundKey("R&D/Team #2", "what?", `back\slash`, "tab\there")
	if _, err := acct.Table("Reviews").Get(ctx, "teams", k, nil); err != nil {
		t.Fatal(err)
	}
}
