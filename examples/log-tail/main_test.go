package main

import (
	"bytes"
	"context"
	"github.com/localtable/localtable"
	"testing"
	"time"
)

// want is the program's whole output: the data is fixed, so the costs and
// counts are exact.
const want = `5000 readings of boiler-1, one a minute until 2026-11-24T11:19:00Z, stored with both key orders
the newest reading's RowKey: 2516067816599999999 (ascending: 0639311159400000000)

newest 10, inverted ticks (limit 10):          scanned     10, returned    10  (1 key range)
  2026-11-24 11:19  76.3 °C
  2026-11-24 11:18  72.6 °C
  2026-11-24 11:17  68.9 °C
  …
newest 10, ascending ticks (read all):         scanned   5000, returned  5000  (1 key range)
  the same ten readings: true

readings 09:19-10:19 (RowKey range):           scanned     60, returned    60  (1 key range)
  newest first: 10:18 … 09:19
`

func TestLogTail(t *testing.T) {
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

	// The final state: both tables hold every reading; the inverted keys
	// run newest first, the ascending ones oldest first.
	for _, table := range []string{"Readings", "ReadingsOldestFirst"} {
		var prev time.Time
		n := 0
		for r, err := range localtable.QueryAs[Reading](ctx, acct.Table(table), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if n > 0 && (table == "Readings") != r.At.Before(prev) {
				t.Fatalf("%s: %v after %v", table, r.At, prev)
			}
			prev = r.At
			n++
		}
		if n != readings {
			t.Fatalf("%s holds %d readings, want %d", table, n, readings)
		}
	}
}
