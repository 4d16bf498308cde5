package localtabletest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	lt "github.com/localtable/localtable/localtabletest"
)

// One Clock times Timestamps, SAS validity and the request-date window;
// Advance moves them all, and the server's clients keep up.
func TestClockAdvance(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	srv := lt.New(t, lt.WithTime(start))
	if !srv.Clock.Manual() || !srv.Clock.Now().Equal(start) {
		t.Fatalf("clock %v", srv.Clock.Now())
	}
	c := srv.Client.NewClient("clocked")
	c.CreateTable(ctx, nil)
	addEntity(t, c, "p", "1")
	sasURL, err := c.GetTableSASURL(aztables.SASPermissions{Read: true}, start, start.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	sas, _ := aztables.NewClientWithNoCredential(sasURL, srv.ClientOptions())
	if _, err := sas.GetEntity(ctx, "p", "1", nil); err != nil {
		t.Fatalf("SAS within its window: %v", err)
	}
	// A client dated by the real clock is years away: refused.
	real := mustRealDated(t, srv)
	_, err = real.NewClient("clocked").GetEntity(ctx, "p", "1", nil)
	wantCode(t, err, 403, "AuthenticationFailed")

	srv.Clock.Advance(2 * time.Hour)
	addEntity(t, c, "p", "2") // the server's own clients keep up
	resp, err := c.GetEntity(ctx, "p", "2", nil)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Timestamp time.Time }
	json.Unmarshal(resp.Value, &e)
	if !e.Timestamp.Equal(start.Add(2 * time.Hour)) {
		t.Fatalf("Timestamp %v, want %v", e.Timestamp, start.Add(2*time.Hour))
	}
	_, err = sas.GetEntity(ctx, "p", "1", nil)
	wantCode(t, err, 403, "AuthenticationFailed") // the SAS expired by the clock
	srv.Clock.Set(start.Add(30 * time.Minute))
	if _, err := sas.GetEntity(ctx, "p", "1", nil); err != nil {
		t.Fatalf("SAS after Set back into its window: %v", err)
	}
}

// mustRealDated returns a Shared Key client that dates requests by the
// real clock, reaching the server through its transport.
func mustRealDated(t *testing.T, srv *lt.Server) *aztables.ServiceClient {
	t.Helper()
	o := &aztables.ClientOptions{}
	o.Transport = srv.ClientOptions().Transport
	c, err := aztables.NewServiceClientWithSharedKey(srv.ServiceURL, srv.Credential, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A Clock following the real one can still be advanced: the request-date
// window moves with it.
func TestClockFollowing(t *testing.T) {
	ctx := context.Background()
	srv := lt.New(t)
	if srv.Clock.Manual() {
		t.Fatal("the default clock is manual")
	}
	real := mustRealDated(t, srv)
	if _, err := real.CreateTable(ctx, "aaa", nil); err != nil {
		t.Fatalf("real-dated client on the default clock: %v", err)
	}
	srv.Clock.Advance(20 * time.Minute)
	if d := time.Until(srv.Clock.Now()); d < 19*time.Minute || d > 21*time.Minute {
		t.Fatalf("clock ahead by %v", d)
	}
	_, err := real.CreateTable(ctx, "bbb", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	if _, err := srv.Client.CreateTable(ctx, "ccc", nil); err != nil {
		t.Fatalf("the server's client after Advance: %v", err)
	}
}

// Sleep on a manual clock waits for Advance, or for the context.
func TestClockSleep(t *testing.T) {
	srv := lt.New(t, lt.WithTime(time.Unix(0, 0)))
	done := make(chan error, 1)
	go func() { done <- srv.Clock.Sleep(context.Background(), time.Second) }()
	select {
	case <-done:
		t.Fatal("Sleep returned before the clock moved")
	case <-time.After(20 * time.Millisecond):
	}
	srv.Clock.Advance(500 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("Sleep returned half way")
	case <-time.After(20 * time.Millisecond):
	}
	srv.Clock.Advance(500 * time.Millisecond)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := srv.Clock.Sleep(ctx, time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep with a canceled context: %v", err)
	}
}

// NewClock is a manual clock for an Account opened without a server: it
// stands still until moved, and the account's sweeper reads it while the
// test moves it (a race the race detector would report of a closure over a
// variable). The entity expired by moving it is swept in the background.
func TestNewClockExpiry(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := lt.NewClock(start)
	if !clock.Manual() || !clock.Now().Equal(start) {
		t.Fatalf("NewClock: manual %v, at %v", clock.Manual(), clock.Now())
	}
	acct, err := localtable.Open(&localtable.Options{Clock: clock.Now, Feed: &localtable.FeedOptions{}, Expiry: &localtable.ExpiryOptions{Interval: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	tbl, err := acct.CreateTable(ctx, "Sessions")
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.SetExpiry(ctx, "ExpiresAt"); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "u", RowKey: "s", Properties: localtable.Properties{"ExpiresAt": localtable.DateTimeValue(start.Add(time.Minute))}}); err != nil {
		t.Fatal(err)
	}
	rev, err := acct.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	// The sweeper's delete is a commit of its own: wait for the revision
	// to move past the insert's.
	for {
		r, err := acct.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r > rev {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	if _, err := tbl.Get(ctx, "u", "s", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
		t.Fatalf("after the clock passed ExpiresAt: %v", err)
	}
}
