package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// A query whose filter matches little in a large table ends its pages at
// the scan limit, perhaps empty, with continuations that aztables follows
// to the complete result.
func TestSDKQueryScanLimit(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acct.Close() })
	hs := httptest.NewServer(server.New(acct, &server.Options{QueryScanLimit: 25}))
	t.Cleanup(hs.Close)
	tbl, _ := acct.CreateTable(ctx, "scan")
	for i := 0; i < 200; i++ {
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i),
			Properties: localtable.Properties{"N": localtable.Int32Value(int32(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	cred, _ := aztables.NewSharedKeyCredential(server.DevAccountName, server.DevAccountKey)
	c, err := aztables.NewClientWithSharedKey(hs.URL+"/"+server.DevAccountName+"/scan", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("N eq 7 or N eq 190")})
	pages, empty, found := 0, 0, 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(p.Entities) == 0 {
			empty++
		}
		found += len(p.Entities)
	}
	if found != 2 || pages != 8 || empty != 6 {
		t.Fatalf("%d entities in %d pages (%d empty), want 2 in 8 (6 empty)", found, pages, empty)
	}
}

// The server's scan budget is its own: QueryScanLimit 0 is
// DefaultQueryScanLimit, above the library's DefaultScanLimit, and a
// negative one is no bound at all, however many entities a page reads.
func TestQueryScanLimitServerBounds(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acct.Close() })
	tbl, _ := acct.CreateTable(ctx, "scan")
	n := localtable.DefaultScanLimit + 100
	for i := 0; i < n; i += 100 {
		acts := make([]localtable.Action, 0, 100)
		for j := i; j < i+100; j++ {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: fmt.Sprintf("p%04d", i/100), RowKey: fmt.Sprintf("%03d", j%100),
				Properties: localtable.Properties{"N": localtable.Int32Value(int32(j))}}})
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	cred, _ := aztables.NewSharedKeyCredential(server.DevAccountName, server.DevAccountKey)
	for _, tc := range []struct{ limit, pages int }{{0, 1}, {-1, 1}, {n/2 + 1, 2}} {
		hs := httptest.NewServer(server.New(acct, &server.Options{QueryScanLimit: tc.limit}))
		c, err := aztables.NewClientWithSharedKey(hs.URL+"/"+server.DevAccountName+"/scan", cred, nil)
		if err != nil {
			t.Fatal(err)
		}
		pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr(fmt.Sprintf("N eq %d", n-1))})
		pages, found := 0, 0
		for pager.More() {
			p, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			found += len(p.Entities)
		}
		hs.Close()
		if found != 1 || pages != tc.pages {
			t.Errorf("QueryScanLimit %d over %d entities: %d found in %d pages, want 1 in %d", tc.limit, n, found, pages, tc.pages)
		}
	}
}
