package localtabletest_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
)

func TestWaitForChange(t *testing.T) {
	srv := localtabletest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := srv.Client.CreateTable(ctx, "orders", nil); err != nil {
		t.Fatal(err)
	}
	c := srv.Client.NewClient("orders")
	if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"a"}`), nil); err != nil {
		t.Fatal(err)
	}
	// A change made before the call is found.
	got, err := srv.WaitForChange(ctx, "ORDERS", func(c localtable.Change) bool { return c.Kind == localtable.ChangeInsert })
	if err != nil || got.Entity.RowKey != "a" || got.Table != "orders" {
		t.Fatalf("made before: %+v, %v", got, err)
	}
	// One a background writer makes later is waited for.
	rev, err := srv.Account.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		c.UpsertEntity(context.Background(), []byte(`{"PartitionKey":"p","RowKey":"a","Status":"done"}`), nil)
	}()
	got, err = srv.WaitForChange(ctx, "orders", func(c localtable.Change) bool { return c.Revision > rev })
	if err != nil || got.Kind != localtable.ChangeMerge || got.Entity.Properties["Status"].String() != "done" {
		t.Fatalf("made later: %+v, %v", got, err)
	}
	// None comes: the context's error.
	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancelShort()
	if _, err := srv.WaitForChange(short, "other", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("no change: %v", err)
	}
}

// TestChangesStreamOverHTTP: NewServer streams GET $changes, and closing
// it ends a stream still open rather than waiting for it.
func TestChangesStreamOverHTTP(t *testing.T) {
	srv := localtabletest.NewServer(t, localtabletest.WithoutAuth())
	ctx := context.Background()
	resp, err := http.Get(srv.URL + "/$changes?from=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := srv.Client.CreateTable(ctx, "streamed", nil); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() || !strings.Contains(sc.Text(), `"kind":"TableCreated"`) {
		t.Fatalf("line %q, %v", sc.Text(), sc.Err())
	}
}
