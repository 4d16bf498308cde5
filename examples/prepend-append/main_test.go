package main

import (
	"bytes"
	"context"
	"github.com/localtable/localtable"
	"testing"
)

// want is the program's whole output: the data is fixed, so the costs and
// counts are exact.
const want = `EventsByTime:   3600 events over  3 partitions; each second, the busiest partition took 100% of the writes (mean)
EventsByBucket: 3600 events over 16 partitions; each second, the busiest partition took  17% of the writes (mean)

the newest 10 events:
  time-ordered keys: 1 partition query, 1200 entities scanned
  hashed keys:       16 partition queries, 1201 entities scanned, merged
  same events: true (003590 … 003599)
`

func TestPrependAppend(t *testing.T) {
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

	// The final state: both tables hold every event, the time-ordered one
	// in 3 partitions, the hashed one in 16.
	for table, parts := range map[string]int{"EventsByTime": 3, "EventsByBucket": buckets} {
		pks := map[string]bool{}
		n := 0
		for e, err := range acct.Table(table).QueryAll(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			pks[e.PartitionKey] = true
			n++
		}
		if n != events || len(pks) != parts {
			t.Errorf("%s: %d events in %d partitions, want %d in %d", table, n, len(pks), events, parts)
		}
	}
}
