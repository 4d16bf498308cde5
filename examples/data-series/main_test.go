package main

import (
	"bytes"
	"context"
	"github.com/localtable/localtable"
	"testing"
)

// want is the program's whole output: the data is fixed, so the costs and
// counts are exact.
const want = `24 writers merged one hour each into the day's entity, concurrently and without ETags
the day as one entity (point query):           scanned      1, returned     1  (1 key range)
the day as 24 entities (range query):          scanned     24, returned    24  (1 key range)
total views: 5112 (series entity), 5112 (entities per hour); the series has 24 hourly properties

8 goroutines added 1 to H09 25 times each under ETags: H09 went from 183 to 383 (lost increments: 0)
`

func TestDataSeries(t *testing.T) {
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

	// The final state: one entity holding all 24 hours, H09 with every
	// increment.
	e, err := acct.Table("PageViews").Get(ctx, site, day, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Properties) != 24 {
		t.Fatalf("the series entity has %d properties, want 24: %v", len(e.Properties), e.Properties)
	}
	for h := 0; h < 24; h++ {
		want := views(h)
		if h == 9 {
			want += 8 * 25
		}
		if got := e.Properties[hour(h)]; got.Kind() != localtable.KindInt32 || got.Int32() != want {
			t.Errorf("%s = %v, want Int32 %d", hour(h), got, want)
		}
	}
}
