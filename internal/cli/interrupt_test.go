package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable/localtabletest"
)

// TestBinaryImportInterrupted: Ctrl-C (SIGINT) in the middle of an
// import, to the real process, stops it with the report (written so far),
// the checkpoint saved and the advice to run again with --resume, exit
// 130; a run without --resume then refuses to start over, and --resume
// finishes the file with every row once.
func TestBinaryImportInterrupted(t *testing.T) {
	bin := buildBinary(t)
	srv := localtabletest.NewServer(t, localtabletest.WithLatency(localtabletest.Fixed(20*time.Millisecond), localtabletest.OpBatch))
	const n = 6000
	src := writeLines(t, n, 5)
	cmd := exec.Command(bin, "import", "Things", src, "--create", "--mode", "insert", "--connection-string", srv.ConnectionString, "--progress", "never")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		if n, err := srv.Account.Table("Things").Count(context.Background(), nil); err == nil && n >= 300 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no rows written in a minute:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	have := rowsOf(t, srv.Account, "Things")
	if len(have) == n {
		t.Fatalf("the import finished before the signal")
	}
	out := stdout.String()
	m := regexp.MustCompile(`(?m)^imported .* into Things: (\d+) written, 0 skipped, 0 failed`).FindStringSubmatch(out)
	if !strings.HasPrefix(out, "import stopped: interrupted (SIGINT)\n") || m == nil {
		t.Fatalf("no report of the interrupted import:\n%s", out)
	}
	// The report counts the writes acknowledged: the table may hold more
	// (a batch applied whose answer the signal cut).
	if w, _ := strconv.Atoi(m[1]); w == 0 || w > len(have) {
		t.Errorf("report says %d written; the table holds %d", w, len(have))
	}
	if !strings.Contains(stderr.String(), "interrupted (SIGINT); "+src+".checkpoint says which records are done") ||
		!strings.Contains(stderr.String(), "run again with --resume") {
		t.Fatalf("stderr does not say to run again with --resume:\n%s", stderr.String())
	}
	cp := readCheckpoint(t, src+".checkpoint")
	checkCheckpoint(t, cp, have)
	before, _ := os.ReadFile(src + ".checkpoint")

	// Without --resume: refused, the checkpoint kept as it was.
	r := runBin(t, nil, "", "import", "Things", src, "--mode", "insert", "--connection-string", srv.ConnectionString)
	if r.code != 2 || !strings.Contains(r.stderr, "run again with --resume to go on from there, or remove it to start over") ||
		!strings.Contains(r.stderr, "every record through line "+strconv.Itoa(cp.Line)+" done") {
		t.Fatalf("a run without --resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(src + ".checkpoint"); !bytes.Equal(before, after) {
		t.Fatalf("the refused run changed the checkpoint")
	}
	if len(rowsOf(t, srv.Account, "Things")) != len(have) {
		t.Fatalf("the refused run wrote")
	}

	r = runBin(t, nil, "", "import", "Things", src, "--resume", "--mode", "insert", "--connection-string", srv.ConnectionString)
	if r.code != 0 || !strings.Contains(r.stdout, " 0 failed") {
		t.Fatalf("--resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if have := rowsOf(t, srv.Account, "Things"); len(have) != n {
		t.Fatalf("%d rows after --resume, want %d", len(have), n)
	}
	if _, err := os.Stat(src + ".checkpoint"); !os.IsNotExist(err) {
		t.Fatalf("the checkpoint is left after the file is done: %v", err)
	}
}

// barFrames returns the states a progress bar drew on stderr, in order.
func barFrames(stderr string) []string {
	var out []string
	for _, f := range strings.Split(stderr, "\r") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// everyFrame makes the progress bars draw every state, for the test.
func everyFrame(t *testing.T) {
	old := progressThrottle
	progressThrottle = 0
	t.Cleanup(func() { progressThrottle = old })
}

// The import's bar shows the input whose records are written, not what
// was read: the reader reads the whole of a small file ahead, while a
// server that fails every transaction from the third on lets 200 rows be
// written.
func TestImportProgressCountsWritten(t *testing.T) {
	fastRetries(t)
	everyFrame(t)
	srv := localtabletest.NewServer(t)
	const n = 2000
	src := writeLines(t, n, 2)
	srv.Inject(localtabletest.Rule{Ops: []localtabletest.Operation{localtabletest.OpBatch}, Skip: 2, Action: localtabletest.DropConnection()})
	_, stderr, err := runCmd("import", "Things", src, "--create", "--connection-string", srv.ConnectionString, "--progress", "always")
	if err == nil {
		t.Fatal("no error from a server that fails")
	}
	written := len(rowsOf(t, srv.Account, "Things"))
	if written != 200 {
		t.Fatalf("%d rows written, want 200", written)
	}
	// The bar's end: the bytes of the lines written, of the file's.
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	have, done := rowsOf(t, srv.Account, "Things"), 0
	for i, line := range strings.SplitAfter(string(b), "\n") {
		if have[i+1] {
			done += len(line)
		}
	}
	want := 100 * done / len(b)
	pct := regexp.MustCompile(`^importing: (\d+) rows written.*?(\d+)% \|`)
	frames, top := 0, 0
	for _, f := range barFrames(stderr) {
		if m := pct.FindStringSubmatch(f); m != nil {
			frames++
			p, _ := strconv.Atoi(m[2])
			top = max(top, p)
		}
	}
	if frames < 2 || top != want {
		t.Fatalf("the bar went to %d%% in %d frames, want %d%% (%d of %d rows written, %d of %d bytes):\n%.2000q", top, frames, want, written, n, done, len(b), stderr)
	}
}

// A CSV export over a server shows a bar from the start (its first pass
// reads the columns) and then the entities written out of their number,
// which the first pass counted; a JSONL export over a server, which
// nothing counts first, an honest count with no total.
func TestExportProgressOverEndpoint(t *testing.T) {
	everyFrame(t)
	srv := localtabletest.NewServer(t)
	src := writeLines(t, 300, 3)
	if _, _, err := runCmd("import", "Things", src, "--create", "--connection-string", srv.ConnectionString, "--progress", "never"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, stderr, err := runCmd("export", "Things", dir+"/out.csv", "--connection-string", srv.ConnectionString, "--progress", "always")
	if err != nil {
		t.Fatal(err)
	}
	frames := barFrames(stderr)
	first := slices.IndexFunc(frames, func(f string) bool { return strings.Contains(f, "reading the columns (1/2)") })
	second := slices.IndexFunc(frames, func(f string) bool { return strings.Contains(f, "exporting (2/2)") })
	if first != 0 || second < 0 {
		t.Fatalf("frames %.2000q", frames)
	}
	for _, f := range frames[second:] {
		if strings.Contains(f, "exporting (2/2)") && !strings.Contains(f, "/300") {
			t.Fatalf("a frame of the second pass without the total 300: %q", f)
		}
	}
	if !slices.ContainsFunc(frames[second:], func(f string) bool { return strings.Contains(f, "(299/300") }) {
		t.Fatalf("the second pass does not reach 299/300: %.2000q", frames[second:])
	}
	_, stderr, err = runCmd("export", "Things", dir+"/out.jsonl", "--connection-string", srv.ConnectionString, "--progress", "always")
	if err != nil {
		t.Fatal(err)
	}
	frames = barFrames(stderr)
	if len(frames) == 0 || !strings.Contains(frames[0], "exporting (0/-") || !slices.ContainsFunc(frames, func(f string) bool { return strings.Contains(f, "(300/-") }) {
		t.Fatalf("JSONL frames %.2000q", frames)
	}
}
