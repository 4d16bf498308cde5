package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/localtable/localtable"
	"path/filepath"
	"testing"
)

// want is the program's whole output: the data is fixed, so the costs and
// counts are exact.
const want = `3600 log lines from 20 servers over 3 hours, stored three ways

writes of 10:00-11:00: PK=server spread over 20 partitions (at most 60 each); PK=hour all 1200 into 1 partition

errors 10:00-11:00, PK=server:                 scanned   3600, returned    71  (full scan)
errors 10:00-11:00, PK=hour:                   scanned   1200, returned    71  (1 key range)
errors 10:00-11:00, hourly files:              read   1200 lines, matched    71  (1 file)

storage: 708832 bytes as entities (EntitySize), 228416 bytes as log files
`

func TestLogData(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	var out bytes.Buffer
	dir := t.TempDir()
	if err := run(ctx, acct, dir, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}

	// The final state: three hourly files of 1,200 lines each, and both
	// tables holding every line.
	for h := 9; h <= 11; h++ {
		read, _, err := grepFile(filepath.Join(dir, fmt.Sprintf("20261124%02d.log", h)), "")
		if err != nil || read != lines/3 {
			t.Errorf("hour %d: %d lines (%v), want %d", h, read, err, lines/3)
		}
	}
	for _, table := range []string{"LogByServer", "LogByHour"} {
		n := 0
		for _, err := range acct.Table(table).QueryAll(ctx, &localtable.QueryOptions{Select: []string{}}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != lines {
			t.Errorf("%s holds %d lines, want %d", table, n, lines)
		}
	}
}
