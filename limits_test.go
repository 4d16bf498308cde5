package localtable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

// transactionOfSize returns insert actions on partition "p" whose
// entities' PayloadSize adds up to exactly size, each entity within the
// 1 MiB EntitySize limit.
func transactionOfSize(t *testing.T, size int) []localtable.Action {
	t.Helper()
	const perEntity = 15 // String properties of 32,768 characters
	var acts []localtable.Action
	total := 0
	for i := 0; total < size; i++ {
		e := localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%03d", i), Properties: localtable.Properties{}}
		for j := 0; j < perEntity && total+localtable.PayloadSize(&e) < size; j++ {
			name := fmt.Sprintf("S%02d", j)
			e.Properties[name] = localtable.StringValue("")
			room := size - total - localtable.PayloadSize(&e)
			e.Properties[name] = localtable.StringValue(strings.Repeat("x", min(room, localtable.MaxStringUTF16)))
		}
		if n := localtable.EntitySize(&e); n > localtable.MaxEntitySize {
			t.Fatalf("entity %d is %d bytes by EntitySize", i, n)
		}
		total += localtable.PayloadSize(&e)
		acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: e})
	}
	sum := 0
	for i := range acts {
		sum += localtable.PayloadSize(&acts[i].Entity)
	}
	if sum != size || len(acts) > localtable.MaxTransactionActions {
		t.Fatalf("built %d actions of %d bytes; want %d bytes", len(acts), sum, size)
	}
	return acts
}

// TestTransactionSizeBoundary commits a transaction of exactly
// MaxTransactionSize bytes by PayloadSize, and refuses one of a byte more
// with ErrRequestBodyTooLarge, writing nothing.
func TestTransactionSizeBoundary(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		over := transactionOfSize(t, localtable.MaxTransactionSize+1)
		_, err := tbl.Transact(ctx, over)
		if !errors.Is(err, localtable.ErrRequestBodyTooLarge) {
			t.Fatalf("a transaction of MaxTransactionSize+1 bytes: %v, want ErrRequestBodyTooLarge", err)
		}
		if n := countEntities(t, tbl); n != 0 {
			t.Fatalf("the refused transaction wrote %d entities", n)
		}
		// The size comes before the errors of the actions, an invalid
		// one and a delete of an entity that does not exist.
		bad := append(append([]localtable.Action(nil), over...),
			localtable.Action{Type: localtable.ActionDelete, Entity: localtable.Entity{PartitionKey: "p", RowKey: "gone"}},
			localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "p", RowKey: "bad", Properties: localtable.Properties{"1x": localtable.Int32Value(1)}}})
		if _, err := tbl.Transact(ctx, bad); !errors.Is(err, localtable.ErrRequestBodyTooLarge) {
			t.Fatalf("a transaction of more than MaxTransactionSize bytes with an invalid action: %v, want ErrRequestBodyTooLarge", err)
		}
		exact := transactionOfSize(t, localtable.MaxTransactionSize)
		tags, err := tbl.Transact(ctx, exact)
		if err != nil {
			t.Fatalf("a transaction of exactly MaxTransactionSize bytes: %v", err)
		}
		if len(tags) != len(exact) {
			t.Fatalf("%d ETags for %d actions", len(tags), len(exact))
		}
		if n := countEntities(t, tbl); n != len(exact) {
			t.Fatalf("the transaction wrote %d entities, want %d", n, len(exact))
		}
	})
}

// TestPartitionLockSerializesWriters pauses a conditional update between
// its read of the entity and its commit, and starts a second update with
// the same If-Match on the same entity. The partition's write lock must
// keep the second from reading until the first has committed: it then
// fails with ErrConditionNotMet. Without the lock, the second would read
// the old ETag, pass its condition and commit, and one of the two updates
// would be lost; the hook sees it reach its commit while the first is
// paused.
func TestPartitionLockSerializesWriters(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		tag0, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"})
		if err != nil {
			t.Fatal(err)
		}
		bound, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		paused, release := make(chan struct{}), make(chan struct{})
		secondAtCommit := make(chan struct{}, 1)
		localtable.SetBeforeCommitHook(a, func(table string, acts []localtable.Action) {
			who := acts[0].Entity.Properties["Who"]
			if who.Kind() != localtable.KindString {
				return
			}
			switch who.String() {
			case "first":
				close(paused)
				select {
				case <-release:
				case <-bound.Done():
				}
			case "second":
				secondAtCommit <- struct{}{}
			}
		})
		update := func(who string) chan error {
			done := make(chan error, 1)
			go func() {
				e := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"Who": localtable.StringValue(who)}}
				_, err := tbl.Update(bound, e, &localtable.UpdateOptions{IfMatch: tag0})
				done <- err
			}()
			return done
		}
		wait := func(done chan error, what string) error {
			t.Helper()
			select {
			case err := <-done:
				return err
			case <-bound.Done():
				t.Fatalf("%s did not return", what)
				return nil
			}
		}
		first := update("first")
		select {
		case <-paused:
		case <-bound.Done():
			t.Fatal("the first update never reached its commit")
		}
		second := update("second")
		// The second update must wait for the partition: give it time to
		// show that it does not.
		select {
		case <-secondAtCommit:
			t.Error("the second update read the entity and reached its commit while the first held the partition between its read and its commit")
		case <-time.After(300 * time.Millisecond):
		}
		close(release)
		err1, err2 := wait(first, "the first update"), wait(second, "the second update")
		if err1 != nil {
			t.Fatalf("first update: %v", err1)
		}
		if !errors.Is(err2, localtable.ErrConditionNotMet) {
			t.Fatalf("second update with the same If-Match: %v, want ErrConditionNotMet (a lost update)", err2)
		}
		if e, err := tbl.Get(ctx, "p", "r", nil); err != nil || e.Properties["Who"].String() != "first" {
			t.Fatalf("entity after both: %v %v", e.Properties, err)
		}
	})
}
