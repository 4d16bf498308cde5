package localtable

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable/storage/pebble"
)

// The index crash test: a child process builds (or rebuilds) an index of
// a table on pebble while writers write into it, and the parent kills it
// with SIGKILL mid-build. Reopened, the store must hold the index
// declared and not ready, unused by queries, with every entry Verify
// expects up to the build's cursor; CreateIndex then resumes the build
// (RebuildIndex starts it over), which ends ready and exact.

const (
	indexCrashEnvDir  = "LOCALTABLE_INDEX_CRASH_DIR"
	indexCrashEnvMode = "LOCALTABLE_INDEX_CRASH_MODE" // build, resume or rebuild
)

// indexCrashChunk is the build's step in the child: small, so that the
// build has many steps to be killed in.
const indexCrashChunk = 40

func openIndexCrash(t *testing.T, dir string) *Account {
	t.Helper()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(&Options{Engine: db})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestIndexCrashChild is the child: it is run by TestIndexCrash only.
func TestIndexCrashChild(t *testing.T) {
	dir := os.Getenv(indexCrashEnvDir)
	if dir == "" {
		t.Skip("run by TestIndexCrash")
	}
	ctx := context.Background()
	a := openIndexCrash(t, dir)
	tbl := a.Table("Orders")
	// Writers: replaces that change V, and deletes, until the kill.
	for w := range 2 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for {
				rk := fmt.Sprintf("%05d", rng.IntN(6000))
				if rng.IntN(4) == 0 {
					tbl.Delete(ctx, "p", rk, nil)
				} else {
					tbl.Upsert(ctx, Entity{PartitionKey: "p", RowKey: rk, Properties: Properties{"V": Int32Value(int32(rng.IntN(10)))}}, nil)
				}
			}
		}()
	}
	var id uint32
	var err error
	switch os.Getenv(indexCrashEnvMode) {
	case "rebuild":
		id, err = tbl.restartIndex(ctx, "byV")
	default: // build, resume: what CreateIndex does
		id, _, err = tbl.declareIndex(ctx, "byV", []string{"V"}, false)
	}
	if err != nil {
		t.Fatal(err)
	}
	for step := 0; ; step++ {
		done, err := tbl.buildStep(ctx, id, indexCrashChunk)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("step %d\n", step)
		if done {
			fmt.Println("done")
			select {} // wait for the kill
		}
	}
}

// TestIndexCrash kills a child mid-build of an index on pebble: first
// building it, then resuming that build, then rebuilding the index
// (RebuildIndex) once it is ready, each killed after a few of its steps.
func TestIndexCrash(t *testing.T) {
	if os.Getenv(indexCrashEnvDir) != "" {
		t.Skip("in the child")
	}
	ctx := context.Background()
	dir := t.TempDir()
	a := openIndexCrash(t, dir)
	tbl, err := a.CreateTable(ctx, "Orders")
	if err != nil {
		t.Fatal(err)
	}
	for start := 0; start < 5000; start += 100 {
		var acts []Action
		for i := start; i < start+100; i++ {
			acts = append(acts, Action{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%05d", i), Properties: Properties{"V": Int32Value(int32(i % 10))}}})
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	for _, mode := range []string{"build", "resume", "rebuild"} {
		if mode == "rebuild" {
			a := openIndexCrash(t, dir)
			if err := a.Table("Orders").CreateIndex(ctx, "byV", "V"); err != nil {
				t.Fatal(err)
			}
			a.Close()
		}
		steps := indexCrashRun(t, dir, mode, 3+rng.IntN(5), time.Duration(rng.IntN(3000))*time.Microsecond)
		a := openIndexCrash(t, dir)
		tbl := a.Table("Orders")
		infos, err := tbl.Indexes(ctx)
		if err != nil || len(infos) != 1 || infos[0].Ready {
			a.Close()
			t.Fatalf("%s killed after step %d: Indexes = %+v, %v; want byV not ready", mode, steps, infos, err)
		}
		page, err := tbl.Query(ctx, &QueryOptions{Filter: indexEq{"V", Int32Value(3)}})
		if err != nil || page.Stats.Index != "" {
			a.Close()
			t.Fatalf("%s killed: a query read index %q (%v)", mode, page.Stats.Index, err)
		}
		verifyOK(t, a) // the entries up to the cursor, exactly
		t.Logf("%s: killed after step %d of ~%d", mode, steps, 5000/indexCrashChunk)
		a.Close()
	}
	// Resumed to the end, it is ready, exact and used.
	a = openIndexCrash(t, dir)
	defer a.Close()
	tbl = a.Table("Orders")
	if err := tbl.CreateIndex(ctx, "byV", "V"); err != nil {
		t.Fatal(err)
	}
	verifyOK(t, a)
	page, err := tbl.Query(ctx, &QueryOptions{Filter: indexEq{"V", Int32Value(3)}})
	if err != nil || page.Stats.Index != "byV" {
		t.Fatalf("after the build: index %q (%v)", page.Stats.Index, err)
	}
}

// indexCrashRun runs the child in mode over dir and kills it delay after
// it reports step kill, then returns the last step it reported.
func indexCrashRun(t *testing.T, dir, mode string, kill int, delay time.Duration) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestIndexCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), indexCrashEnvDir+"="+dir, indexCrashEnvMode+"="+mode)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	last := -1
	var timer *time.Timer
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		var n int
		if _, err := fmt.Sscanf(line, "step %d", &n); err == nil {
			last = n
			if n == kill && timer == nil {
				timer = time.AfterFunc(delay, func() { cmd.Process.Kill() })
			}
		}
		if line == "done" {
			cmd.Process.Kill()
			t.Fatalf("%s: the child finished the build before the kill", mode)
		}
	}
	cmd.Wait()
	if timer == nil {
		t.Fatalf("%s: the child ended at step %d, before step %d: %s", mode, last, kill, strings.TrimSpace(stderr.String()))
	}
	return last
}
