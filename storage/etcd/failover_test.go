package etcd_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage"
)

// leader returns the member that leads the cluster, or nil.
func (c *cluster) leader() *member {
	for _, m := range c.members {
		m.mu.Lock()
		e := m.e
		m.mu.Unlock()
		if e != nil && e.Server.Leader() == e.Server.MemberID() {
			return m
		}
	}
	return nil
}

// follower returns a running member that does not lead, other than not.
func (c *cluster) follower(not *member) *member {
	for _, m := range c.members {
		if m == not {
			continue
		}
		m.mu.Lock()
		e := m.e
		m.mu.Unlock()
		if e != nil && e.Server.Leader() != e.Server.MemberID() {
			return m
		}
	}
	return nil
}

// txOutcome is what a writer learned of one transaction.
type txOutcome struct {
	writer, seq int
	tag         localtable.ETag // when acknowledged
	err         error           // otherwise
}

// TestMemberRestart kills members of the cluster (the leader, then a
// follower) and restarts them while writers run entity group transactions
// through the table layer. Afterwards every acknowledged transaction is
// present whole with its ETag, every refused one (ErrUnavailable) is
// absent, every one of unknown outcome (ErrCommitUnknown) is present whole
// or absent whole, and no writer saw any other error.
func TestMemberRestart(t *testing.T) {
	prefix := newPrefix("restart")
	a, _ := openAccount(t, prefix)
	tbl, err := a.CreateTable(bg(), "Restart")
	must(t, err)

	const writers, perTx = 3, 5
	var (
		stop     atomic.Bool
		mu       sync.Mutex
		outcomes []txOutcome
		wg       sync.WaitGroup
		phase    atomic.Int32 // 0 before the kill, 1 while a member is down, 2 after
		ackedIn  [3]atomic.Int32
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; !stop.Load(); seq++ {
				var acts []localtable.Action
				for i := range perTx {
					acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{
						PartitionKey: fmt.Sprintf("w%d", w), RowKey: fmt.Sprintf("%06d-%d", seq, i),
						Properties: localtable.Properties{"Seq": localtable.Int32Value(int32(seq))},
					}})
				}
				p := phase.Load()
				tags, err := tbl.Transact(bg(), acts)
				o := txOutcome{writer: w, seq: seq, err: err}
				if err == nil {
					o.tag = tags[0]
					ackedIn[p].Add(1)
				}
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
			}
		}()
	}

	// A reader queries all the while: reads are retried through the
	// failover and must never fail.
	var reads atomic.Int32
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			for _, err := range tbl.QueryAll(bg(), &localtable.QueryOptions{PageSize: 100}) {
				if err != nil {
					t.Errorf("query during failover: %v", err)
					return
				}
			}
			reads.Add(1)
		}
	}()

	var last *member
	rounds := []func() *member{testCluster.leader, func() *member { return testCluster.follower(last) }}
	if testing.Short() {
		rounds = rounds[:1]
	}
	time.Sleep(500 * time.Millisecond)
	for _, pick := range rounds {
		m := pick()
		last = m
		if m == nil {
			t.Fatal("no member to kill: the cluster has no leader")
		}
		t.Logf("killing member %s", m.name)
		m.kill()
		phase.Store(1)
		time.Sleep(3 * time.Second)
		t.Logf("restarting member %s", m.name)
		if err := m.start(); err != nil {
			t.Fatalf("restart: %v", err)
		}
		phase.Store(2)
		// Wait for writes to be acknowledged again: a commit caught by the
		// kill ends only at its timeout, which on a loaded machine outlasts
		// any fixed pause.
		before := ackedIn[2].Load()
		for deadline := time.Now().Add(60 * time.Second); ackedIn[2].Load() < before+int32(writers) && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
	}
	stop.Store(true)
	wg.Wait()

	// Check through an account of its own, over a client of its own.
	check, _ := openAccount(t, prefix)
	ctbl := check.Table("Restart")
	var acked, refused, unknown, unknownApplied int
	for _, o := range outcomes {
		present := 0
		for i := range perTx {
			e, err := ctbl.Get(bg(), fmt.Sprintf("w%d", o.writer), fmt.Sprintf("%06d-%d", o.seq, i), nil)
			switch {
			case err == nil:
				present++
				if o.err == nil && e.ETag != o.tag {
					t.Errorf("writer %d tx %d: entity %d has ETag %s, acknowledged %s", o.writer, o.seq, i, e.ETag, o.tag)
				}
			case errors.Is(err, localtable.ErrEntityNotFound):
			default:
				t.Fatalf("checking: %v", err)
			}
		}
		switch {
		case o.err == nil:
			acked++
			if present != perTx {
				t.Errorf("writer %d tx %d: acknowledged, but %d of %d entities present", o.writer, o.seq, present, perTx)
			}
		case errors.Is(o.err, storage.ErrCommitUnknown):
			unknown++
			if present != 0 && present != perTx {
				t.Errorf("writer %d tx %d: half applied (%d of %d) after %v", o.writer, o.seq, present, perTx, o.err)
			}
			if present == perTx {
				unknownApplied++
			}
		case errors.Is(o.err, storage.ErrUnavailable):
			refused++
			if present != 0 {
				t.Errorf("writer %d tx %d: refused (%v), but %d entities present", o.writer, o.seq, o.err, present)
			}
		default:
			t.Errorf("writer %d tx %d: unexpected error %v", o.writer, o.seq, o.err)
		}
	}
	t.Logf("%d full scans", reads.Load())
	t.Logf("%d transactions: %d acknowledged (%d before, %d while a member was down, %d after), %d refused, %d of unknown outcome (%d applied)",
		len(outcomes), acked, ackedIn[0].Load(), ackedIn[1].Load(), ackedIn[2].Load(), refused, unknown, unknownApplied)
	if ackedIn[0].Load() == 0 || ackedIn[2].Load() == 0 {
		t.Errorf("writers made no progress before the kill or after the restart")
	}
}
