package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage/pebble"
)

// result is what a run of the binary printed and how it exited.
type result struct {
	stdout, stderr string
	code           int
}

// runBin runs the built binary to completion with extra environment
// variables and standard input.
func runBin(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Env = append(os.Environ(), "LOCALTABLE_CONNECTION_STRING=", "AZURE_STORAGE_CONNECTION_STRING=")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// ok runs the binary and fails the test unless it exits 0.
func ok(t *testing.T, env []string, stdin string, args ...string) string {
	t.Helper()
	r := runBin(t, env, stdin, args...)
	if r.code != 0 {
		t.Fatalf("localtable %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func TestBinaryHelpAndVersion(t *testing.T) {
	for name := range commands {
		r := runBin(t, nil, "", name, "--help")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: localtable "+name) || r.stderr != "" {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", name, r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "\nExamples:\n  localtable") {
			t.Errorf("%s --help has no examples:\n%s", name, r.stdout)
		}
		if h := runBin(t, nil, "", name, "-h"); h.code != 0 || h.stdout != r.stdout {
			t.Errorf("%s -h differs from --help", name)
		}
	}
	r := runBin(t, nil, "", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "  import ") || !strings.Contains(r.stdout, "  backup ") {
		t.Errorf("--help: %d %q", r.code, r.stdout)
	}
	if h := runBin(t, nil, "", "help", "query"); h.code != 0 || !strings.HasPrefix(h.stdout, "Usage: localtable query") {
		t.Errorf("help query: %d %q", h.code, h.stdout)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := runBin(t, nil, "", args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "localtable ") || !strings.Contains(r.stdout, "go1.") {
			t.Errorf("%v: %d %q", args, r.code, r.stdout)
		}
	}
}

// An error is printed once, on standard error, and the exit status says
// whether the command line (2) or the work (1) failed.
func TestBinaryErrorsPrintOnce(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"query", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"query"}, 2, "too few arguments"},
		{[]string{"query", "T1", "T2", "--location", dir}, 2, "too many arguments"},
		{[]string{"query", "Orders"}, 2, "no data: give --location DIR"},
		{[]string{"query", "Orders", "--location", dir}, 1, "no data in " + filepath.Join(dir, "devstoreaccount1")},
		{[]string{"query", "Orders", "--location", dir, "--endpoint", "http://x/y"}, 2, "exclude each other"},
		{[]string{"--log-level", "loud"}, 2, "--log-level"},
		{[]string{"import", "Orders", "nofile.jsonl", "--location", dir}, 1, "nofile.jsonl"},
	} {
		r := runBin(t, nil, "", c.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != c.code || len(lines) != 1 || !strings.HasPrefix(lines[0], "localtable: ") || !strings.Contains(lines[0], c.want) || r.stdout != "" {
			t.Errorf("%v: exit %d (want %d), stderr %q (want one line with %q), stdout %q", c.args, r.code, c.code, r.stderr, c.want, r.stdout)
		}
	}
}

// serveBin starts the binary's server in memory with extra flags.
func serveBin(t *testing.T, args ...string) *process {
	t.Helper()
	return start(t, buildBinary(t), append([]string{"--addr", "127.0.0.1:0", "--log-level", "warn"}, args...)...)
}

// The data commands behave the same on a data directory, on a server
// named by --endpoint, and on one named by LOCALTABLE_CONNECTION_STRING.
func TestBinaryDataCommands(t *testing.T) {
	p := serveBin(t)
	targets := map[string]struct {
		env  []string
		args []string
	}{
		"offline":    {nil, []string{"--location", t.TempDir()}},
		"endpoint":   {nil, []string{"--endpoint", p.endpoint}},
		"env string": {[]string{"LOCALTABLE_CONNECTION_STRING=" + p.connString}, nil},
	}
	for name, tg := range targets {
		t.Run(name, func(t *testing.T) {
			run := func(args ...string) string { return ok(t, tg.env, "", append(args, tg.args...)...) }
			table := "Orders" + strings.ReplaceAll(name, " ", "")
			run("tables", "create", table, "Spare")
			if got := run("tables"); !strings.Contains(got, table+"\n") || !strings.Contains(got, "Spare\n") {
				t.Fatalf("tables: %q", got)
			}
			run("tables", "delete", "Spare")
			if got := run("tables", "list"); strings.Contains(got, "Spare") {
				t.Fatalf("after delete: %q", got)
			}
			tag := strings.TrimSpace(run("put", table, "smith", "0001", "Status=open", "Total@Edm.Double=12", "Big@Edm.Int64=9007199254740993", "When@Edm.DateTime=2024-05-01T10:00:00.1234567Z"))
			if !strings.HasPrefix(tag, `W/"datetime'`) {
				t.Fatalf("put: %q", tag)
			}
			ok(t, tg.env, `{"PartitionKey":"jones","RowKey":"0001","Status":"closed","Total":7.5}`, append([]string{"put", table, "--json", "-"}, tg.args...)...)
			got := run("get", table, "smith", "0001")
			for _, want := range []string{"Total         Edm.Double    12\n", "Big           Edm.Int64     9007199254740993\n", "ETag                        " + tag + "\n", "When          Edm.DateTime  2024-05-01T10:00:00.1234567Z\n"} {
				if !strings.Contains(got, want) {
					t.Errorf("get lacks %q:\n%s", want, got)
				}
			}
			// A stale ETag is refused; the current one works.
			r := runBin(t, tg.env, "", append([]string{"put", table, "smith", "0001", "Status=x", "--if-match", `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`}, tg.args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, "UpdateConditionNotSatisfied") {
				t.Fatalf("stale put: %d %q", r.code, r.stderr)
			}
			run("put", table, "smith", "0001", "Status=shipped", "--merge", "--if-match", tag)
			got = run("query", table, "--filter", "Status eq 'shipped'", "-o", "jsonl", "--select", "Status,Total")
			lines := strings.Split(strings.TrimSpace(got), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], `"Status":"shipped"`) || !strings.Contains(lines[0], `"Total":12.0`) || strings.Contains(lines[0], "Big") {
				t.Fatalf("query jsonl: %q", got)
			}
			got = run("query", table, "--filter", "PartitionKey eq 'jones'", "--explain")
			if !strings.Contains(got, "PartitionStart('jones')") || !strings.Contains(got, "closed") || !strings.Contains(got, "(1 entity)") {
				t.Fatalf("query --explain:\n%s", got)
			}
			if name == "offline" && !strings.Contains(got, "scanned 1, returned 1") {
				t.Fatalf("query --explain offline: no counts:\n%s", got)
			}
			if name == "offline" {
				// A literal of another type than the property's: no
				// entity, as the service answers, and a hint why.
				got = run("query", table, "--filter", "Total eq '12'", "--explain")
				want := "hint: Total is Edm.Double in the entities scanned (7.5, for one); the filter compares it with a String ('12'), and values of different types never match: write a Double literal, such as 7.5.\n"
				if !strings.Contains(got, want) || !strings.Contains(got, "returned 0") {
					t.Fatalf("query --explain with a String for a Double: want %q in\n%s", want, got)
				}
				// Through an index on Total the String finds no entry and
				// no entity is read: the hint comes from a probe.
				run("index", "create", table, "byTotal", "Total")
				got = run("query", table, "--filter", "Total eq '12'", "--explain")
				if !strings.Contains(got, want) || !strings.Contains(got, "read through index byTotal") {
					t.Fatalf("query --explain with a String for an indexed Double: want %q, through byTotal, in\n%s", want, got)
				}
				run("index", "drop", table, "byTotal")
			}
			var arr []map[string]any
			if err := json.Unmarshal([]byte(run("query", table, "-o", "json", "--top", "1")), &arr); err != nil || len(arr) != 1 || arr[0]["PartitionKey"] != "jones" {
				t.Fatalf("query -o json --top 1: %v %v", err, arr)
			}
			// The table view names the types of a column's values, so
			// that 12 the Double is not taken for an Int32.
			got = run("query", table)
			if head, _, _ := strings.Cut(got, "\n"); !strings.Contains(head, "Total (Edm.Double)") || !strings.Contains(head, "Big (Edm.Int64)") || strings.Contains(head, "Status (") {
				t.Fatalf("query's header does not name the columns' types: %q", head)
			}
			run("delete", table, "jones", "0001")
			r = runBin(t, tg.env, "", append([]string{"get", table, "jones", "0001"}, tg.args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, "ResourceNotFound") || strings.Count(r.stderr, "localtable:") != 1 {
				t.Fatalf("get after delete: %d %q", r.code, r.stderr)
			}
		})
	}
}

// writeEveryKind writes a JSONL file of n entities over several
// partitions, with every Edm type at its edges.
func writeEveryKind(t *testing.T, path string, n int) {
	t.Helper()
	var b []byte
	g, _ := localtable.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	for i := 0; i < n; i++ {
		e := localtable.Entity{PartitionKey: fmt.Sprintf("p%02d", i%7), RowKey: fmt.Sprintf("r%05d", i), Properties: localtable.Properties{
			"S": localtable.StringValue(fmt.Sprintf("line\n\"%d\", é", i)), "Empty": localtable.StringValue(""),
			"I32": localtable.Int32Value(int32(i) - 5), "I64": localtable.Int64Value(math.MaxInt64 - int64(i)),
			"D": localtable.DoubleValue(float64(i)), "NaN": localtable.DoubleValue(math.NaN()), "Neg0": localtable.DoubleValue(math.Copysign(0, -1)),
			"B": localtable.BoolValue(i%2 == 0), "T": localtable.DateTimeValue(time.Date(2024, 2, 29, 23, 59, 59, 123456700, time.UTC)),
			"G": localtable.GUIDValue(g), "Bin": localtable.BinaryValue([]byte{byte(i), 0, 0xff}),
		}}
		if i%3 == 0 {
			e.Properties["Mixed"] = localtable.StringValue("text")
		} else {
			e.Properties["Mixed"] = localtable.Int32Value(int32(i))
		}
		b = entityjson.Append(b, &e, nil)
		b = append(b, '\n')
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Export, import and export again give the same bytes, in JSONL and in
// CSV, offline and through a server.
func TestBinaryImportExportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.jsonl")
	writeEveryKind(t, src, 450)
	p := serveBin(t)
	loc1, loc2 := []string{"--location", filepath.Join(dir, "a")}, []string{"--location", filepath.Join(dir, "b")}
	remote := []string{"--endpoint", p.endpoint}
	r := runBin(t, nil, "", append([]string{"import", "Data", src, "--create"}, loc1...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "450 written, 0 skipped, 0 failed") || r.stderr != "" {
		t.Fatalf("import: %d %q; standard error (not a terminal: no progress bar) %q", r.code, r.stdout, r.stderr)
	}
	// --progress always draws the bar even into a pipe.
	if r := runBin(t, nil, "", append([]string{"import", "Data", src, "--progress", "always"}, loc1...)...); r.code != 0 || !strings.Contains(r.stderr, "importing") || !strings.Contains(r.stderr, "%") {
		t.Fatalf("import --progress always: %d %q", r.code, r.stderr)
	}
	first := filepath.Join(dir, "first.jsonl")
	ok(t, nil, "", append([]string{"export", "Data", first}, loc1...)...)
	sorted := sortLines(t, src) // the export is in key order
	if got, _ := os.ReadFile(first); string(got) != sorted {
		t.Fatalf("the export differs from the input (sorted by key)")
	}
	for _, f := range []string{"jsonl", "csv"} {
		for _, tgt := range [][]string{loc2, remote} {
			name := fmt.Sprintf("%s via %s", f, tgt[0])
			a := filepath.Join(dir, "x."+f)
			b := filepath.Join(dir, "y."+f)
			table := "Copy" + f + strings.Trim(tgt[0], "-")
			ok(t, nil, "", append([]string{"export", "Data", a}, loc1...)...)
			ok(t, nil, "", append([]string{"import", table, a, "--create"}, tgt...)...)
			ok(t, nil, "", append([]string{"export", table, b}, tgt...)...)
			ab, _ := os.ReadFile(a)
			bb, _ := os.ReadFile(b)
			if len(ab) == 0 || !bytes.Equal(ab, bb) {
				t.Fatalf("%s: export, import, export differ (%d and %d bytes)", name, len(ab), len(bb))
			}
		}
	}
	// Standard input and output.
	stdout := ok(t, nil, "", append([]string{"export", "Data", "--format", "csv", "--filter", "PartitionKey eq 'p03'"}, loc1...)...)
	if !strings.HasPrefix(stdout, "PartitionKey,RowKey,B@Edm.Boolean,Bin@Edm.Binary,D@Edm.Double,") {
		t.Fatalf("csv header: %q", stdout[:100])
	}
	ok(t, nil, stdout, append([]string{"import", "FromStdin", "-", "--format", "csv", "--create"}, loc2...)...)
	if got := ok(t, nil, "", append([]string{"export", "FromStdin", "--format", "csv"}, loc2...)...); got != stdout {
		t.Fatal("csv through standard input differs")
	}
}

func sortLines(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	key := func(l string) string {
		var k struct{ PartitionKey, RowKey string }
		json.Unmarshal([]byte(l), &k)
		return k.PartitionKey + "\x00" + k.RowKey
	}
	sort.Slice(lines, func(i, j int) bool { return key(lines[i]) < key(lines[j]) })
	return strings.Join(lines, "\n") + "\n"
}

// Failed records are reported with their lines, the others written; a
// run stopped by --max-errors resumes from its checkpoint, which never
// runs ahead of the data.
func TestBinaryImportFailuresAndResume(t *testing.T) {
	dir := t.TempDir()
	loc := []string{"--location", filepath.Join(dir, "data")}
	var b strings.Builder
	for i := 1; i <= 400; i++ {
		switch i {
		case 150:
			b.WriteString("{not json\n")
		case 151:
			fmt.Fprintf(&b, `{"PartitionKey":"p%d","RowKey":"bad/key"}`+"\n", i%3)
		case 152:
			b.WriteString("\n") // blank lines are skipped
		default:
			fmt.Fprintf(&b, `{"PartitionKey":"p%d","RowKey":"%04d","N":%d}`+"\n", i%3, i, i)
		}
	}
	src := filepath.Join(dir, "in.jsonl")
	os.WriteFile(src, []byte(b.String()), 0o644)
	r := runBin(t, nil, "", append([]string{"import", "Things", src, "--create", "--max-errors", "1"}, loc...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "stopped after 1 failed record (--max-errors)") || !strings.Contains(r.stdout, "line 150: InvalidInput") {
		t.Fatalf("--max-errors 1: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var cp importCheckpoint
	cpb, err := os.ReadFile(src + ".checkpoint")
	if err != nil || json.Unmarshal(cpb, &cp) != nil || cp.Line != 150 || len(cp.Failures) != 1 || cp.Failures[0].Line != 150 {
		t.Fatalf("checkpoint after the stop: %v %s", err, cpb)
	}
	// Every record through the checkpoint's line is in the table.
	out := ok(t, nil, "", append([]string{"export", "Things"}, loc...)...)
	have := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var k struct{ RowKey string }
		json.Unmarshal([]byte(l), &k)
		have[k.RowKey] = true
	}
	for i := 1; i <= cp.Line; i++ {
		if !have[fmt.Sprintf("%04d", i)] && i != 150 {
			t.Fatalf("line %d is before the checkpoint (%d) but not in the table", i, cp.Line)
		}
	}
	r = runBin(t, nil, "", append([]string{"import", "Things", src, "--resume"}, loc...)...)
	if r.code != 1 || !strings.Contains(r.stdout, fmt.Sprintf("%d skipped, 2 failed", cp.Line)) ||
		!strings.Contains(r.stdout, "line 150: InvalidInput") || !strings.Contains(r.stdout, "line 151: InvalidInput: RowKey") || !strings.Contains(r.stderr, "2 records failed") {
		t.Fatalf("--resume: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(src + ".checkpoint"); !os.IsNotExist(err) {
		t.Fatalf("the checkpoint is left after a complete run: %v", err)
	}
	if got := ok(t, nil, "", append([]string{"stats", "Things", "-o", "json"}, loc...)...); !strings.Contains(got, `"entities": 397`) {
		t.Fatalf("stats after resume: %s", got)
	}
	// Through a server, too: each failed record by its line.
	srv := serveBin(t)
	r = runBin(t, nil, "", "import", "Things", src, "--create", "--endpoint", srv.endpoint)
	if r.code != 1 || !strings.Contains(r.stdout, "397 written, 0 skipped, 2 failed") || !strings.Contains(r.stdout, "line 151: InvalidInput") {
		t.Fatalf("import through a server: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// --skip N (397 records: line 152 is blank) and --mode insert: the
	// records on lines 399 and 400 exist.
	r = runBin(t, nil, "", append([]string{"import", "Things", src, "--skip", "398", "--mode", "insert"}, loc...)...)
	if r.code != 1 || !strings.Contains(r.stdout, "0 written, 397 skipped, 2 failed") || !strings.Contains(r.stdout, "line 399: EntityAlreadyExists") {
		t.Fatalf("--skip with --mode insert: %d\n%s", r.code, r.stdout)
	}
}

func TestBinaryStatsAndCheck(t *testing.T) {
	dir := t.TempDir()
	loc := []string{"--location", dir}
	src := filepath.Join(dir, "in.jsonl")
	writeEveryKind(t, src, 70)
	ok(t, nil, "", append([]string{"import", "Data", src, "--create"}, loc...)...)
	ok(t, nil, "", append([]string{"tables", "create", "Empty"}, loc...)...)
	var stats []tableStats
	if err := json.Unmarshal([]byte(ok(t, nil, "", append([]string{"stats", "-o", "json", "--largest", "2"}, loc...)...)), &stats); err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 || stats[0].Table != "Data" || stats[0].Entities != 70 || stats[0].Partitions != 7 || stats[0].Bytes < 70*100 ||
		len(stats[0].Largest) != 2 || stats[0].Largest[0].Entities != 10 || stats[1].Entities != 0 {
		t.Fatalf("stats: %+v", stats)
	}
	text := ok(t, nil, "", append([]string{"stats"}, loc...)...)
	if !strings.Contains(text, "largest partitions of Data:") {
		t.Fatalf("stats text:\n%s", text)
	}
	if out := strings.Join(strings.Fields(ok(t, nil, "", append([]string{"check"}, loc...)...)), " "); !strings.Contains(out, "table Data 70 entities 7 partitions ok") || !strings.Contains(out, "ok: 75 keys, 2 tables") {
		t.Fatalf("check:\n%s", out)
	}
	// Corrupt a record behind the store's back: check reports it.
	db, err := pebble.Open(filepath.Join(dir, "devstoreaccount1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	bt := db.NewBatch()
	bt.Set(keyenc.AppendEntityKey(nil, 1, "p00", "r00000"), []byte{9, 9, 9})
	bt.Commit(true)
	db.Close()
	r := runBin(t, nil, "", append([]string{"check"}, loc...)...)
	if r.code != 1 || !strings.Contains(r.stdout, `Data: entity ("p00", "r00000"): the record does not decode`) || !strings.Contains(r.stderr, "1 of 1 accounts have problems") {
		t.Fatalf("check of a corrupt store: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// Backups keep everything (Timestamps, ETags), offline, through a running
// server, as a checkpoint, and restore into a data directory or memory.
func TestBinaryBackupRestore(t *testing.T) {
	dir := t.TempDir()
	loc := []string{"--location", filepath.Join(dir, "data")}
	src := filepath.Join(dir, "in.jsonl")
	writeEveryKind(t, src, 120)
	ok(t, nil, "", append([]string{"import", "Data", src, "--create"}, loc...)...)
	want := ok(t, nil, "", append([]string{"export", "Data", "--timestamps"}, loc...)...)
	if !strings.Contains(want, `"odata.etag":"W/`) {
		t.Fatal("no ETags in the export")
	}

	// Offline archive → restore into a new directory.
	arch := filepath.Join(dir, "b.ltbk")
	if out := ok(t, nil, "", append([]string{"backup", "--out", arch}, loc...)...); !strings.Contains(out, "backed up account devstoreaccount1 (pebble)") {
		t.Fatalf("backup: %q", out)
	}
	ok(t, nil, "", "restore", arch, "--location", filepath.Join(dir, "r1"))
	if got := ok(t, nil, "", "export", "Data", "--timestamps", "--location", filepath.Join(dir, "r1")); got != want {
		t.Fatal("restored from an archive: different data")
	}
	if r := runBin(t, nil, "", "restore", arch, "--location", filepath.Join(dir, "r1")); r.code != 1 || !strings.Contains(r.stderr, "exists") {
		t.Fatalf("restore over a directory: %d %q", r.code, r.stderr)
	}
	// A damaged archive restores nothing.
	ab, _ := os.ReadFile(arch)
	os.WriteFile(arch+".cut", ab[:len(ab)/2], 0o644)
	if r := runBin(t, nil, "", "restore", arch+".cut", "--location", filepath.Join(dir, "r2")); r.code != 1 || exists(filepath.Join(dir, "r2", "devstoreaccount1")) {
		t.Fatalf("restore of a cut archive: %d %q", r.code, r.stderr)
	}

	// Checkpoint.
	ok(t, nil, "", append([]string{"backup", "--checkpoint", filepath.Join(dir, "cp")}, loc...)...)
	if got := ok(t, nil, "", "export", "Data", "--timestamps", "--location", filepath.Join(dir, "cp")); got != want {
		t.Fatal("checkpoint: different data")
	}

	// Memory: a server started from the archive serves the same data; an
	// online backup of it restores into a directory.
	p := serveBin(t, "--restore", arch)
	if got := ok(t, nil, "", "export", "Data", "--timestamps", "--endpoint", p.endpoint); got != want {
		t.Fatal("serve --restore: different data")
	}
	ok(t, nil, "", "put", "Data", "new", "1", "X=y", "--endpoint", p.endpoint)
	live := filepath.Join(dir, "live.ltbk")
	if out := ok(t, nil, "", "backup", "--out", live, "--endpoint", p.endpoint); !strings.Contains(out, "(memory)") {
		t.Fatalf("online backup: %q", out)
	}
	ok(t, nil, "", "restore", live, "--location", filepath.Join(dir, "r3"))
	got := ok(t, nil, "", "export", "Data", "--timestamps", "--location", filepath.Join(dir, "r3"))
	for _, l := range strings.Split(strings.TrimSpace(want), "\n") {
		if !strings.Contains(got, l+"\n") {
			t.Fatalf("online backup: %s is missing", l)
		}
	}
	if !strings.Contains(got, `{"PartitionKey":"new","RowKey":"1","odata.etag"`) {
		t.Fatal("online backup: the new entity is missing")
	}
	// The data directory of a running server is refused offline, with a hint.
	p2 := serveBin(t, "--location", filepath.Join(dir, "r1"))
	if r := runBin(t, nil, "", "tables", "--location", filepath.Join(dir, "r1")); r.code != 1 || !strings.Contains(r.stderr, "is a server running on it? then use --endpoint") {
		t.Fatalf("offline on a served directory: %d %q", r.code, r.stderr)
	}
	if out := ok(t, nil, "", "backup", "--out", filepath.Join(dir, "served.ltbk"), "--endpoint", p2.endpoint); !strings.Contains(out, "(pebble)") {
		t.Fatalf("online backup of a pebble server: %q", out)
	}
	// The online backup needs the key.
	bad := []string{"backup", "--out", filepath.Join(dir, "x.ltbk"), "--endpoint", p.endpoint, "--account-key", "d3Jvbmc="}
	if r := runBin(t, nil, "", bad...); r.code != 1 || !strings.Contains(r.stderr, "403") {
		t.Fatalf("online backup with a wrong key: %d %q", r.code, r.stderr)
	}
}

// serve logs one line per request (JSON here), bodies at debug, and
// serves the explorer at /.
func TestBinaryServeLogsAndExplorer(t *testing.T) {
	pr := &process{}
	pr.cmd = exec.Command(buildBinary(t), "--addr", "127.0.0.1:0", "--log-format", "json", "--log-level", "debug")
	stderr, err := pr.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	p := startWith(t, pr)
	ok(t, nil, "", "tables", "create", "Logged", "--endpoint", p.endpoint)
	ok(t, nil, "", "put", "Logged", "a", "b", "N@Edm.Int32=5", "--endpoint", p.endpoint)
	runBin(t, nil, "", "get", "Logged", "a", "missing", "--endpoint", p.endpoint)
	want := map[string]func(m map[string]any) bool{
		"CreateTable": func(m map[string]any) bool { return m["status"] == 201.0 },
		"InsertOrReplaceEntity": func(m map[string]any) bool {
			return m["table"] == "Logged" && m["status"] == 204.0 && strings.Contains(fmt.Sprint(m["request_body"]), `"N":5`)
		},
		"QueryEntity": func(m map[string]any) bool { return m["status"] == 404.0 && m["error"] == "ResourceNotFound" },
	}
	deadline := time.After(20 * time.Second)
	for len(want) > 0 {
		select {
		case m := <-lines:
			if m["msg"] != "request" {
				continue
			}
			if m["request_id"] == "" || m["dur"] == nil || m["method"] == nil || m["path"] == nil {
				t.Fatalf("log line lacks fields: %v", m)
			}
			if f, ok := want[fmt.Sprint(m["op"])]; ok && f(m) {
				delete(want, fmt.Sprint(m["op"]))
			}
		case <-deadline:
			t.Fatalf("no log lines for %v", want)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := strings.TrimSuffix(p.endpoint, "/devstoreaccount1")
	// The explorer's bodies are never logged: its login form holds a key.
	resp, err := c.PostForm(base+"/-/explorer/login", url.Values{"account": {"devstoreaccount1"}, "key": {"c2VjcmV0LWtleQ=="}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	deadline = time.After(20 * time.Second)
	for logged := false; !logged; {
		select {
		case m := <-lines:
			if m["op"] == "Explorer" && m["method"] == "POST" {
				if _, has := m["request_body"]; has {
					t.Fatalf("the explorer's login body was logged: %v", m)
				}
				logged = true
			}
		case <-deadline:
			t.Fatal("no log line for the login")
		}
	}
	resp, err = c.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/-/explorer/" {
		t.Fatalf("GET /: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = c.Get(base + "/-/explorer/a/devstoreaccount1/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/-/explorer/login") {
		t.Fatalf("the explorer without a login: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// serve's paging flags make the served pages hostile as asked: tiny,
// empty first, and cut at partition boundaries; the SDK's pager still
// reads every entity once.
func TestBinaryServePagingFlags(t *testing.T) {
	p := serveBin(t, "--max-page-size", "2", "--empty-first-page", "--page-at-partition-boundary")
	ctx := context.Background()
	sc, err := aztables.NewServiceClientFromConnectionString(p.connString, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.CreateTable(ctx, "Paged", nil); err != nil {
		t.Fatal(err)
	}
	c := sc.NewClient("Paged")
	for i := 0; i < 7; i++ {
		e, _ := json.Marshal(map[string]string{"PartitionKey": fmt.Sprint("p", i%2), "RowKey": fmt.Sprint("r", i)})
		if _, err := c.AddEntity(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	var sizes []int
	seen := map[string]bool{}
	pager := c.NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Entities))
		parts := map[string]bool{}
		for _, raw := range page.Entities {
			var e struct{ PartitionKey, RowKey string }
			json.Unmarshal(raw, &e)
			parts[e.PartitionKey] = true
			if len(parts) > 1 {
				t.Fatalf("a page spans partitions %v", parts)
			}
			if seen[e.PartitionKey+"/"+e.RowKey] {
				t.Fatalf("%s/%s returned twice", e.PartitionKey, e.RowKey)
			}
			seen[e.PartitionKey+"/"+e.RowKey] = true
		}
	}
	// p0 holds r0 r2 r4 r6, p1 holds r1 r3 r5: an empty first page, then
	// pages of at most 2 that never span the two partitions.
	if fmt.Sprint(sizes) != "[0 2 2 2 1]" {
		t.Fatalf("page sizes %v, want [0 2 2 2 1]", sizes)
	}
	if len(seen) != 7 {
		t.Fatalf("read %d entities, want 7 (pages %v)", len(seen), sizes)
	}
}

// serve's --query-scan-limit ends a page after that many entities read,
// matching or not: a filter that matches only the last of 7 entities
// reads 3 a page, so two empty pages come before the one that holds it.
func TestBinaryServeQueryScanLimit(t *testing.T) {
	p := serveBin(t, "--query-scan-limit", "3")
	ctx := context.Background()
	sc, err := aztables.NewServiceClientFromConnectionString(p.connString, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.CreateTable(ctx, "Scanned", nil); err != nil {
		t.Fatal(err)
	}
	c := sc.NewClient("Scanned")
	for i := 0; i < 7; i++ {
		e, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprint("r", i), "N": i})
		if _, err := c.AddEntity(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	var sizes []int
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("N eq 6")})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Entities))
	}
	if fmt.Sprint(sizes) != "[0 0 1]" {
		t.Fatalf("page sizes %v, want [0 0 1]", sizes)
	}
}
