package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

// staticToken is a fake azcore.TokenCredential.
type staticToken struct{ calls atomic.Int32 }

func (s *staticToken) GetToken(ctx context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	s.calls.Add(1)
	return azcore.AccessToken{Token: "static-test-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestSDKTLSBearerToken(t *testing.T) {
	ctx := context.Background()
	var sawBearer atomic.Int32
	srv := localtabletest.NewServer(t, localtabletest.WithTLS(), localtabletest.WithMiddleware(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ey") && r.TLS != nil {
				sawBearer.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	}))
	if !strings.HasPrefix(srv.URL, "https://") || !strings.HasPrefix(srv.ConnectionString, "DefaultEndpointsProtocol=https;") {
		t.Fatalf("not HTTPS: %s %s", srv.URL, srv.ConnectionString)
	}
	sc, err := aztables.NewServiceClient(srv.URL, srv.TokenCredential(), srv.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	// CRUD with the token credential.
	if _, err := sc.CreateTable(ctx, "tokens", nil); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	c := sc.NewClient("tokens")
	b, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
	if _, err := c.AddEntity(ctx, b, nil); err != nil {
		t.Fatalf("AddEntity: %v", err)
	}
	b, _ = json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 2})
	if _, err := c.UpdateEntity(ctx, b, nil); err != nil {
		t.Fatalf("UpdateEntity: %v", err)
	}
	if _, err := c.UpsertEntity(ctx, b, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatalf("UpsertEntity: %v", err)
	}
	g, err := c.GetEntity(ctx, "p", "r", nil)
	if err != nil || !strings.Contains(string(g.Value), `"V":2`) {
		t.Fatalf("GetEntity: %v %s", err, g.Value)
	}
	if p, err := c.NewListEntitiesPager(nil).NextPage(ctx); err != nil || len(p.Entities) != 1 {
		t.Fatalf("ListEntities: %v", err)
	}
	if p, err := sc.NewListTablesPager(nil).NextPage(ctx); err != nil || len(p.Tables) != 1 {
		t.Fatalf("ListTables: %v", err)
	}
	// The operations the service's RBAC table lists for tokens include
	// Get/Set Table ACL and the service properties and stats.
	id, perm := "readers", "r"
	if _, err := c.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{
		ID: &id, AccessPolicy: &aztables.AccessPolicy{Permission: &perm},
	}}}); err != nil {
		t.Fatalf("SetAccessPolicy with a token: %v", err)
	}
	if acl, err := c.GetAccessPolicy(ctx, nil); err != nil || len(acl.SignedIdentifiers) != 1 {
		t.Fatalf("GetAccessPolicy with a token: %v", err)
	}
	props, err := sc.GetProperties(ctx, nil)
	if err != nil {
		t.Fatalf("GetProperties with a token: %v", err)
	}
	if _, err := sc.SetProperties(ctx, props.ServiceProperties, nil); err != nil {
		t.Fatalf("SetProperties with a token: %v", err)
	}
	sec, err := aztables.NewServiceClient(srv.SecondaryURL, srv.TokenCredential(), srv.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sec.GetStatistics(ctx, nil); err != nil { // the secondary endpoint's operation
		t.Fatalf("GetStatistics with a token: %v", err)
	}
	if _, err := c.SubmitTransaction(ctx, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeDelete, Entity: b}}, nil); err != nil {
		t.Fatalf("SubmitTransaction: %v", err)
	}
	if _, err := c.Delete(ctx, nil); err != nil {
		t.Fatalf("DeleteTable: %v", err)
	}
	if sawBearer.Load() == 0 {
		t.Fatal("no bearer token reached the server")
	}
	// The shared-key client works over HTTPS too.
	if _, err := srv.Client.CreateTable(ctx, "sharedkey", nil); err != nil {
		t.Fatalf("shared key over HTTPS: %v", err)
	}
	// A credential whose token is not a JWT is refused (aztables speaks
	// version 2019-02-02: 403 AuthenticationFailed, no challenge), and
	// nothing is written.
	bad, _ := aztables.NewServiceClient(srv.URL, &staticToken{}, srv.ClientOptions())
	_, err = bad.CreateTable(ctx, "opaque", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	if _, err := srv.Account.GetTable(ctx, "opaque"); err == nil {
		t.Fatal("a refused token created a table")
	}
	// aztables itself refuses to send a token over plain HTTP.
	plain, _ := aztables.NewServiceClient(strings.Replace(srv.URL, "https:", "http:", 1), srv.TokenCredential(), nil)
	if _, err := plain.CreateTable(ctx, "plain", nil); err == nil {
		t.Fatal("aztables sent a token over HTTP")
	}
}

// A bearer token that arrives over plain HTTP is refused even when the
// server accepts bearer tokens: tokens are for HTTPS only.
func TestWireBearerOverHTTPRefused(t *testing.T) {
	acct, _ := localtable.Open(nil)
	t.Cleanup(func() { acct.Close() })
	for _, accept := range []bool{false, true} {
		hs := httptest.NewServer(server.New(acct, &server.Options{AcceptBearerTokens: accept}))
		req, _ := http.NewRequest("POST", hs.URL+"/devstoreaccount1/Tables", strings.NewReader(`{"TableName":"bearer"}`))
		req.Header.Set("Authorization", "Bearer static-test-token")
		resp, got := send(t, req)
		hs.Close()
		wantStatus(t, "bearer over HTTP", resp, got, 403, "AuthenticationFailed")
	}
	// Over HTTPS without AcceptBearerTokens, still refused.
	hs := httptest.NewTLSServer(server.New(acct, nil))
	defer hs.Close()
	req, _ := http.NewRequest("GET", hs.URL+"/devstoreaccount1/Tables", nil)
	req.Header.Set("Authorization", "Bearer static-test-token")
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Fatalf("bearer without AcceptBearerTokens: %d", resp.StatusCode)
	}
}
