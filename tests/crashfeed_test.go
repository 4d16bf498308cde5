//go:build unix

package tests

// The feed's side of the crash test (crash_test.go): with the change feed
// on, a watcher in the child prints every change it receives, and after
// each kill the parent checks that the feed holds exactly the changes of
// the writes that survived: every acknowledged write, in its key's order,
// at the revision the watcher saw it at; the write in flight at the kill
// if and only if the data has it; no call that failed; revisions from 1
// without a gap, each commit's changes together; and that a watcher
// resuming from a revision seen before the kill gets exactly the changes
// after it, then the new commits, numbered on from the last revision kept.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable"
)

// crashChange is a change of the feed as the child prints it and the
// parent compares it; for a key's history only kind, seq and etag count.
type crashChange struct {
	rev, commit   localtable.Revision
	last          bool
	kind          localtable.ChangeKind
	table, pk, rk string
	seq           int64 // the entity's Seq; -1 for a delete or a table's change
	etag          localtable.ETag
}

func crashFeedOptions(feed bool) *localtable.FeedOptions {
	if !feed {
		return nil
	}
	return &localtable.FeedOptions{} // keeps DefaultFeedChanges: the whole run
}

func toCrashChange(c *localtable.Change) crashChange {
	cc := crashChange{rev: c.Revision, commit: c.Commit, last: c.Last, kind: c.Kind, table: c.Table,
		pk: c.Entity.PartitionKey, rk: c.Entity.RowKey, seq: -1, etag: c.Entity.ETag}
	if v, ok := c.Entity.Properties["Seq"]; ok {
		cc.seq = v.Int64()
	}
	return cc
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func undash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

func (c crashChange) String() string {
	return fmt.Sprintf("W %d %d %d %d %s %s %s %d %s", c.rev, c.commit, b2i(c.last), c.kind, dash(c.table), dash(c.pk), dash(c.rk), c.seq, dash(string(c.etag)))
}

func parseCrashChange(f []string) (crashChange, error) {
	if len(f) != 10 {
		return crashChange{}, errors.New("want 10 fields")
	}
	var n [5]int64
	for i, s := range []string{f[1], f[2], f[3], f[4], f[8]} {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return crashChange{}, err
		}
		n[i] = v
	}
	return crashChange{rev: localtable.Revision(n[0]), commit: localtable.Revision(n[1]), last: n[2] == 1,
		kind: localtable.ChangeKind(n[3]), table: undash(f[5]), pk: undash(f[6]), rk: undash(f[7]),
		seq: n[4], etag: localtable.ETag(undash(f[9]))}, nil
}

// crashWatch is the child's watcher: it prints every change after
// revision after until the child is killed.
func crashWatch(a *localtable.Account, after localtable.Revision, ready *sync.WaitGroup, say, fail func(string, ...any)) {
	ready.Done()
	for c, err := range a.Watch(context.Background(), &localtable.WatchOptions{After: after}) {
		if err != nil {
			fail("watch: %v", err)
		}
		say("%s", toCrashChange(&c))
	}
}

// TestCrashFeed is TestCrash with the change feed on: the data is checked
// as there, and the feed against it (checkCrashFeed).
func TestCrashFeed(t *testing.T) {
	if os.Getenv(crashEnvDir) != "" {
		t.Skip("in the child")
	}
	cycles := *crashCycles
	if testing.Short() {
		cycles = min(cycles, 6)
	}
	runCrash(t, true, cycles)
}

// crashReadFeed returns the changes of a's feed after revision after, up
// to revision upto.
func crashReadFeed(t *testing.T, a *localtable.Account, after, upto localtable.Revision) []crashChange {
	t.Helper()
	var out []crashChange
	if upto <= after {
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for c, err := range a.Watch(ctx, &localtable.WatchOptions{After: after}) {
		if err != nil {
			t.Fatalf("watch after %d: %v", after, err)
		}
		out = append(out, toCrashChange(&c))
		if c.Revision >= upto {
			return out
		}
	}
	t.Fatalf("watch after %d ended at %d changes, before revision %d", after, len(out), upto)
	return nil
}

// crashFeedCheck is what checkCrashFeed found, for the checks that follow
// in the cycle. Its methods do nothing on a nil *crashFeedCheck (the feed
// off).
type crashFeedCheck struct {
	cycle    int
	all      []crashChange          // the feed after the reopen
	last     map[string]crashChange // each key's last change
	inflight map[string]bool        // keys whose write in flight at the kill is in the feed

	// The live resume: a watcher started after resumeAt before the
	// probe writes.
	resumeAt localtable.Revision
	resumed  chan crashChange
	stop     context.CancelFunc
	done     chan error

	changes, watched, resumes int // totals over the cycles, for the log
}

// crashKey returns the model's key of a change: "S <g> <row>" for a
// single-write row, "B <g>" for a transaction group, "P" for the probe.
func crashKey(c crashChange) (string, int, bool) {
	var g int
	switch {
	case c.pk == "probe" && c.rk == "p":
		return "P", -1, true
	case len(c.pk) == 2 && (c.pk[0] == 's' || c.pk[0] == 'b'):
		g = int(c.pk[1] - '0')
	default:
		return "", 0, false
	}
	if g < 0 || g >= crashGoroutines {
		return "", 0, false
	}
	if c.pk[0] == 'b' {
		return fmt.Sprintf("B %d", g), g, true
	}
	return fmt.Sprintf("S %d %s", g, c.rk), g, true
}

// checkCrashFeed checks the feed of a, just reopened after the kill of
// cycle, against m and what the child's watcher received; prev is the
// check of the cycle before (nil for the first), whose totals it carries
// on.
func checkCrashFeed(t *testing.T, cycle int, a *localtable.Account, m *crashModel, prev *crashFeedCheck) *crashFeedCheck {
	t.Helper()
	rev, err := a.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fc := &crashFeedCheck{cycle: cycle, last: map[string]crashChange{}, inflight: map[string]bool{}}
	if prev != nil {
		fc.changes, fc.watched, fc.resumes = prev.changes, prev.watched, prev.resumes
	}
	fc.all = crashReadFeed(t, a, 0, rev)

	// Revisions 1 … rev, gapless, each commit's changes together.
	if len(fc.all) != int(rev) {
		t.Fatalf("cycle %d: the feed holds %d changes up to revision %d", cycle, len(fc.all), rev)
	}
	for i, c := range fc.all {
		want := c.rev
		if i > 0 && !fc.all[i-1].last {
			want = fc.all[i-1].commit
		}
		if c.rev != localtable.Revision(i+1) || c.commit != want {
			t.Fatalf("cycle %d: change %d is %v: want revision %d of commit %d", cycle, i, c, i+1, want)
		}
	}
	if rev == 0 || !fc.all[rev-1].last {
		t.Fatalf("cycle %d: the feed's last commit is cut short or missing (revision %d)", cycle, rev)
	}
	if c := fc.all[0]; c.kind != localtable.ChangeTableCreated || c.table != crashTable {
		t.Fatalf("cycle %d: the first change is %v, want the table's creation", cycle, c)
	}

	// Each key's changes; a transaction's are one commit of its group's
	// rows in order, one change of the key's history.
	proj := map[string][]crashChange{}
	for i := 1; i < len(fc.all); {
		c := fc.all[i]
		key, g, ok := crashKey(c)
		if !ok || c.table != crashTable || c.kind == localtable.ChangeTableCreated || c.kind == localtable.ChangeTableDeleted {
			t.Fatalf("cycle %d: change %v was made by no write", cycle, c)
		}
		if c.kind != localtable.ChangeDelete && key != "P" && m.failed[[2]int64{int64(g), c.seq}] {
			t.Fatalf("cycle %d: change %v was made by a call that failed", cycle, c)
		}
		n := 1
		if key[0] == 'B' {
			n = crashBatch(g)
		}
		if i+n > len(fc.all) {
			t.Fatalf("cycle %d: commit %d of group %s is cut short", cycle, c.commit, key)
		}
		for k, r := range fc.all[i : i+n] {
			if r.commit != c.rev || r.last != (k == n-1) || r.pk != c.pk || r.rk != crashRow(k) && key[0] == 'B' ||
				r.kind != c.kind || r.seq != c.seq {
				t.Fatalf("cycle %d: commit %d does not hold exactly the write of %s: change %d is %v, the first %v", cycle, c.rev, key, k, r, c)
			}
		}
		proj[key] = append(proj[key], c)
		fc.last[key] = c
		i += n
	}

	// Against the writes: each key's acknowledged writes in order, then
	// its goroutine's write in flight at the kill, if it landed.
	pending := map[string]*crashIntent{}
	for _, p := range m.pending {
		if p != nil && !p.fails {
			pending[p.key] = p
		}
	}
	keys := map[string]bool{}
	for k := range proj {
		keys[k] = true
	}
	for k := range m.history {
		keys[k] = true
	}
	for key := range keys {
		got, want := proj[key], m.history[key]
		if p := pending[key]; p != nil && len(got) == len(want)+1 {
			want = append(slices.Clip(want), crashChange{kind: p.kind, seq: p.state.seq})
			fc.inflight[key] = true
		}
		if len(got) != len(want) {
			t.Fatalf("cycle %d: %s has %d changes in the feed; %d acknowledged writes (pending %+v)\nfeed %v\nwrites %v",
				cycle, key, len(got), len(m.history[key]), pending[key], got, m.history[key])
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.kind != w.kind || g.kind != localtable.ChangeDelete && (g.seq != w.seq || w.etag != "" && g.etag != w.etag) {
				t.Fatalf("cycle %d: %s's change %d in the feed is %v; the write was %+v", cycle, key, i, g, w)
			}
		}
	}

	// What the child's watcher received survived, at its revision.
	for _, w := range m.watched {
		if w.rev == 0 || w.rev > rev || fc.all[w.rev-1] != w {
			var kept any = "nothing"
			if w.rev > 0 && w.rev <= rev {
				kept = fc.all[w.rev-1]
			}
			t.Fatalf("cycle %d: the child's watcher received %v before the kill; the feed keeps %v at that revision (last %d)", cycle, w, kept, rev)
		}
	}

	// A watcher resuming from a revision it saw gets the changes after it.
	var at []localtable.Revision
	if n := len(m.watched); n > 0 {
		at = append(at, m.watched[n-1].rev, m.watched[rand.IntN(n)].rev)
	}
	for _, r := range at {
		if got := crashReadFeed(t, a, r, rev); !slices.Equal(got, fc.all[r:]) {
			t.Fatalf("cycle %d: resuming after %d got %d changes, want the %d after it", cycle, r, len(got), len(fc.all[r:]))
		}
		fc.resumes++
	}
	fc.resumeAt = rev
	if len(at) > 0 {
		fc.resumeAt = at[0]
	}
	fc.changes += len(fc.all)
	fc.watched += len(m.watched)
	return fc
}

// settled checks a key of the data against the feed: the write in flight
// at the kill was applied (the data has it) if and only if the feed has
// it, and the key's last change in the feed is what the data holds.
func (fc *crashFeedCheck) settled(t *testing.T, key string, applied bool, got crashState) {
	t.Helper()
	if fc == nil {
		return
	}
	if applied != fc.inflight[key] {
		t.Fatalf("cycle %d: %s: the write in flight at the kill is in the data: %v; in the feed: %v", fc.cycle, key, applied, fc.inflight[key])
	}
	last, ok := fc.last[key]
	present := ok && last.kind != localtable.ChangeDelete
	if got.present != present || present && (got.seq != last.seq || got.etag != last.etag) {
		t.Fatalf("cycle %d: %s is %+v in the data; its last change in the feed is %v", fc.cycle, key, got, last)
	}
}

// startResume starts a watcher on the reopened account from the last
// revision the child's watcher saw (or the last kept), before the probe
// writes.
func (fc *crashFeedCheck) startResume(t *testing.T, a *localtable.Account) {
	if fc == nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	fc.stop, fc.resumed, fc.done = cancel, make(chan crashChange, 1024), make(chan error, 1)
	go func() {
		defer close(fc.resumed)
		for c, err := range a.Watch(ctx, &localtable.WatchOptions{After: fc.resumeAt}) {
			if err != nil {
				fc.done <- err
				return
			}
			fc.resumed <- toCrashChange(&c)
		}
		fc.done <- nil
	}()
}

// finishResume checks that the watcher of startResume got the changes
// after its revision, then the probe's three, numbered on from the last
// revision kept.
func (fc *crashFeedCheck) finishResume(t *testing.T, m *crashModel) {
	t.Helper()
	if fc == nil {
		return
	}
	defer fc.stop()
	probes := m.history["P"][len(m.history["P"])-3:]
	want := len(fc.all) - int(fc.resumeAt) + len(probes)
	var got []crashChange
	timeout := time.After(time.Minute) // a hang, not a timing target
	for len(got) < want {
		select {
		case c, ok := <-fc.resumed:
			if !ok {
				t.Fatalf("cycle %d: the resumed watch ended: %v", fc.cycle, <-fc.done)
			}
			got = append(got, c)
		case <-timeout:
			t.Fatalf("cycle %d: the watcher resumed after %d got %d changes in a minute, want %d", fc.cycle, fc.resumeAt, len(got), want)
		}
	}
	tail := len(got) - len(probes)
	if !slices.Equal(got[:tail], fc.all[fc.resumeAt:]) {
		t.Fatalf("cycle %d: the watcher resumed after %d got other changes than the feed's", fc.cycle, fc.resumeAt)
	}
	for i, c := range got[tail:] {
		w := probes[i]
		if c.rev != localtable.Revision(len(fc.all)+i+1) || c.commit != c.rev || !c.last || c.kind != w.kind || c.seq != w.seq || c.etag != w.etag || c.pk != "probe" {
			t.Fatalf("cycle %d: the probe's write %d after the reopen is %v in the feed, want revision %d, %+v", fc.cycle, i, c, len(fc.all)+i+1, w)
		}
	}
	fc.resumes++
	fc.all = nil
}
