package main

import (
	"bytes"
	"context"
	"github.com/localtable/localtable"
	"slices"
	"testing"
)

// want is the program's whole output: the data is fixed, so the costs and
// counts are exact.
const want = `one entity of 600 properties: refused, TooManyProperties
split into 3 entities of at most 250 properties, written in one transaction
read resp0001 back (range query):              scanned      3, returned     3  (1 key range)
  600 properties, equal to what was written: true
a rewrite with a bad value in part 2 fails (PropertyValueTooLarge): stored version unchanged: true
after a rewrite with 120 answers:              scanned      1, returned     1  (1 key range)
  120 properties, equal to what was written: true
`

func TestWideEntities(t *testing.T) {
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

	// The final state: resp0001 is one part of 120 answers plus Parts; its
	// old parts _01 and _02 are gone; resp0002 is untouched.
	tbl := acct.Table("SurveyResponses")
	var keys []string
	for e, err := range tbl.QueryAll(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, e.RowKey)
		if e.RowKey == "resp0001_00" && (len(e.Properties) != 121 || e.Properties["Parts"].Int32() != 1) {
			t.Errorf("resp0001_00 has %d properties, Parts=%v", len(e.Properties), e.Properties["Parts"])
		}
	}
	if want := []string{"resp0001_00", "resp0002_00", "resp0002_01"}; !slices.Equal(keys, want) {
		t.Fatalf("RowKeys %v, want %v", keys, want)
	}
	got, _, err := read(ctx, tbl, "survey2026", "resp0002")
	if err != nil || !equal(got, answers(300, 3)) {
		t.Fatalf("resp0002 reads back %d properties (%v)", len(got), err)
	}
}
