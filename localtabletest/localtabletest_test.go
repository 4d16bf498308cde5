package localtabletest_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

func TestOptions(t *testing.T) {
	fixed := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var calls atomic.Int32
	srv := localtabletest.NewServer(t,
		localtabletest.WithClock(func() time.Time { return fixed }),
		localtabletest.WithMiddleware(func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); h.ServeHTTP(w, r) })
		}))
	ctx := context.Background()
	if _, err := srv.Client.CreateTable(ctx, "clocked", nil); err != nil {
		t.Fatal(err)
	}
	c := srv.Client.NewClient("clocked")
	if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
	e, err := srv.Account.Table("clocked").Get(ctx, "p", "r", nil)
	if err != nil || !e.Timestamp.Equal(fixed) {
		t.Fatalf("Timestamp %v (%v), want %v", e.Timestamp, err, fixed)
	}
	if calls.Load() != 2 {
		t.Fatalf("middleware saw %d requests", calls.Load())
	}
	cs, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString, srv.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NewClient("clocked").GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("connection string client: %v", err)
	}
	// A client that dates its requests by the real clock is years away
	// from the server's: the server refuses its requests as stale.
	plain, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = plain.NewClient("clocked").GetEntity(ctx, "p", "r", nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 403 || re.ErrorCode != "AuthenticationFailed" {
		t.Fatalf("client dated by the real clock: %v", err)
	}
}

// TokenCredential's tokens work through aztables against an HTTPS server,
// with the real clock and with a server clock years away from it.
func TestTokenCredential(t *testing.T) {
	ctx := context.Background()
	for _, opts := range [][]localtabletest.Option{
		{localtabletest.WithTLS()},
		{localtabletest.WithTLS(), localtabletest.WithClock(func() time.Time { return time.Date(2041, 5, 6, 7, 8, 9, 0, time.UTC) })},
	} {
		srv := localtabletest.NewServer(t, opts...)
		c, err := aztables.NewServiceClient(srv.URL, srv.TokenCredential(), srv.ClientOptions())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateTable(ctx, "tokens", nil); err != nil {
			t.Fatalf("CreateTable with a token: %v", err)
		}
		if _, err := c.NewClient("tokens").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
			t.Fatalf("AddEntity with a token: %v", err)
		}
		if _, err := srv.Account.Table("tokens").Get(ctx, "p", "r", nil); err != nil {
			t.Fatalf("the entity was not written: %v", err)
		}
	}
}
