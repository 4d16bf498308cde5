package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
)

// fastRetries makes the command's SDK client retry without waiting, for
// the test.
func fastRetries(t *testing.T) {
	t.Helper()
	old := remoteRetry
	remoteRetry = policy.RetryOptions{MaxRetries: 2, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond}
	t.Cleanup(func() { remoteRetry = old })
}

// runCmd runs the command in this process and returns what it printed.
func runCmd(args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

// writeLines writes n JSONL records, line i the entity (p<i%parts>,
// r<i>), and returns the file's path.
func writeLines(t *testing.T, n, parts int) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"PartitionKey":"p%d","RowKey":"r%05d","N":%d}`+"\n", i%parts, i, i)
	}
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rowsOf returns the line numbers whose entities the table holds.
func rowsOf(t *testing.T, acct *localtable.Account, table string) map[int]bool {
	t.Helper()
	have := map[int]bool{}
	for e, err := range acct.Table(table).QueryAll(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		var i int
		if _, err := fmt.Sscanf(e.RowKey, "r%05d", &i); err != nil {
			t.Fatalf("row %q", e.RowKey)
		}
		have[i] = true
	}
	return have
}

func readCheckpoint(t *testing.T, path string) importCheckpoint {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cp importCheckpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		t.Fatal(err)
	}
	return cp
}

// checkCheckpoint fails unless every line the checkpoint says is done is
// in the table or among its failures.
func checkCheckpoint(t *testing.T, cp importCheckpoint, have map[int]bool) {
	t.Helper()
	failed := map[int]bool{}
	for _, f := range cp.Failures {
		failed[f.Line] = true
	}
	for i := 1; i <= max(cp.Line, cp.Through); i++ {
		if !cp.done(i) || failed[i] {
			continue
		}
		if !have[i] {
			t.Fatalf("the checkpoint (line %d, through %d, pending %v) says line %d is done, but it is not in the table", cp.Line, cp.Through, cp.Pending, i)
		}
	}
}

// TestImportResumeAfterServerFailure: a server that stops answering in
// the middle of an import (every $batch from the 8th on loses its
// connection) ends the import; the checkpoint covers only the lines whose
// writes were acknowledged, and --resume, in insert mode, writes every
// other line and reports no failure: nothing lost, nothing twice. With
// AfterApply the server commits the batches whose answers it drops: the
// resumed run finds them written, as they were, and counts them done.
func TestImportResumeAfterServerFailure(t *testing.T) {
	fastRetries(t)
	for _, afterApply := range []bool{false, true} {
		t.Run(fmt.Sprintf("afterApply=%v", afterApply), func(t *testing.T) {
			srv := localtabletest.NewServer(t)
			const n = 2500
			src := writeLines(t, n, 3)
			f := srv.Inject(localtabletest.Rule{Ops: []localtabletest.Operation{localtabletest.OpBatch}, Skip: 7,
				Action: localtabletest.DropConnection(), AfterApply: afterApply})
			out, _, err := runCmd("import", "Things", src, "--create", "--mode", "insert", "--connection-string", srv.ConnectionString)
			if err == nil || f.Hits() == 0 {
				t.Fatalf("import through a failing server: no error (%d faults)\n%s", f.Hits(), out)
			}
			if !strings.HasPrefix(out, "import stopped: ") || !strings.Contains(err.Error(), "run again with --resume") {
				t.Fatalf("the failure is not the headline:\n%s\nerror: %v", out, err)
			}
			cp := readCheckpoint(t, src+".checkpoint")
			have := rowsOf(t, srv.Account, "Things")
			checkCheckpoint(t, cp, have)
			if len(cp.Pending) == 0 {
				t.Fatalf("the batch in flight is not pending in the checkpoint: %+v", cp)
			}
			// A resumed run that fails again keeps what the first did.
			f.Remove()
			f = srv.Inject(localtabletest.Rule{Ops: []localtabletest.Operation{localtabletest.OpBatch}, Skip: 2,
				Action: localtabletest.DropConnection(), AfterApply: afterApply})
			out, _, err = runCmd("import", "Things", src, "--resume", "--mode", "insert", "--connection-string", srv.ConnectionString)
			if err == nil || f.Hits() == 0 {
				t.Fatalf("resumed import through a failing server: no error (%d faults)\n%s", f.Hits(), out)
			}
			cp2 := readCheckpoint(t, src+".checkpoint")
			checkCheckpoint(t, cp2, rowsOf(t, srv.Account, "Things"))
			for i := 1; i <= max(cp.Line, cp.Through); i++ {
				if cp.done(i) && !cp2.done(i) {
					t.Fatalf("line %d was done after the first run (%+v) but not after the second (%+v)", i, cp, cp2)
				}
			}
			srv.ClearFaults()
			out, _, err = runCmd("import", "Things", src, "--resume", "--mode", "insert", "--connection-string", srv.ConnectionString)
			if err != nil || !strings.Contains(out, " 0 failed") {
				t.Fatalf("--resume: %v\n%s", err, out)
			}
			have = rowsOf(t, srv.Account, "Things")
			for i := 1; i <= n; i++ {
				if !have[i] {
					t.Fatalf("line %d is not in the table after --resume", i)
				}
			}
			if len(have) != n {
				t.Fatalf("%d rows, want %d", len(have), n)
			}
			if _, err := os.Stat(src + ".checkpoint"); !os.IsNotExist(err) {
				t.Fatalf("the checkpoint is left after a complete run: %v", err)
			}
		})
	}
}

// TestImportResumeAfterFailureInRetry: a transaction that fails for one
// bad record is retried entity by entity; a failure of the server in
// the middle of that leaves the entities after it pending, and those
// before it done (written, or failed and reported).
func TestImportResumeAfterFailureInRetry(t *testing.T) {
	fastRetries(t)
	srv := localtabletest.NewServer(t)
	const n = 300
	src := writeLines(t, n, 1)
	// Lines 111 and 150 have bad RowKeys: the batch of lines 101 to 200
	// fails and is retried entity by entity, and the server fails from
	// the 20th insert (line 120) on.
	b, _ := os.ReadFile(src)
	lines := strings.Split(string(b), "\n")
	lines[110] = `{"PartitionKey":"p0","RowKey":"bad/111"}`
	lines[149] = `{"PartitionKey":"p0","RowKey":"bad/150"}`
	bad := filepath.Join(filepath.Dir(src), "bad.jsonl")
	os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644)
	srv.Inject(localtabletest.Rule{Ops: []localtabletest.Operation{localtabletest.OpInsert}, Skip: 19, Action: localtabletest.DropConnection()})
	out, _, err := runCmd("import", "Things", bad, "--create", "--mode", "insert", "--connection-string", srv.ConnectionString)
	if err == nil {
		t.Fatalf("no error\n%s", out)
	}
	cp := readCheckpoint(t, bad+".checkpoint")
	have := rowsOf(t, srv.Account, "Things")
	checkCheckpoint(t, cp, have)
	if cp.Line != 119 || len(cp.Failures) != 1 || cp.Failures[0].Line != 111 {
		t.Fatalf("checkpoint: %+v, want line 119 done with the failure of line 111", cp)
	}
	srv.ClearFaults()
	out, _, err = runCmd("import", "Things", bad, "--resume", "--mode", "insert", "--connection-string", srv.ConnectionString)
	if err == nil || !strings.Contains(out, " 2 failed") || !strings.Contains(out, "line 111: ") || !strings.Contains(out, "line 150: ") {
		t.Fatalf("--resume: %v\n%s", err, out)
	}
	have = rowsOf(t, srv.Account, "Things")
	for i := 1; i <= n; i++ {
		if !have[i] && i != 111 && i != 150 {
			t.Fatalf("line %d is not in the table after --resume", i)
		}
	}
}

// TestImportMissingTable: without --create, an import into a table that
// does not exist fails before it reads the file, with an error that
// names --create, and leaves no checkpoint; so does a server that
// refuses the credentials.
func TestImportMissingTable(t *testing.T) {
	fastRetries(t)
	src := writeLines(t, 10, 2)
	for _, where := range []string{"location", "server"} {
		t.Run(where, func(t *testing.T) {
			var loc []string
			if where == "location" {
				loc = []string{"--location", t.TempDir()}
			} else {
				loc = []string{"--connection-string", localtabletest.NewServer(t).ConnectionString}
			}
			out, _, err := runCmd(append([]string{"import", "Nope", src}, loc...)...)
			if err == nil || !strings.Contains(err.Error(), "--create") || !errors.Is(err, localtable.ErrTableNotFound) {
				t.Fatalf("import into a missing table: %v\n%s", err, out)
			}
			if out != "" {
				t.Fatalf("printed a report for an import that did not start:\n%s", out)
			}
			if _, err := os.Stat(src + ".checkpoint"); !os.IsNotExist(err) {
				t.Fatalf("a checkpoint was written: %v", err)
			}
			// Nothing of the file is read: not even a CSV header, here
			// one that import would refuse.
			csv := filepath.Join(t.TempDir(), "in.csv")
			os.WriteFile(csv, []byte("RowKey,PartitionKey,N@Edm.Nothing\n"), 0o644)
			if _, _, err := runCmd(append([]string{"import", "Nope", csv}, loc...)...); err == nil || !errors.Is(err, localtable.ErrTableNotFound) {
				t.Fatalf("import of a CSV file into a missing table: %v", err)
			}
		})
	}
	srv := localtabletest.NewServer(t)
	if _, err := srv.Client.CreateTable(context.Background(), "Things", nil); err != nil {
		t.Fatal(err)
	}
	wrongKey := strings.Replace(srv.ConnectionString, "AccountKey=", "AccountKey=AAAA", 1)
	out, _, err := runCmd("import", "Things", src, "--connection-string", wrongKey)
	if err == nil || !strings.Contains(err.Error(), "AuthenticationFailed") || out != "" {
		t.Fatalf("import with a wrong key: %v\n%s", err, out)
	}
	if _, err := os.Stat(src + ".checkpoint"); !os.IsNotExist(err) {
		t.Fatalf("a checkpoint was written: %v", err)
	}
}

// TestImportFatalErrorMidway: a fatal error (here the server refusing
// every request from some point on, as when the key was rotated) ends
// the import, is the report's headline, and leaves the checkpoint before
// every line not acknowledged, not past them as failures.
func TestImportFatalErrorMidway(t *testing.T) {
	fastRetries(t)
	srv := localtabletest.NewServer(t)
	const n = 1000
	src := writeLines(t, n, 1)
	srv.Inject(localtabletest.Rule{Ops: []localtabletest.Operation{localtabletest.OpBatch, localtabletest.OpInsert, localtabletest.OpUpsertReplace}, Skip: 3,
		Action: localtabletest.Fail(403, "AuthenticationFailed", "Server failed to authenticate the request.")})
	out, _, err := runCmd("import", "Things", src, "--create", "--connection-string", srv.ConnectionString)
	if err == nil || !strings.HasPrefix(out, "import stopped: AuthenticationFailed") || strings.Contains(out, "  line ") {
		t.Fatalf("import with the server refusing: %v\n%s", err, out)
	}
	cp := readCheckpoint(t, src+".checkpoint")
	checkCheckpoint(t, cp, rowsOf(t, srv.Account, "Things"))
	if len(cp.Failures) != 0 || cp.Line != 300 {
		t.Fatalf("checkpoint %+v, want line 300 done (3 batches of 100) and no failures", cp)
	}
}

// TestImportCheckpointState: the checkpoint of a resumed run keeps the
// lines its predecessor left pending and has not read yet, and says done
// every line its predecessor did, read again or not.
func TestImportCheckpointState(t *testing.T) {
	prev := importCheckpoint{Line: 10, Through: 50, Pending: []lineRange{{11, 20}, {31, 32}, {34, 40}}}
	for line, want := range map[int]bool{1: true, 10: true, 11: false, 20: false, 21: true, 30: true, 31: false, 33: true, 40: false, 41: true, 50: true, 51: false} {
		if got := prev.done(line); got != want {
			t.Errorf("done(%d) = %v, want %v", line, got, want)
		}
	}
	lines := func(from, to int) []int {
		var out []int
		for l := from; l <= to; l++ {
			out = append(out, l)
		}
		return out
	}
	// The resumed run read through line 25 and holds lines 11 to 20 in a
	// batch whose transaction failed.
	im := importer{prev: prev, lastLine: 25, order: []*pendingBatch{{lines: lines(11, 20)}}}
	got := im.checkpoint()
	want := importCheckpoint{Line: 10, Through: 50, Pending: []lineRange{{11, 20}, {31, 32}, {34, 40}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkpoint = %+v, want %+v", got, want)
	}
	// Through line 33, lines 11 to 20 written, 31 and 33 in open batches.
	im = importer{prev: prev, lastLine: 33, order: []*pendingBatch{{lines: []int{33}}, {lines: []int{31}}}}
	got = im.checkpoint()
	want = importCheckpoint{Line: 30, Through: 50, Pending: []lineRange{{31, 31}, {33, 40}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkpoint = %+v, want %+v", got, want)
	}
	// Past the predecessor's lines, nothing open: all done.
	im = importer{prev: prev, lastLine: 70}
	if got := im.checkpoint(); !reflect.DeepEqual(got, importCheckpoint{Line: 70}) {
		t.Errorf("checkpoint = %+v, want line 70 and nothing pending", got)
	}
	for _, bad := range []importCheckpoint{
		{Line: 10, Through: 50, Pending: []lineRange{{5, 12}}},
		{Line: 10, Through: 50, Pending: []lineRange{{12, 11}}},
		{Line: 10, Through: 50, Pending: []lineRange{{20, 30}, {25, 26}}},
		{Line: 10, Through: 50, Pending: []lineRange{{45, 51}}},
	} {
		if bad.check() == nil {
			t.Errorf("check(%+v) = nil", bad)
		}
	}
}

// TestImportCSVWithByteOrderMark: a CSV file as Excel saves it, with a
// UTF-8 byte-order mark before its header, imports.
func TestImportCSVWithByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "excel.csv")
	os.WriteFile(src, []byte("\uFEFFPartitionKey,RowKey,Qty@Edm.Int32\r\np,r1,3\r\n"), 0o644)
	out, _, err := runCmd("import", "Sheet", src, "--create", "--location", dir)
	if err != nil || !strings.Contains(out, "1 written") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	out, _, err = runCmd("get", "Sheet", "p", "r1", "-o", "json", "--location", dir)
	if err != nil || !strings.Contains(out, `"Qty":3`) {
		t.Fatalf("get: %v\n%s", err, out)
	}
}

// TestImportFailuresInLineOrder: failures are listed by line, though the
// transactions that meet them go partition by partition.
func TestImportFailuresInLineOrder(t *testing.T) {
	dir := t.TempDir()
	src := writeLines(t, 40, 3)
	if _, _, err := runCmd("import", "Things", src, "--create", "--location", dir); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd("import", "Things", src, "--mode", "insert", "--location", dir)
	if err == nil || !strings.Contains(out, "40 failed") {
		t.Fatalf("insert of existing entities: %v\n%s", err, out)
	}
	prev := 0
	for _, l := range strings.Split(out, "\n") {
		var n int
		if _, err := fmt.Sscanf(l, "  line %d:", &n); err != nil {
			continue
		}
		if n <= prev {
			t.Fatalf("line %d listed after line %d:\n%s", n, prev, out)
		}
		prev = n
	}
	if prev != 40 {
		t.Fatalf("the last failure listed is line %d, want 40:\n%s", prev, out)
	}
}
