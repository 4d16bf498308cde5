//go:build unix

package tests

// The crash test: a child process writes to an account on pebble and
// acknowledges every write that returned; the parent kills it with SIGKILL
// at a random moment, reopens the directory and checks that every
// acknowledged write survived, no transaction is partly applied, and
// Timestamps keep increasing. The child is this test binary, re-executed
// with LOCALTABLE_CRASH_DIR set to run TestCrashChild.
//
// Keys are owned: goroutine g alone writes partition "s<g>" (single writes
// on crashKeys rows) and partition "b<g>" (one group of crashBatch(g) rows
// written only by transactions). Before each call the child prints an
// intent line, after it returns an ack line, both on stdout (a pipe the
// parent reads as lines arrive):
//
//	I <g> <S|B> <row|-> <op> <present 0|1> <seq>
//	A <g> <etag>
//
// A goroutine has at most one call in flight, so after the kill each key
// holds exactly its last acknowledged state, or the state of its
// goroutine's last intent if that was not acknowledged. Some calls are
// meant to fail (an insert of a present row, a stale ETag, a transaction
// whose last action fails): their op starts with "fail-", and the child
// prints "X <g>" when they failed as they should; they change nothing.
//
// TestCrashFeed runs the same child with the change feed on
// (LOCALTABLE_CRASH_FEED set): a watcher in the child prints each change
// it receives, "W <rev> <commit> <last> <kind> <table> <pk> <rk> <seq>
// <etag>", and the parent also checks the feed after each kill
// (crashfeed_test.go).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage/pebble"
)

var crashCycles = flag.Int("crash.cycles", 20, "kill cycles of TestCrash and TestCrashFeed (TestCrashFeed: at most 6 with -short)")

const (
	crashEnvDir     = "LOCALTABLE_CRASH_DIR"
	crashEnvCycle   = "LOCALTABLE_CRASH_CYCLE"
	crashEnvFeed    = "LOCALTABLE_CRASH_FEED"
	crashTable      = "Crash"
	crashGoroutines = 4
	crashKeys       = 8 // single-write rows per goroutine
)

// crashBatch is the number of rows of goroutine g's transaction group.
func crashBatch(g int) int { return 3 + 2*g }

// crashState is the state of a key, or of a whole transaction group.
type crashState struct {
	present bool
	seq     int64
	etag    localtable.ETag // "" when unknown (a write not acknowledged)
}

func crashEntity(pk, rk string, seq int64) localtable.Entity {
	return localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: localtable.Properties{
		"Seq": localtable.Int64Value(seq),
		"V":   localtable.StringValue("value-" + strconv.FormatInt(seq, 10)),
	}}
}

func crashRow(i int) string { return fmt.Sprintf("r%02d", i) }

// TestCrashChild is the child process of TestCrash; it does nothing unless
// LOCALTABLE_CRASH_DIR is set. It writes until it is killed (or for at most
// 30 seconds, should its parent die).
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnvDir)
	if dir == "" {
		t.Skip("run by TestCrash")
	}
	cycle, _ := strconv.ParseInt(os.Getenv(crashEnvCycle), 10, 64)
	feed := os.Getenv(crashEnvFeed) != ""
	db, err := pebble.Open(dir, nil) // sync on commit, the default
	if err != nil {
		t.Fatal(err)
	}
	a, err := localtable.Open(&localtable.Options{Engine: db, Feed: crashFeedOptions(feed)})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := a.GetTable(context.Background(), crashTable)
	if err != nil {
		t.Fatal(err)
	}
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		line := fmt.Appendf(nil, format+"\n", args...)
		outMu.Lock()
		defer outMu.Unlock()
		os.Stdout.Write(line) // one write(2) of a short line: atomic on a pipe
	}
	fail := func(format string, args ...any) {
		say("E "+format, args...)
		os.Exit(3)
	}
	stop := time.Now().Add(30 * time.Second)
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	if feed {
		// From the revision before the first write of this child.
		after, err := a.Revision(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ready.Add(1)
		go crashWatch(a, after, &ready, say, fail)
	}
	ready.Add(crashGoroutines)
	for g := range crashGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			crashWorker(tbl, g, cycle, &ready, stop, say, fail)
		}()
	}
	ready.Wait()
	say("ready")
	wg.Wait()
	os.Exit(0)
}

func crashWorker(tbl *localtable.Table, g int, cycle int64, ready *sync.WaitGroup, stop time.Time, say func(string, ...any), fail func(string, ...any)) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(cycle), uint64(g)))
	spk, bpk := fmt.Sprintf("s%d", g), fmt.Sprintf("b%d", g)
	nb := crashBatch(g)
	read := func(pk, rk string) crashState {
		e, err := tbl.Get(ctx, pk, rk, nil)
		if err != nil {
			return crashState{}
		}
		return crashState{present: true, seq: e.Properties["Seq"].Int64(), etag: e.ETag}
	}
	// Resume from the stored state, which the parent has checked.
	keys := make([]crashState, crashKeys)
	for k := range keys {
		keys[k] = read(spk, crashRow(k))
	}
	group := read(bpk, crashRow(0))
	ready.Done()

	stale := make([]localtable.ETag, crashKeys) // an ETag each key had before
	seq := cycle << 32
	for time.Now().Before(stop) {
		seq++
		if rng.IntN(8) == 0 {
			crashFail(ctx, tbl, g, rng, seq, keys, stale, group, say, fail)
			continue
		}
		if rng.IntN(3) == 0 {
			// A transaction over the whole group.
			var op string
			typ := localtable.ActionUpsertMerge
			ifMatch := localtable.ETag("")
			switch {
			case !group.present:
				op, typ = "insert", localtable.ActionInsert
			case rng.IntN(4) == 0:
				op, typ, ifMatch = "delete", localtable.ActionDelete, group.etag
			case rng.IntN(2) == 0:
				op, typ, ifMatch = "replace", localtable.ActionUpdateReplace, group.etag
			default:
				op = "merge"
			}
			acts := make([]localtable.Action, nb)
			for i := range acts {
				acts[i] = localtable.Action{Type: typ, Entity: crashEntity(bpk, crashRow(i), seq), IfMatch: ifMatch}
			}
			present := typ != localtable.ActionDelete
			say("I %d B - %s %d %d", g, op, b2i(present), seq)
			tags, err := tbl.Transact(ctx, acts)
			if err != nil {
				fail("%d transact %s seq %d: %v", g, op, seq, err)
			}
			group = crashState{present: present, seq: seq, etag: tags[0]}
			say("A %d %s", g, tags[0])
			continue
		}
		k := rng.IntN(crashKeys)
		cur := &keys[k]
		e := crashEntity(spk, crashRow(k), seq)
		var op string
		var tag localtable.ETag
		var err error
		present := true
		switch {
		case !cur.present && rng.IntN(2) == 0:
			op = "insert"
			say("I %d S %s %s 1 %d", g, crashRow(k), op, seq)
			tag, err = tbl.Insert(ctx, e)
		case !cur.present:
			op = "upsert"
			say("I %d S %s %s 1 %d", g, crashRow(k), op, seq)
			tag, err = tbl.Upsert(ctx, e, nil)
		case rng.IntN(4) == 0:
			op, present = "delete", false
			say("I %d S %s %s 0 %d", g, crashRow(k), op, seq)
			err = tbl.Delete(ctx, spk, crashRow(k), &localtable.DeleteOptions{IfMatch: cur.etag})
		case rng.IntN(2) == 0:
			op = "update"
			say("I %d S %s %s 1 %d", g, crashRow(k), op, seq)
			tag, err = tbl.Update(ctx, e, &localtable.UpdateOptions{IfMatch: cur.etag})
		default:
			op = "merge"
			say("I %d S %s %s 1 %d", g, crashRow(k), op, seq)
			tag, err = tbl.Upsert(ctx, e, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
		}
		if err != nil {
			fail("%d %s %s seq %d: %v", g, op, crashRow(k), seq, err)
		}
		if cur.present {
			stale[k] = cur.etag
		}
		*cur = crashState{present: present, seq: seq, etag: tag}
		say("A %d %s", g, tag)
	}
}

// crashFail makes a call of goroutine g that must fail and change
// nothing: an insert of a present row, an update or a delete with a stale
// ETag, or a transaction over the group whose last action fails.
func crashFail(ctx context.Context, tbl *localtable.Table, g int, rng *rand.Rand, seq int64, keys []crashState, stale []localtable.ETag, group crashState, say, fail func(string, ...any)) {
	spk, bpk := fmt.Sprintf("s%d", g), fmt.Sprintf("b%d", g)
	k := rng.IntN(crashKeys)
	cur, row := keys[k], crashRow(k)
	var op string
	var want error
	var err error
	switch {
	case rng.IntN(2) == 0:
		// All rows but the last merged, the last inserted though present
		// or replaced though absent.
		op = "fail-tx"
		nb := crashBatch(g)
		acts := make([]localtable.Action, nb)
		for i := range acts {
			acts[i] = localtable.Action{Type: localtable.ActionUpsertMerge, Entity: crashEntity(bpk, crashRow(i), seq)}
		}
		if group.present {
			acts[nb-1].Type, want = localtable.ActionInsert, localtable.ErrEntityExists
		} else {
			acts[nb-1].Type, want = localtable.ActionUpdateReplace, localtable.ErrEntityNotFound
		}
		say("I %d B - %s 0 %d", g, op, seq)
		_, err = tbl.Transact(ctx, acts)
	case cur.present && rng.IntN(2) == 0:
		op, want = "fail-insert", localtable.ErrEntityExists
		say("I %d S %s %s 1 %d", g, row, op, seq)
		_, err = tbl.Insert(ctx, crashEntity(spk, row, seq))
	case cur.present && stale[k] != "" && rng.IntN(2) == 0:
		op, want = "fail-update", localtable.ErrConditionNotMet
		say("I %d S %s %s 1 %d", g, row, op, seq)
		_, err = tbl.Update(ctx, crashEntity(spk, row, seq), &localtable.UpdateOptions{IfMatch: stale[k]})
	case cur.present && stale[k] != "":
		op, want = "fail-delete", localtable.ErrConditionNotMet
		say("I %d S %s %s 0 %d", g, row, op, seq)
		err = tbl.Delete(ctx, spk, row, &localtable.DeleteOptions{IfMatch: stale[k]})
	default:
		op, want = "fail-update", localtable.ErrEntityNotFound
		if cur.present {
			want = localtable.ErrConditionNotMet
		}
		say("I %d S %s %s 1 %d", g, row, op, seq)
		_, err = tbl.Update(ctx, crashEntity(spk, row, seq), &localtable.UpdateOptions{IfMatch: "W/\"datetime'2001-01-01T00%3A00%3A00.0000000Z'\""})
	}
	if !errors.Is(err, want) {
		fail("%d %s %s seq %d: error %v, want %v", g, op, row, seq, err, want)
	}
	say("X %d", g)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// crashIntent is a write a child announced.
type crashIntent struct {
	key   string // "S <g> <row>" or "B <g>"
	state crashState
	fails bool                  // a call meant to fail: it changes nothing
	kind  localtable.ChangeKind // the change it makes, if it does
}

// crashModel is what the parent knows of the store.
type crashModel struct {
	acked   map[string]crashState // by intent key
	pending [crashGoroutines]*crashIntent

	acks, batchAcks, fails int // acknowledged writes, of them transactions; calls that failed as meant

	// Writes in flight at the kill: found applied, or not.
	inflightApplied, inflightLost int

	// For the feed (TestCrashFeed): each key's changes, acknowledged or
	// found applied, in order; the seqs of the calls that failed; and
	// what the child's watcher received in the current cycle.
	history map[string][]crashChange
	failed  map[[2]int64]bool // by goroutine and seq
	watched []crashChange
}

func newCrashModel() *crashModel {
	return &crashModel{acked: make(map[string]crashState), history: make(map[string][]crashChange), failed: make(map[[2]int64]bool)}
}

// crashKind is the change a write of op makes to a key that is present
// or not.
func crashKind(op string, present bool) localtable.ChangeKind {
	switch {
	case op == "delete":
		return localtable.ChangeDelete
	case !present || op == "insert":
		return localtable.ChangeInsert
	case op == "merge":
		return localtable.ChangeMerge
	default:
		return localtable.ChangeReplace
	}
}

// apply records the write p, acknowledged or found applied.
func (m *crashModel) apply(p *crashIntent) {
	m.acked[p.key] = p.state
	etag := p.state.etag
	if !p.state.present {
		etag = ""
	}
	m.history[p.key] = append(m.history[p.key], crashChange{kind: p.kind, seq: p.state.seq, etag: etag})
}

// settle records the state found for key after a crash, and reports
// whether its goroutine's write in flight was applied.
func (m *crashModel) settle(key string, g int, got crashState) bool {
	applied := false
	if p := m.pending[g]; p != nil && p.key == key && !p.fails {
		if matches(got, []crashState{p.state}) && !matches(got, []crashState{m.acked[key]}) {
			m.inflightApplied++
			applied = true
			p.state.etag = got.etag
			m.apply(p)
		} else {
			m.inflightLost++
		}
	}
	m.acked[key] = got
	return applied
}

func (m *crashModel) line(t *testing.T, line string) {
	f := strings.Fields(line)
	switch {
	case len(f) == 0:
	case f[0] == "I" && len(f) == 7:
		g, _ := strconv.Atoi(f[1])
		seq, _ := strconv.ParseInt(f[6], 10, 64)
		key := "B " + f[1]
		if f[2] == "S" {
			key = "S " + f[1] + " " + f[3]
		}
		if m.pending[g] != nil {
			t.Fatalf("goroutine %d announced a write before its last was acknowledged", g)
		}
		fails := strings.HasPrefix(f[4], "fail-")
		if fails {
			m.failed[[2]int64{int64(g), seq}] = true
		}
		m.pending[g] = &crashIntent{key: key, state: crashState{present: f[5] == "1", seq: seq}, fails: fails,
			kind: crashKind(f[4], m.acked[key].present)}
	case (f[0] == "A" || f[0] == "X") && len(f) >= 2:
		g, _ := strconv.Atoi(f[1])
		p := m.pending[g]
		if p == nil || p.fails != (f[0] == "X") {
			t.Fatalf("goroutine %d: %q does not answer its intent %+v", g, line, p)
		}
		m.pending[g] = nil
		if p.fails {
			m.fails++
			return
		}
		p.state.etag = localtable.ETag(strings.Join(f[2:], " "))
		m.apply(p)
		m.acks++
		if p.key[0] == 'B' {
			m.batchAcks++
		}
	case f[0] == "W":
		c, err := parseCrashChange(f)
		if err != nil {
			t.Fatalf("watcher line %q: %v", line, err)
		}
		m.watched = append(m.watched, c)
	case f[0] == "E":
		t.Fatalf("child failed: %s", line)
	}
}

// allowed returns the states key may be in after a crash.
func (m *crashModel) allowed(key string, g int) []crashState {
	s := []crashState{m.acked[key]}
	if p := m.pending[g]; p != nil && p.key == key && !p.fails {
		s = append(s, p.state)
	}
	return s
}

func matches(got crashState, allowed []crashState) bool {
	for _, s := range allowed {
		if got.present != s.present {
			continue
		}
		if !got.present {
			return true
		}
		if got.seq == s.seq && (s.etag == "" || s.etag == got.etag) {
			return true
		}
	}
	return false
}

func TestCrash(t *testing.T) {
	if os.Getenv(crashEnvDir) != "" {
		t.Skip("in the child")
	}
	runCrash(t, false, *crashCycles)
}

// runCrash runs cycles kill cycles of the child, with the feed on or off,
// and checks the store after each.
func runCrash(t *testing.T, feed bool, cycles int) {
	dir := t.TempDir()
	a := openCrashAccount(t, dir, nil, feed)
	if _, err := a.CreateTable(ctx, crashTable); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	m := newCrashModel()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var keysChecked, batchesChecked int
	start := time.Now()
	var fc *crashFeedCheck
	for cycle := 1; cycle <= cycles; cycle++ {
		delay := time.Duration(20+rng.IntN(281)) * time.Millisecond
		m.watched = m.watched[:0]
		crashRunChild(t, dir, cycle, delay, feed, m)

		// Reopen with a clock far behind every stored Timestamp.
		past := tabletest.NewFakeClock(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
		a := openCrashAccount(t, dir, past.Now, feed)
		tbl, err := a.GetTable(ctx, crashTable)
		if err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		if feed {
			fc = checkCrashFeed(t, cycle, a, m, fc)
		}
		var maxTS time.Time
		seen := map[localtable.ETag]bool{}
		for g := range crashGoroutines {
			for k := range crashKeys {
				key := fmt.Sprintf("S %d %s", g, crashRow(k))
				got := crashGet(t, tbl, fmt.Sprintf("s%d", g), crashRow(k), &maxTS)
				if allowed := m.allowed(key, g); !matches(got, allowed) {
					t.Fatalf("cycle %d: %s is %+v; want one of %+v", cycle, key, got, allowed)
				}
				if got.present && seen[got.etag] {
					t.Fatalf("cycle %d: ETag %s stored twice", cycle, got.etag)
				}
				seen[got.etag] = true
				fc.settled(t, key, m.settle(key, g, got), got)
				keysChecked++
			}
			key := fmt.Sprintf("B %d", g)
			var first crashState
			for i := range crashBatch(g) {
				got := crashGet(t, tbl, fmt.Sprintf("b%d", g), crashRow(i), &maxTS)
				if i == 0 {
					first = got
				} else if got != first {
					t.Fatalf("cycle %d: transaction group %d partly applied: row 0 is %+v, row %d is %+v", cycle, g, first, i, got)
				}
			}
			if allowed := m.allowed(key, g); !matches(first, allowed) {
				t.Fatalf("cycle %d: group %d is %+v; want one of %+v", cycle, g, first, allowed)
			}
			fc.settled(t, key, m.settle(key, g, first), first)
			batchesChecked++
			m.pending[g] = nil
		}

		// Writes after the reopen get later Timestamps and new ETags, though
		// the clock is years behind.
		var prev time.Time
		fc.startResume(t, a)
		for i := range 3 {
			tag, err := tbl.Upsert(ctx, crashEntity("probe", "p", int64(i)), nil)
			if err != nil {
				t.Fatal(err)
			}
			m.apply(&crashIntent{key: "P", kind: crashKind("upsert", cycle > 1 || i > 0), state: crashState{present: true, seq: int64(i), etag: tag}})
			e, err := tbl.Get(ctx, "probe", "p", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !e.Timestamp.After(maxTS) || !e.Timestamp.After(prev) || e.ETag != tag || seen[tag] {
				t.Fatalf("cycle %d: write after reopen has Timestamp %v (ETag %s); stored maximum %v, previous %v",
					cycle, e.Timestamp, tag, maxTS, prev)
			}
			seen[tag], prev = true, e.Timestamp
		}
		fc.finishResume(t, m)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d kill cycles in %v: %d acknowledged writes (%d transactions) and %d calls failed as meant received; %d keys and %d transaction groups checked against them; writes in flight at the kill: %d applied, %d not",
		cycles, time.Since(start).Round(time.Millisecond), m.acks, m.batchAcks, m.fails, keysChecked, batchesChecked, m.inflightApplied, m.inflightLost)
	if feed {
		t.Logf("feed: %d changes checked after the kills, %d of them received by the child's watcher; %d resumes checked", fc.changes, fc.watched, fc.resumes)
	}
	if m.acks == 0 || m.batchAcks == 0 || m.fails == 0 {
		t.Fatalf("the child acknowledged %d writes (%d transactions) and %d failed calls; want some of each", m.acks, m.batchAcks, m.fails)
	}
}

func openCrashAccount(t *testing.T, dir string, clock func() time.Time, feed bool) *localtable.Account {
	t.Helper()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatalf("pebble.Open after crash: %v", err)
	}
	a, err := localtable.Open(&localtable.Options{Engine: db, Clock: clock, Feed: crashFeedOptions(feed)})
	if err != nil {
		t.Fatalf("localtable.Open after crash: %v", err)
	}
	return a
}

func crashGet(t *testing.T, tbl *localtable.Table, pk, rk string, maxTS *time.Time) crashState {
	t.Helper()
	e, err := tbl.Get(ctx, pk, rk, nil)
	if err != nil {
		if errors.Is(err, localtable.ErrEntityNotFound) {
			return crashState{}
		}
		t.Fatalf("Get(%s, %s): %v", pk, rk, err)
	}
	if e.Timestamp.After(*maxTS) {
		*maxTS = e.Timestamp
	}
	return crashState{present: true, seq: e.Properties["Seq"].Int64(), etag: e.ETag}
}

// crashRunChild runs one child on dir, with the feed on or off, kills it
// delay after it is ready, and feeds its lines to m.
func crashRunChild(t *testing.T, dir string, cycle int, delay time.Duration, feed bool, m *crashModel) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnvDir+"="+dir, crashEnvCycle+"="+strconv.Itoa(cycle))
	if feed {
		cmd.Env = append(cmd.Env, crashEnvFeed+"=1")
	}
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
	killed := false
	var timer *time.Timer
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" && timer == nil {
			timer = time.AfterFunc(delay, func() { cmd.Process.Kill() })
			killed = true
			continue
		}
		if line != "" && line[0] == 'E' {
			cmd.Process.Kill()
		}
		m.line(t, line)
	}
	// The last line may be cut short by the kill: Scanner returns it as a
	// line only if it ended with a newline, and an intent or ack is written
	// in one write(2) of under PIPE_BUF bytes, so it arrived whole or not at all.
	err = cmd.Wait()
	if !killed {
		t.Fatalf("cycle %d: child exited before it was ready: %v\n%s", cycle, err, stderr.String())
	}
	if timer != nil {
		timer.Stop()
	}
}
