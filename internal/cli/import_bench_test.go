package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/storage/pebble"
)

var importEntities = flag.Int("import.entities", 0, "TestImportThroughput: entities to import (0: skip the test)")

// benchEntity is entity i of the throughput test: 1,000 rows per
// partition, five typed properties.
func benchEntity(i int) localtable.Entity {
	return localtable.Entity{PartitionKey: fmt.Sprintf("p%05d", i/1000), RowKey: fmt.Sprintf("r%07d", i), Properties: localtable.Properties{
		"Name":  localtable.StringValue(fmt.Sprintf("customer %d", i)),
		"Age":   localtable.Int32Value(int32(i % 90)),
		"Big":   localtable.Int64Value(int64(i) * 1_000_003),
		"Score": localtable.DoubleValue(float64(i) / 7),
		"When":  localtable.DateTimeValue(time.Unix(int64(1_700_000_000+i), 0)),
	}}
}

// TestImportThroughput compares importing a JSONL file of
// -import.entities entities into pebble (the command's code path: read,
// decode, batch per partition, Table.Transact; pebble without an fsync
// per commit, synced at each checkpoint and at the end) with the engine's
// raw speed: Table.Transact of the same entities, 100 at a time, in a
// loop, with pebble likewise, timing only the Transact calls.
//
//	go test ./cmd/localtable -run TestImportThroughput -import.entities=1000000 -v
func TestImportThroughput(t *testing.T) {
	n := *importEntities
	if n == 0 {
		t.Skip("set -import.entities")
	}
	ctx := context.Background()
	dir := t.TempDir()

	// The file.
	src := filepath.Join(dir, "in.jsonl")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b []byte
	for i := 0; i < n; i++ {
		e := benchEntity(i)
		b = entityjson.Append(b[:0], &e, nil)
		b = append(b, '\n')
		w.Write(b)
	}
	w.Flush()
	f.Close()
	fi, _ := os.Stat(src)

	// Raw: Transact of 100 in a loop.
	db, err := pebble.Open(filepath.Join(dir, "raw"), &pebble.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := localtable.Open(&localtable.Options{Engine: db})
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := acct.CreateTable(ctx, "Bench")
	var raw time.Duration
	acts := make([]localtable.Action, 0, 100)
	for i := 0; i < n; i += 100 {
		acts = acts[:0]
		for j := i; j < min(i+100, n); j++ {
			acts = append(acts, localtable.Action{Type: localtable.ActionUpsertReplace, Entity: benchEntity(j)})
		}
		start := time.Now()
		if _, err := tb.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
		raw += time.Since(start)
	}
	start := time.Now()
	db.Sync()
	raw += time.Since(start)
	acct.Close()

	// The import.
	var out strings.Builder
	start = time.Now()
	if err := run(ctx, []string{"import", "Bench", src, "--create", "--location", filepath.Join(dir, "imp"), "--progress", "never"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	imp := time.Since(start)
	if !strings.Contains(out.String(), fmt.Sprintf("%d written, 0 skipped, 0 failed", n)) {
		t.Fatalf("import: %s", out.String())
	}
	rawRate, impRate := float64(n)/raw.Seconds(), float64(n)/imp.Seconds()
	t.Logf("%d entities, %.0f MB of JSONL", n, float64(fi.Size())/1e6)
	t.Logf("raw Transact of 100: %v, %.0f entities/s", raw.Round(time.Millisecond), rawRate)
	t.Logf("import:              %v, %.0f entities/s (%.0f%% of raw)", imp.Round(time.Millisecond), impRate, 100*impRate/rawRate)
}
