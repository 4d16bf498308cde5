package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

// The expiry operations (comp=expiry, a localtable extension) set, read
// and clear a table's expiry policy with the account key alone; an
// expired entity then 404s through the SDK at once, is absent from its
// queries, and an insert over it succeeds.
func TestTableExpiry(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	srv := localtabletest.New(t, localtabletest.WithTime(start),
		localtabletest.WithAccountOptions(&localtable.Options{Expiry: &localtable.ExpiryOptions{Interval: -1}}))
	ctx := context.Background()
	c := newTable(t, srv, "Sessions")
	hc := &http.Client{Transport: srv.Transport}
	sharedKey := func(r *http.Request) {
		toSign := r.Header.Get("x-ms-date") + "\n/" + server.DevAccountName + "/" + server.DevAccountName + "/Sessions?comp=expiry"
		r.Header.Set("Authorization", "SharedKeyLite "+server.DevAccountName+":"+hmacSign(srv.Key(), toSign))
	}
	send := func(method, body string, auth func(*http.Request)) (int, string, string) {
		t.Helper()
		return sendRaw(t, srv, hc, method, srv.URL+"/Sessions?comp=expiry", body, auth)
	}
	policy := func() string {
		t.Helper()
		status, _, body := send("GET", "", sharedKey)
		var p server.ExpiryPolicy
		if err := json.Unmarshal([]byte(body), &p); status != 200 || err != nil {
			t.Fatalf("GET comp=expiry: %d %s (%v)", status, body, err)
		}
		return p.Property
	}
	if p := policy(); p != "" {
		t.Fatalf("the policy of a new table: %q", p)
	}
	if status, code, _ := send("PUT", `{"Property":"ExpiresAt"}`, func(*http.Request) {}); status != 403 && status != 401 {
		t.Errorf("an unsigned PUT: %d %s", status, code)
	}
	if status, code, _ := send("PUT", `{"Property":"1x"}`, sharedKey); status != 400 || code != string(localtable.CodeInvalidInput) {
		t.Errorf("an invalid property: %d %s", status, code)
	}
	if status, code, body := send("PUT", `{"Property":"ExpiresAt"}`, sharedKey); status != 204 {
		t.Fatalf("PUT comp=expiry: %d %s %s", status, code, body)
	}
	if p := policy(); p != "ExpiresAt" {
		t.Fatalf("the policy after PUT: %q", p)
	}

	add := func(rk string, at time.Time) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": rk, "ExpiresAt": at.Format(time.RFC3339Nano), "ExpiresAt@odata.type": "Edm.DateTime"})
		if _, err := c.AddEntity(ctx, b, nil); err != nil {
			t.Fatalf("AddEntity %s: %v", rk, err)
		}
	}
	add("soon", start.Add(time.Minute))
	add("later", start.Add(time.Hour))
	if _, err := c.GetEntity(ctx, "p", "soon", nil); err != nil {
		t.Fatalf("GetEntity before it expires: %v", err)
	}
	srv.Clock.Advance(time.Minute) // "soon" is due: expired at once
	_, err := c.GetEntity(ctx, "p", "soon", nil)
	wantCode(t, err, 404, "ResourceNotFound")
	var rks []string
	pager := c.NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			var m map[string]any
			json.Unmarshal(e, &m)
			rks = append(rks, m["RowKey"].(string))
		}
	}
	if len(rks) != 1 || rks[0] != "later" {
		t.Fatalf("the query's entities: %v; want [later]", rks)
	}
	any := azcore.ETagAny
	_, err = c.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"soon"}`), &aztables.UpdateEntityOptions{IfMatch: &any, UpdateMode: aztables.UpdateModeReplace})
	wantCode(t, err, 404, "ResourceNotFound")
	_, err = c.DeleteEntity(ctx, "p", "soon", nil)
	wantCode(t, err, 404, "ResourceNotFound")
	add("soon", start.Add(2*time.Hour)) // an insert over the expired entity
	if _, err := c.GetEntity(ctx, "p", "soon", nil); err != nil {
		t.Fatalf("GetEntity after the insert over it: %v", err)
	}

	if status, code, body := send("DELETE", "", sharedKey); status != 204 {
		t.Fatalf("DELETE comp=expiry: %d %s %s", status, code, body)
	}
	if p := policy(); p != "" {
		t.Fatalf("the policy after DELETE: %q", p)
	}
}

// The $changes stream shows the sweeper's deletions as "Expired" lines
// with the entity's keys alone, as a delete's.
func TestWireChangesExpired(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var clock atomicTime
	clock.set(now)
	acct, err := localtable.Open(&localtable.Options{Clock: clock.get, Feed: &localtable.FeedOptions{}, Expiry: &localtable.ExpiryOptions{Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(server.New(acct, &server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(func() {
		acct.Close()
		hs.Close()
	})
	key, _ := base64.StdEncoding.DecodeString(server.DevAccountKey)
	base := hs.URL + "/" + server.DevAccountName
	tbl, err := acct.CreateTable(ctx, "Sessions")
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.SetExpiry(ctx, "ExpiresAt"); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "a", Properties: localtable.Properties{"ExpiresAt": localtable.DateTimeValue(now.Add(time.Second))}}); err != nil {
		t.Fatal(err)
	}
	_, sc := openChanges(t, base, key, "")
	clock.set(now.Add(time.Second))
	if n, err := acct.SweepExpired(ctx); n != 1 || err != nil {
		t.Fatalf("SweepExpired = %d, %v", n, err)
	}
	l := readLine(t, sc)
	if l.Kind != "Expired" || l.Table != "Sessions" || l.Entity["RowKey"] != "a" || l.Entity["PartitionKey"] != "p" || len(l.Entity) != 2 {
		t.Errorf("the sweeper's deletion: %+v", l)
	}
}

// atomicTime is a settable clock, safe for concurrent use.
type atomicTime struct{ ns atomic.Int64 }

func (c *atomicTime) set(t time.Time) { c.ns.Store(t.UnixNano()) }
func (c *atomicTime) get() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
