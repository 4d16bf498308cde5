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
