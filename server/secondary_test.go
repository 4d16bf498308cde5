package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

// The secondary endpoint serves the SDK's reads from the same data and
// refuses every write with 403 InsufficientAccountPermissions, changing
// nothing.
func TestSDKSecondaryEndpoint(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	if srv.SecondaryURL != srv.URL+"-secondary" {
		t.Fatalf("SecondaryURL %q", srv.SecondaryURL)
	}
	primary := newTable(t, srv, "sectable")
	ent, _ := json.Marshal(aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "r"}, Properties: map[string]any{"V": int32(1)}})
	if _, err := primary.AddEntity(ctx, ent, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	expiry := start.Add(48 * time.Hour)
	if _, err := primary.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{
		ID: to.Ptr("pol"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("r")},
	}}}); err != nil {
		t.Fatal(err)
	}

	sec := srv.SecondaryClient
	st := sec.NewClient("sectable")
	// Reads.
	pager := sec.NewListTablesPager(nil)
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Tables) != 1 || *page.Tables[0].Name != "sectable" {
		t.Fatalf("secondary list tables: %v %+v", err, page)
	}
	got, err := st.GetEntity(ctx, "p", "r", nil)
	if err != nil || !strings.Contains(string(got.Value), `"V":1`) {
		t.Fatalf("secondary get entity: %v %s", err, got.Value)
	}
	ep := st.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p'")})
	if page, err := ep.NextPage(ctx); err != nil || len(page.Entities) != 1 {
		t.Fatalf("secondary list entities: %v", err)
	}
	if acl, err := st.GetAccessPolicy(ctx, nil); err != nil || len(acl.SignedIdentifiers) != 1 || *acl.SignedIdentifiers[0].ID != "pol" {
		t.Fatalf("secondary get ACL: %v %+v", err, acl)
	}
	if _, err := sec.GetProperties(ctx, nil); err != nil {
		t.Fatalf("secondary get properties: %v", err)
	}

	// Writes.
	writes := map[string]func() error{
		"create table": func() error { _, err := sec.CreateTable(ctx, "other", nil); return err },
		"delete table": func() error { _, err := sec.DeleteTable(ctx, "sectable", nil); return err },
		"add entity": func() error {
			_, err := st.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"new"}`), nil)
			return err
		},
		"upsert": func() error {
			_, err := st.UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","V":2}`), nil)
			return err
		},
		"update": func() error {
			_, err := st.UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","V":3}`), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
			return err
		},
		"delete entity": func() error { _, err := st.DeleteEntity(ctx, "p", "r", nil); return err },
		"transaction": func() error {
			_, err := st.SubmitTransaction(ctx, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p","RowKey":"tx"}`)}}, nil)
			return err
		},
		"set ACL":        func() error { _, err := st.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{}); return err },
		"set properties": func() error { _, err := sec.SetProperties(ctx, aztables.ServiceProperties{}, nil); return err },
	}
	for what, write := range writes {
		err := write()
		if gs, gc := code(err); gs != 403 || gc != "InsufficientAccountPermissions" {
			t.Fatalf("secondary %s: %d %q (%v), want 403 InsufficientAccountPermissions", what, gs, gc, err)
		}
	}
	// Nothing changed.
	if got, err := primary.GetEntity(ctx, "p", "r", nil); err != nil || !strings.Contains(string(got.Value), `"V":1`) {
		t.Fatalf("primary entity after secondary writes: %v %s", err, got.Value)
	}
	for _, rk := range []string{"new", "tx"} {
		_, err := primary.GetEntity(ctx, "p", rk, nil)
		wantCode(t, err, 404, "ResourceNotFound")
	}
	if acl, err := primary.GetAccessPolicy(ctx, nil); err != nil || len(acl.SignedIdentifiers) != 1 {
		t.Fatalf("primary ACL after secondary writes: %v %+v", err, acl)
	}
	if _, err := srv.Account.GetTable(ctx, "other"); err == nil {
		t.Fatal("the secondary created a table")
	}
}

// Get Table Service Stats answers at the secondary endpoint (live, with a
// LastSyncTime) and is 400 InvalidQueryParameterValue at the primary.
func TestSDKServiceStats(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2024, 5, 6, 2, 8, 35, 123456789, time.UTC)
	srv := localtabletest.NewServer(t, localtabletest.WithClock(func() time.Time { return now }))
	st, err := srv.SecondaryClient.GetStatistics(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.GeoReplication == nil || st.GeoReplication.Status == nil || *st.GeoReplication.Status != aztables.GeoReplicationStatusLive ||
		st.GeoReplication.LastSyncTime == nil || !st.GeoReplication.LastSyncTime.Equal(now.Truncate(time.Second)) {
		t.Fatalf("secondary stats: %+v", st.GeoReplication)
	}
	_, err = srv.Client.GetStatistics(ctx, nil)
	wantCode(t, err, 400, "InvalidQueryParameterValue")
}

// The primary connection string names only the primary (Python's SDK
// takes a TableSecondaryEndpoint for a host name); the secondary
// connection string makes clients of the secondary.
func TestSDKConnectionStringSecondary(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	if strings.Contains(srv.ConnectionString, "TableSecondaryEndpoint") ||
		!strings.Contains(srv.ConnectionString, ";TableEndpoint="+srv.URL+";") {
		t.Fatalf("connection string %q", srv.ConnectionString)
	}
	if !strings.Contains(srv.SecondaryConnectionString, ";TableEndpoint="+srv.SecondaryURL+";") {
		t.Fatalf("secondary connection string %q", srv.SecondaryConnectionString)
	}
	sc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString, srv.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.CreateTable(ctx, "fromconn", nil); err != nil {
		t.Fatal(err)
	}
	sec, err := aztables.NewServiceClientFromConnectionString(srv.SecondaryConnectionString, srv.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sec.CreateTable(ctx, "fromsecondary", nil); err == nil {
		t.Fatal("a table was created through the secondary connection string")
	}
	if _, err := sec.GetStatistics(ctx, nil); err != nil {
		t.Fatalf("stats through the secondary connection string: %v", err)
	}
	for _, c := range []struct{ endpoint, want string }{
		{"http://127.0.0.1:10002/devstoreaccount1", "http://127.0.0.1:10002/devstoreaccount1-secondary"},
		{"http://127.0.0.1:10002/devstoreaccount1/", "http://127.0.0.1:10002/devstoreaccount1-secondary"},
		{"https://devstoreaccount1.table.core.windows.net", ""},
		{"http://127.0.0.1:10002/other", ""},
	} {
		if got := server.SecondaryEndpoint(c.endpoint, "devstoreaccount1"); got != c.want {
			t.Errorf("SecondaryEndpoint(%q) = %q, want %q", c.endpoint, got, c.want)
		}
		if got := server.SecondaryConnectionString(c.endpoint, "devstoreaccount1", "a2V5"); (got != "") != (c.want != "") || c.want != "" && !strings.Contains(got, ";TableEndpoint="+c.want+";") {
			t.Errorf("SecondaryConnectionString(%q) = %q", c.endpoint, got)
		}
	}
}

// At the secondary endpoint a Shared Key signature may sign the path as
// sent or, as the service's rule has it, with the primary account name;
// responses name the secondary URL.
func TestWireSecondarySharedKey(t *testing.T) {
	srv := localtabletest.NewServer(t)
	if _, err := srv.Account.CreateTable(context.Background(), "sktable"); err != nil {
		t.Fatal(err)
	}
	// Signed as sent: /devstoreaccount1/devstoreaccount1-secondary/Tables.
	req := sharedKeyRequest(t, server.DevAccountName, srv.Key(), "GET", srv.SecondaryURL+"/Tables", "")
	req.Header.Set("Accept", minimal)
	resp, got := send(t, req)
	if resp.StatusCode != 200 || !strings.Contains(got, `"odata.metadata":"`+srv.SecondaryURL+`/$metadata#Tables"`) {
		t.Fatalf("signed as sent: %d %s", resp.StatusCode, got)
	}
	// Signed with the primary path: /devstoreaccount1/devstoreaccount1/Tables.
	req = sharedKeyRequest(t, server.DevAccountName, srv.Key(), "GET", srv.URL+"/Tables", "")
	req.URL.Path = "/" + server.DevAccountName + server.SecondarySuffix + "/Tables"
	resp, got = send(t, req)
	wantStatus(t, "signed with the primary path", resp, got, 200, "")
	// Signed for another path: refused.
	req = sharedKeyRequest(t, server.DevAccountName, srv.Key(), "GET", srv.URL+"/sktable()", "")
	req.URL.Path = "/" + server.DevAccountName + server.SecondarySuffix + "/Tables"
	resp, got = send(t, req)
	wantStatus(t, "signed for another path", resp, got, 403, "AuthenticationFailed")
	// A write, well signed, is refused after authentication.
	req = sharedKeyRequest(t, server.DevAccountName, srv.Key(), "POST", srv.SecondaryURL+"/sktable", `{"PartitionKey":"p","RowKey":"r"}`)
	resp, got = send(t, req)
	wantStatus(t, "secondary insert", resp, got, 403, "InsufficientAccountPermissions")
	if !strings.Contains(got, "Write operations are not allowed.") {
		t.Errorf("secondary insert message: %s", got)
	}
	// A bad signature at the secondary is an authentication failure first.
	req = sharedKeyRequest(t, server.DevAccountName, []byte("wrong key"), "POST", srv.SecondaryURL+"/sktable", `{"PartitionKey":"p","RowKey":"r"}`)
	resp, got = send(t, req)
	wantStatus(t, "secondary insert, bad key", resp, got, 403, "AuthenticationFailed")
}

// An account the server does not hold is 404 AccountNotFound, including
// the secondary of one it does not hold.
func TestWireUnknownAccount(t *testing.T) {
	hs, _ := rawServer(t)
	for _, path := range []string{"/nosuch/Tables", "/nosuch-secondary/Tables", "/devstoreaccount1-secondary-secondary/Tables", "/DEVSTOREACCOUNT1/Tables"} {
		resp, got := do(t, "GET", hs.URL+path, map[string]string{"Accept": minimal}, "")
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("x-ms-error-code") != "AccountNotFound" ||
			!strings.Contains(got, `"code":"AccountNotFound"`) || !strings.Contains(got, "The specified account does not exist.") {
			t.Errorf("%s: %d %q %s", path, resp.StatusCode, resp.Header.Get("x-ms-error-code"), got)
		}
	}
	resp, got := do(t, "GET", hs.URL+"/nosuch/?restype=service&comp=properties", nil, "")
	wantODataXMLError(t, "unknown account, XML operation", resp, got, 404, "AccountNotFound", "The specified account does not exist.")
}
