package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/localtable/localtable/storage/pebble"
)

// runOut runs the command in-process and returns its standard output,
// failing the test on an error.
func runOut(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("%v: %v (%s)", args, err, errb.String())
	}
	return out.String()
}

func TestIndexCommandOffline(t *testing.T) {
	dir := t.TempDir()
	loc := []string{"--location", dir}
	runOut(t, append([]string{"tables", "create", "Orders"}, loc...)...)
	for i := range 40 {
		runOut(t, append([]string{"put", "Orders", "p", fmt.Sprint(i), fmt.Sprintf("Total@Edm.Double=%d.5", i), "Status=open"}, loc...)...)
	}
	if got := runOut(t, append([]string{"index", "create", "Orders", "ByTotal", "Total"}, loc...)...); !strings.Contains(got, "created index ByTotal on Orders (Total)") {
		t.Fatalf("create: %q", got)
	}
	runOut(t, append([]string{"index", "create", "Orders", "ByStatus", "Status", "Total"}, loc...)...)
	got := runOut(t, append([]string{"index", "list", "Orders"}, loc...)...)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 || strings.Fields(lines[1])[0] != "ByTotal" || strings.Join(strings.Fields(lines[2]), " ") != "ByStatus Status,Total ready no" {
		t.Fatalf("list:\n%s", got)
	}
	// The query uses it.
	if got := runOut(t, append([]string{"query", "Orders", "--filter", "Total gt 38.0", "--explain"}, loc...)...); !strings.Contains(got, "read through index ByTotal") || !strings.Contains(got, "returned 2,") {
		t.Fatalf("query --explain does not name the index:\n%s", got)
	}
	// A second create of the same name fails, naming it.
	err := run(context.Background(), append([]string{"index", "create", "Orders", "ByTotal", "Status"}, loc...), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "ByTotal") {
		t.Fatalf("duplicate create: %v", err)
	}
	runOut(t, append([]string{"index", "drop", "Orders", "ByTotal"}, loc...)...)
	if got := runOut(t, append([]string{"index", "list", "Orders"}, loc...)...); strings.Contains(got, "ByTotal") {
		t.Fatalf("after drop:\n%s", got)
	}
	err = run(context.Background(), append([]string{"index", "drop", "Orders", "ByTotal"}, loc...), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "IndexNotFound") {
		t.Fatalf("drop of a dropped index: %v", err)
	}
	for _, bad := range [][]string{{"index", "list"}, {"index", "frob", "Orders"}, {"index", "create", "Orders", "X"}, {"index", "drop", "Orders"}} {
		if err := run(context.Background(), append(bad, loc...), &bytes.Buffer{}, &bytes.Buffer{}); exitCode(err) != 2 {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
}

// TestIndexErrorsSameLocalAndRemote: index drop, repair and create fail
// with the same words on a data directory and on a server serving it: the
// Go API's code (IndexNotFound, a localtable code; InvalidInput) and
// message, which the server answers and the command reads back.
func TestIndexErrorsSameLocalAndRemote(t *testing.T) {
	dir := t.TempDir()
	runOut(t, "tables", "create", "Orders", "--location", dir)
	runOut(t, "index", "create", "Orders", "ByTotal", "Total", "--location", dir)
	cases := [][]string{
		{"index", "drop", "Orders", "Nope"},
		{"index", "repair", "Orders", "Nope"},
		{"index", "create", "Orders", "Totals", "Total"},  // the properties of ByTotal
		{"index", "create", "Orders", "bytotal", "Other"}, // the name of ByTotal, in another case
	}
	local := make([]error, len(cases))
	for i, c := range cases {
		local[i] = run(context.Background(), append(c, "--location", dir), io.Discard, io.Discard)
		if local[i] == nil {
			t.Fatalf("%v on a data directory: no error", c)
		}
	}
	if !strings.Contains(local[0].Error(), `IndexNotFound: table "Orders" has no index "Nope"`) || !strings.Contains(local[2].Error(), `"ByTotal"`) {
		t.Fatalf("local errors: %v", local)
	}
	stop, cs := serveUntilReady(t, "--location", dir)
	defer stop()
	for i, c := range cases {
		err := run(context.Background(), append(c, "--connection-string", cs), io.Discard, io.Discard)
		if err == nil || err.Error() != local[i].Error() || exitCode(err) != exitCode(local[i]) {
			t.Errorf("%v on a server: %v (exit %d); want as on a data directory: %v (exit %d)", c, err, exitCode(err), local[i], exitCode(local[i]))
		}
	}
}

// serveUntilReady runs serve in-process with args until it prints its
// ready line, and returns a function that stops it and returns its error,
// and its connection string.
func serveUntilReady(t *testing.T, args ...string) (func() error, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "error"}, args...), pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	cs := ""
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "DefaultEndpointsProtocol=") {
			cs = sc.Text()
		}
		if strings.HasPrefix(sc.Text(), "localtable: ready (") {
			go io.Copy(io.Discard, pr)
			return func() error { cancel(); return <-done }, cs
		}
	}
	cancel()
	err := <-done
	t.Fatalf("serve %v: no ready line: %v", args, err)
	return nil, ""
}

func TestServeIndexFlag(t *testing.T) {
	dir := t.TempDir()
	// A table that does not exist yet: serve creates it and its index.
	stop, _ := serveUntilReady(t, "--location", dir, "--index", "Orders:Total", "--index", "Orders:Status,Total")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	want := "NAME          PROPERTIES    STATE  COVERING\nTotal         Total         ready  no\nStatus_Total  Status,Total  ready  no\n"
	if got := runOut(t, "index", "list", "Orders", "--location", dir); got != want {
		t.Fatalf("after serve --index:\n%s\nwant\n%s", got, want)
	}
	// The same definitions again, one under another name: nothing changes.
	runOut(t, "index", "drop", "Orders", "Total", "--location", dir)
	runOut(t, "index", "create", "Orders", "ByTotal", "Total", "--location", dir)
	stop, _ = serveUntilReady(t, "--location", dir, "--index", "Orders:Total", "--index", "Orders:Status,Total")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := runOut(t, "index", "list", "Orders", "--location", dir); strings.Count(got, "\n") != 3 || !strings.Contains(got, "ByTotal") {
		t.Fatalf("after the same --index again:\n%s", got)
	}
	// A name the table uses for other properties: serve refuses to start.
	runOut(t, "tables", "create", "Items", "--location", dir)
	runOut(t, "index", "create", "Items", "Status", "Total", "--location", dir)
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--log-level", "error", "--location", dir, "--index", "Items:Status"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--index Items:Status: account devstoreaccount1: table Items already has an index Status on Total") {
		t.Fatalf("a conflicting --index: %v", err)
	}
	// Refused as flags, before the table they name is created.
	for _, bad := range []string{"Orders", "Orders:", ":Total", "ab:Total", "Leftover:PartitionKey", "Leftover:A,B,C,D,E", "Leftover:A,A"} {
		if err := run(context.Background(), []string{"serve", "--location", dir, "--index", bad}, io.Discard, io.Discard); exitCode(err) != 2 {
			t.Errorf("--index %q: %v, want a usage error", bad, err)
		}
	}
	if got := runOut(t, "tables", "--location", dir); strings.Contains(got, "Leftover") {
		t.Errorf("a refused --index created its table:\n%s", got)
	}
}

// A backup archive and a checkpoint are copies of the account's keys: the
// restored account declares the same indexes, ready, and its queries read
// them.
func TestIndexesSurviveBackupRestoreAndCheckpoint(t *testing.T) {
	dir := t.TempDir()
	loc := []string{"--location", dir}
	runOut(t, append([]string{"tables", "create", "Orders"}, loc...)...)
	for i := range 40 {
		runOut(t, append([]string{"put", "Orders", "p", fmt.Sprint(i), fmt.Sprintf("Total@Edm.Double=%d.5", i)}, loc...)...)
	}
	runOut(t, append([]string{"index", "create", "Orders", "ByTotal", "Total"}, loc...)...)
	archive := t.TempDir() + "/b.ltbk"
	runOut(t, append([]string{"backup", "--out", archive}, loc...)...)
	restored := t.TempDir()
	runOut(t, "restore", archive, "--location", restored)
	checkpoint := t.TempDir() + "/cp"
	runOut(t, append([]string{"backup", "--checkpoint", checkpoint}, loc...)...)
	for name, d := range map[string]string{"restore": restored, "checkpoint": checkpoint} {
		got := runOut(t, "index", "list", "Orders", "--location", d)
		if !strings.Contains(strings.Join(strings.Fields(got), " "), "ByTotal Total ready") {
			t.Errorf("%s: index list:\n%s", name, got)
		}
		got = runOut(t, "query", "Orders", "--filter", "Total gt 38.0", "--explain", "--location", d)
		if !strings.Contains(got, "read through index ByTotal") || !strings.Contains(got, "returned 2,") {
			t.Errorf("%s: query:\n%s", name, got)
		}
	}
}

// index list, create and drop against a running server, through its
// comp=indexes operations.
func TestIndexCommandRemote(t *testing.T) {
	stop, cs := serveUntilReady(t, "--index", "Orders:Total")
	defer stop()
	srv := []string{"--connection-string", cs}
	got := runOut(t, append([]string{"index", "list", "Orders"}, srv...)...)
	if strings.Join(strings.Fields(got), " ") != "NAME PROPERTIES STATE COVERING Total Total ready yes" {
		t.Fatalf("list of serve --index:\n%s", got)
	}
	runOut(t, append([]string{"index", "create", "Orders", "ByStatus", "Status", "Total"}, srv...)...)
	got = runOut(t, append([]string{"index", "list", "Orders"}, srv...)...)
	if !strings.Contains(strings.Join(strings.Fields(got), " "), "ByStatus Status,Total ready yes") {
		t.Fatalf("list after create:\n%s", got)
	}
	err := run(context.Background(), append([]string{"index", "create", "Orders", "ByStatus", "Status"}, srv...), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "index ByStatus of Orders") || !strings.Contains(err.Error(), "already has an index") {
		t.Fatalf("a second create of ByStatus: %v", err)
	}
	if got := runOut(t, append([]string{"index", "repair", "Orders", "ByStatus"}, srv...)...); got != "rebuilt index ByStatus of Orders\n" {
		t.Fatalf("repair through the server: %q", got)
	}
	runOut(t, append([]string{"index", "drop", "Orders", "Total"}, srv...)...)
	err = run(context.Background(), append([]string{"index", "drop", "Orders", "Total"}, srv...), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `IndexNotFound: table "Orders" has no index "Total"`) {
		t.Fatalf("a drop of a dropped index: %v", err)
	}
	if got := runOut(t, append([]string{"index", "list", "Orders"}, srv...)...); strings.Join(strings.Fields(got), " ") != "NAME PROPERTIES STATE COVERING ByStatus Status,Total ready yes" {
		t.Fatalf("list after drop:\n%s", got)
	}
	if err := run(context.Background(), append([]string{"index", "list", "Nope"}, srv...), io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "TableNotFound") {
		t.Fatalf("list of a missing table: %v", err)
	}
}

// TestQueryExplainSameLocalAndRemote: query --explain on a server prints
// what it prints on the data directory the server serves: the entities
// scanned and returned, and the index read (or none), from the server's
// X-Localtable-Scanned and X-Localtable-Index headers.
func TestQueryExplainSameLocalAndRemote(t *testing.T) {
	dir := t.TempDir()
	runOut(t, "tables", "create", "Orders", "--location", dir)
	for i := range 40 {
		runOut(t, "put", "Orders", "p", fmt.Sprintf("%02d", i), fmt.Sprintf("Total@Edm.Double=%d.5", i), "--location", dir)
	}
	runOut(t, "index", "create", "Orders", "ByTotal", "Total", "--location", dir)
	filters := []string{"Total gt 36.0", "PartitionKey eq 'p' and RowKey ge '35'"}
	local := map[string]string{}
	for _, f := range filters {
		local[f] = runOut(t, "query", "Orders", "--filter", f, "--explain", "-o", "jsonl", "--location", dir)
	}
	if !strings.Contains(local[filters[0]], "scanned 8, returned 4, in 1 page(s)\nread through index ByTotal\n") || strings.Contains(local[filters[1]], "read through") {
		t.Fatalf("on the data directory:\n%s\n%s", local[filters[0]], local[filters[1]])
	}
	stop, cs := serveUntilReady(t, "--location", dir)
	defer stop()
	for i, f := range filters {
		got := runOut(t, "query", "Orders", "--filter", f, "--explain", "-o", "jsonl", "--connection-string", cs)
		// The entities' lines hold their ETags and Timestamps, the same
		// from the same data directory. The plan differs: a server tells
		// only the index it read, not the planner's reasons.
		gotPlan, gotRest := cutPlan(got)
		_, wantRest := cutPlan(local[f])
		if gotRest != wantRest {
			t.Errorf("query --explain --filter %q on the server:\n%s\nwant as on the data directory:\n%s", f, got, local[f])
		}
		if usesIndex := strings.Contains(gotPlan, "read through index ByTotal"); usesIndex != (i == 0) || strings.Contains(gotPlan, "full scan") {
			t.Errorf("query --explain --filter %q on the server: its plan does not say the index it read, or says a full scan:\n%s", f, got)
		}
	}
}

// cutPlan splits query --explain's output into its plan (the "plan:" line
// and the indented lines after it) and the rest.
func cutPlan(out string) (plan, rest string) {
	lines := strings.SplitAfter(out, "\n")
	i := 0
	if len(lines) > 0 && strings.HasPrefix(lines[0], "plan: ") {
		for i = 1; i < len(lines) && strings.HasPrefix(lines[i], "      "); i++ {
		}
	}
	return strings.Join(lines[:i], ""), strings.Join(lines[i:], "")
}

// serve --index makes the server's full-table filter read the index: with
// a scan limit of 5 entities a page, the filter on Total pages through the
// table 5 entities at a time without it, and answers in one page with it.
func TestServeIndexServesTheFilter(t *testing.T) {
	var lines strings.Builder
	for i := range 100 {
		fmt.Fprintf(&lines, `{"PartitionKey":"p","RowKey":"%03d","Total":%d.5}`+"\n", i, i)
	}
	file := t.TempDir() + "/orders.jsonl"
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	pages := map[bool]string{}
	for _, indexed := range []bool{false, true} {
		args := []string{"--query-scan-limit", "5"}
		if indexed {
			args = append(args, "--index", "Orders:Total")
		}
		stop, cs := serveUntilReady(t, args...)
		runOut(t, "import", "Orders", file, "--create", "--connection-string", cs)
		got := runOut(t, "query", "Orders", "--filter", "Total eq 97.5", "--explain", "--connection-string", cs)
		if !strings.Contains(got, "(1 entity)") {
			t.Errorf("indexed %v: query:\n%s", indexed, got)
		}
		pages[indexed] = got[strings.LastIndex(got, "returned"):]
		t.Logf("indexed %v: %s", indexed, pages[indexed])
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(pages[true], "in 1 page(s)") || strings.Contains(pages[false], "in 1 page(s)") {
		t.Fatalf("pages without the index: %q; with it: %q", pages[false], pages[true])
	}
}

// TestServeInUseSaysWhatServeCan: serve on a data directory a server
// holds says what applies to serve (stop the other, serve another
// --location), not the data commands' --endpoint or --connection-string.
func TestServeInUseSaysWhatServeCan(t *testing.T) {
	dir := t.TempDir()
	stop, _ := serveUntilReady(t, "--location", dir)
	defer stop()
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--location", dir}, io.Discard, io.Discard)
	if err == nil || !errors.Is(err, pebble.ErrInUse) || strings.Contains(err.Error(), "--endpoint") || strings.Contains(err.Error(), "--connection-string") || !strings.Contains(err.Error(), "serve another --location") {
		t.Fatalf("serve on a directory in use: %v", err)
	}
	err = run(context.Background(), []string{"tables", "--location", dir}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "then use --endpoint or --connection-string") {
		t.Fatalf("tables on a directory in use: %v", err)
	}
}
