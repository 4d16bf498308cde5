package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
	"github.com/localtable/localtable/server/internal/auth"
)

func sasClient(t *testing.T, srv *localtabletest.Server, perms aztables.SASPermissions, extra url.Values) *aztables.Client {
	t.Helper()
	c := srv.Client.NewClient("sastable")
	now := time.Now().UTC()
	u, err := c.GetTableSASURL(perms, now.Add(-time.Minute), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// GetTableSASURL on a path-style endpoint joins the table to the
	// account without a slash (SDK bug): keep only its query.
	pu, _ := url.Parse(u)
	q := pu.Query()
	for k, v := range extra { // aztables signs spk/srk/epk/erk but leaves them out of the URL (SDK bug)
		q[k] = v
	}
	sc, err := aztables.NewClientWithNoCredential(srv.URL+"/sastable?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func ent(pk, rk string) []byte {
	b, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk})
	return b
}

func TestSDKServiceSAS(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	admin := newTable(t, srv, "sastable")
	admin.AddEntity(ctx, ent("a", "1"), nil)
	admin.AddEntity(ctx, ent("m", "1"), nil)
	admin.AddEntity(ctx, ent("z", "1"), nil)

	ro := sasClient(t, srv, aztables.SASPermissions{Read: true}, nil)
	if _, err := ro.GetEntity(ctx, "a", "1", nil); err != nil {
		t.Fatalf("read with r: %v", err)
	}
	_, err := ro.AddEntity(ctx, ent("a", "2"), nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = ro.CreateTable(ctx, nil)
	wantCode(t, err, 403, "AuthorizationFailure")

	au := sasClient(t, srv, aztables.SASPermissions{Add: true}, nil)
	_, err = au.UpsertEntity(ctx, ent("a", "3"), nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch") // upsert needs a+u
	if _, err := sasClient(t, srv, aztables.SASPermissions{Add: true, Update: true}, nil).UpsertEntity(ctx, ent("a", "3"), nil); err != nil {
		t.Fatalf("upsert with au: %v", err)
	}

	// A key range: only partitions b..n.
	rng := url.Values{"spk": {"b"}, "epk": {"n"}}
	perms := aztables.SASPermissions{Read: true, Add: true, StartPartitionKey: "b", EndPartitionKey: "n"}
	rc := sasClient(t, srv, perms, rng)
	if _, err := rc.AddEntity(ctx, ent("c", "1"), nil); err != nil {
		t.Fatalf("insert in range: %v", err)
	}
	_, err = rc.AddEntity(ctx, ent("x", "1"), nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = rc.GetEntity(ctx, "a", "1", nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	var pks []string
	pager := rc.NewListEntitiesPager(nil)
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Entities {
			var m map[string]any
			json.Unmarshal(e, &m)
			pks = append(pks, m["PartitionKey"].(string))
		}
	}
	if len(pks) != 2 || pks[0] != "c" || pks[1] != "m" {
		t.Fatalf("query restricted to the range returned %v", pks)
	}

	// A tampered signature, and an expired one.
	bad := sasClient(t, srv, aztables.SASPermissions{Read: true}, url.Values{"sp": {"raud"}})
	_, err = bad.GetEntity(ctx, "a", "1", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	c := srv.Client.NewClient("sastable")
	u, _ := c.GetTableSASURL(aztables.SASPermissions{Read: true}, time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour))
	pu, _ := url.Parse(u)
	exp, _ := aztables.NewClientWithNoCredential(srv.URL+"/sastable?"+pu.RawQuery, nil)
	_, err = exp.GetEntity(ctx, "a", "1", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
}

func TestSDKStoredAccessPolicyAndAccountSAS(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "sastable")
	c.AddEntity(ctx, ent("a", "1"), nil)
	start, expiry := time.Now().Add(-time.Hour).UTC().Truncate(time.Second), time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	perm := "r"
	id := "readers"
	if _, err := c.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{
		ID: &id, AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: &perm},
	}}}); err != nil {
		t.Fatalf("SetAccessPolicy: %v", err)
	}
	got, err := c.GetAccessPolicy(ctx, nil)
	if err != nil || len(got.SignedIdentifiers) != 1 || *got.SignedIdentifiers[0].ID != id || !got.SignedIdentifiers[0].AccessPolicy.Expiry.Equal(expiry) {
		t.Fatalf("GetAccessPolicy: %+v %v", got, err)
	}
	// A SAS naming the policy, signed by hand (aztables' GetTableSASURL
	// always sets a start and expiry).
	cred := srv.Credential
	sv := aztables.SASSignatureValues{TableName: "sastable", Identifier: id}
	qp, err := sv.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	ssc, _ := aztables.NewServiceClientWithNoCredential(srv.URL+"/?"+qp, nil)
	sc := ssc.NewClient("sastable")
	if _, err := sc.GetEntity(ctx, "a", "1", nil); err != nil {
		t.Fatalf("read through stored policy: %v", err)
	}
	_, err = sc.DeleteEntity(ctx, "a", "1", nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")

	// Removing the policy revokes the SAS; a SAS naming a policy the
	// table does not have is refused, naming it.
	if _, err := c.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{}); err != nil {
		t.Fatalf("SetAccessPolicy (none): %v", err)
	}
	_, err = sc.GetEntity(ctx, "a", "1", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	var re *azcore.ResponseError
	if !errors.As(err, &re) || !strings.Contains(re.Error(), "'readers'") {
		t.Fatalf("the message does not name the policy: %v", err)
	}
}

// accountSASClient returns a service client authorized by an account SAS
// that aztables signs (GetAccountSASURL, which always signs spr=https).
func accountSASClient(t *testing.T, srv *localtabletest.Server, rt aztables.AccountSASResourceTypes, perms aztables.AccountSASPermissions) *aztables.ServiceClient {
	t.Helper()
	u, err := srv.Client.GetAccountSASURL(rt, perms, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	c, err := aztables.NewServiceClientWithNoCredential(u, srv.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// secondarySASClient returns a client of the secondary endpoint for a SAS
// URL of the primary, for the operation served there only, Get Table
// Service Stats.
func secondarySASClient(t *testing.T, srv *localtabletest.Server, sasURL string) *aztables.ServiceClient {
	t.Helper()
	rest, ok := strings.CutPrefix(sasURL, srv.URL)
	if !ok {
		t.Fatalf("SAS URL %q is not under %q", sasURL, srv.URL)
	}
	sc, err := aztables.NewServiceClientWithNoCredential(srv.SecondaryURL+rest, srv.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// Account SAS permissions through aztables, operation by operation, as the
// service's table for an account SAS on the Table service lists them
// (signed resource type, then signed permission). GetAccountSASURL signs
// spr=https, so the server serves HTTPS.
func TestSDKAccountSASPermissions(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t, localtabletest.WithTLS())
	admin := newTable(t, srv, "acctsas")
	admin.AddEntity(ctx, ent("p", "1"), nil)
	type rts = aztables.AccountSASResourceTypes
	type perms = aztables.AccountSASPermissions
	all := perms{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true, Process: true}
	s, c, o := rts{Service: true}, rts{Container: true}, rts{Object: true}

	// Service level: srt=s, r to get properties and stats, w to set them.
	props, err := accountSASClient(t, srv, s, perms{Read: true}).GetProperties(ctx, nil)
	if err != nil {
		t.Fatalf("GetProperties with srt=s sp=r: %v", err)
	}
	statsURL, err := srv.Client.GetAccountSASURL(s, perms{Read: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secondarySASClient(t, srv, statsURL).GetStatistics(ctx, nil); err != nil {
		t.Fatalf("GetStatistics with srt=s sp=r: %v", err)
	}
	_, err = accountSASClient(t, srv, s, perms{Read: true}).SetProperties(ctx, props.ServiceProperties, nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	if _, err := accountSASClient(t, srv, s, perms{Write: true}).SetProperties(ctx, props.ServiceProperties, nil); err != nil {
		t.Fatalf("SetProperties with srt=s sp=w: %v", err)
	}
	_, err = accountSASClient(t, srv, rts{Container: true, Object: true}, all).GetProperties(ctx, nil)
	wantCode(t, err, 403, "AuthorizationResourceTypeMismatch")

	// Tables: srt=c; Query Tables needs l, Create Table c or w, Delete
	// Table d.
	if _, err := accountSASClient(t, srv, c, perms{List: true}).NewListTablesPager(nil).NextPage(ctx); err != nil {
		t.Fatalf("ListTables with srt=c sp=l: %v", err)
	}
	_, err = accountSASClient(t, srv, c, perms{Read: true}).NewListTablesPager(nil).NextPage(ctx)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = accountSASClient(t, srv, rts{Service: true, Object: true}, all).NewListTablesPager(nil).NextPage(ctx)
	wantCode(t, err, 403, "AuthorizationResourceTypeMismatch")
	for i, p := range []perms{{Create: true}, {Write: true}} {
		name := "made" + string(rune('a'+i))
		if _, err := accountSASClient(t, srv, c, p).CreateTable(ctx, name, nil); err != nil {
			t.Fatalf("CreateTable with srt=c sp=%s: %v", p, err)
		}
	}
	_, err = accountSASClient(t, srv, c, perms{Add: true, Update: true, Read: true, List: true, Delete: true}).CreateTable(ctx, "madec", nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch") // 'a' does not create tables
	_, err = accountSASClient(t, srv, o, all).CreateTable(ctx, "madec", nil)
	wantCode(t, err, 403, "AuthorizationResourceTypeMismatch")
	_, err = accountSASClient(t, srv, c, perms{Create: true, Write: true}).DeleteTable(ctx, "madea", nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	if _, err := accountSASClient(t, srv, c, perms{Delete: true}).DeleteTable(ctx, "madea", nil); err != nil {
		t.Fatalf("DeleteTable with srt=c sp=d: %v", err)
	}
	if _, err := srv.Account.GetTable(ctx, "madec"); err == nil {
		t.Fatal("a refused CreateTable created the table")
	}

	// Entities: srt=o; r, a, u, a+u for either upsert, d.
	tbl := func(p perms) *aztables.Client { return accountSASClient(t, srv, o, p).NewClient("acctsas") }
	if _, err := tbl(perms{Read: true}).GetEntity(ctx, "p", "1", nil); err != nil {
		t.Fatalf("GetEntity with sp=r: %v", err)
	}
	if _, err := tbl(perms{Read: true}).NewListEntitiesPager(nil).NextPage(ctx); err != nil {
		t.Fatalf("ListEntities with sp=r: %v", err)
	}
	_, err = tbl(perms{List: true}).GetEntity(ctx, "p", "1", nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = accountSASClient(t, srv, rts{Service: true, Container: true}, all).NewClient("acctsas").GetEntity(ctx, "p", "1", nil)
	wantCode(t, err, 403, "AuthorizationResourceTypeMismatch")
	if _, err := tbl(perms{Add: true}).AddEntity(ctx, ent("p", "2"), nil); err != nil {
		t.Fatalf("AddEntity with sp=a: %v", err)
	}
	_, err = tbl(perms{Write: true, Update: true}).AddEntity(ctx, ent("p", "3"), nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	for _, mode := range []aztables.UpdateMode{aztables.UpdateModeReplace, aztables.UpdateModeMerge} {
		opts := &aztables.UpsertEntityOptions{UpdateMode: mode}
		_, err = tbl(perms{Add: true}).UpsertEntity(ctx, ent("p", "4"), opts)
		wantCode(t, err, 403, "AuthorizationPermissionMismatch")
		_, err = tbl(perms{Update: true}).UpsertEntity(ctx, ent("p", "4"), opts)
		wantCode(t, err, 403, "AuthorizationPermissionMismatch")
		if _, err := tbl(perms{Add: true, Update: true}).UpsertEntity(ctx, ent("p", "4"), opts); err != nil {
			t.Fatalf("UpsertEntity (%s) with sp=au: %v", mode, err)
		}
		_, err = tbl(perms{Add: true}).UpdateEntity(ctx, ent("p", "4"), &aztables.UpdateEntityOptions{UpdateMode: mode})
		wantCode(t, err, 403, "AuthorizationPermissionMismatch")
		if _, err := tbl(perms{Update: true}).UpdateEntity(ctx, ent("p", "4"), &aztables.UpdateEntityOptions{UpdateMode: mode}); err != nil {
			t.Fatalf("UpdateEntity (%s) with sp=u: %v", mode, err)
		}
	}
	_, err = tbl(perms{Read: true, Write: true}).DeleteEntity(ctx, "p", "4", nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	if _, err := tbl(perms{Delete: true}).DeleteEntity(ctx, "p", "4", nil); err != nil {
		t.Fatalf("DeleteEntity with sp=d: %v", err)
	}

	// A batch is authorized operation by operation; a refused one writes
	// nothing.
	actions := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: ent("p", "5")},
		{ActionType: aztables.TransactionTypeDelete, Entity: ent("p", "2")},
	}
	_, err = tbl(perms{Add: true}).SubmitTransaction(ctx, actions, nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	if _, err := srv.Account.Table("acctsas").Get(ctx, "p", "5", nil); err == nil {
		t.Fatal("a refused batch inserted an entity")
	}
	_, err = accountSASClient(t, srv, rts{Service: true, Container: true}, all).NewClient("acctsas").SubmitTransaction(ctx, actions, nil)
	wantCode(t, err, 403, "AuthorizationResourceTypeMismatch")
	if _, err := tbl(perms{Add: true, Delete: true}).SubmitTransaction(ctx, actions, nil); err != nil {
		t.Fatalf("batch with sp=ad: %v", err)
	}

	// No account SAS reads or sets a table's ACL.
	full := accountSASClient(t, srv, rts{Service: true, Container: true, Object: true}, all).NewClient("acctsas")
	_, err = full.GetAccessPolicy(ctx, nil)
	wantCode(t, err, 403, "AuthorizationFailure")
	_, err = full.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{})
	wantCode(t, err, 403, "AuthorizationFailure")

	// A SAS without 't' in ss is for other services.
	u, _ := srv.Client.GetAccountSASURL(o, all, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	qs := strings.Split(u, "?")[1]
	q, _ := url.ParseQuery(qs)
	q.Set("ss", "b")
	q.Set("sig", hmacSign(srv.Key(), azauthAccountString(q)))
	bsc, _ := aztables.NewServiceClientWithNoCredential(srv.URL+"/?"+q.Encode(), srv.ClientOptions())
	_, err = bsc.NewClient("acctsas").GetEntity(ctx, "p", "1", nil)
	wantCode(t, err, 403, "AuthorizationServiceMismatch")
}

// azauthAccountString is the account SAS string to sign for version
// 2019-02-02, from the query's values.
func azauthAccountString(q url.Values) string {
	return strings.Join([]string{server.DevAccountName, q.Get("sp"), q.Get("ss"), q.Get("srt"), q.Get("st"), q.Get("se"), q.Get("sip"), q.Get("spr"), q.Get("sv")}, "\n") + "\n"
}

// A SAS signed spr=https is refused over plain HTTP, as the service
// refuses it, and accepted over HTTPS; spr=https,http works over both.
func TestSDKSASProtocol(t *testing.T) {
	ctx := context.Background()
	plain := localtabletest.NewServer(t)
	tlsSrv := localtabletest.NewServer(t, localtabletest.WithTLS())
	for _, srv := range []*localtabletest.Server{plain, tlsSrv} {
		newTable(t, srv, "proto").AddEntity(ctx, ent("p", "1"), nil)
	}
	isTLS := func(srv *localtabletest.Server) bool { return srv == tlsSrv }
	for _, srv := range []*localtabletest.Server{plain, tlsSrv} {
		// Account SAS (GetAccountSASURL signs spr=https).
		_, err := accountSASClient(t, srv, aztables.AccountSASResourceTypes{Object: true}, aztables.AccountSASPermissions{Read: true}).NewClient("proto").GetEntity(ctx, "p", "1", nil)
		if isTLS(srv) {
			if err != nil {
				t.Fatalf("account SAS spr=https over HTTPS: %v", err)
			}
		} else {
			wantCode(t, err, 403, "AuthorizationProtocolMismatch")
		}
		// Service SAS, each protocol.
		for _, p := range []aztables.SASProtocol{aztables.SASProtocolHTTPS, aztables.SASProtocolHTTPSandHTTP, ""} {
			qp, err := aztables.SASSignatureValues{TableName: "proto", Permissions: "r", Protocol: p, ExpiryTime: time.Now().Add(time.Hour)}.Sign(srv.Credential)
			if err != nil {
				t.Fatal(err)
			}
			sc, _ := aztables.NewClientWithNoCredential(srv.URL+"/proto?"+qp, srv.ClientOptions())
			_, err = sc.GetEntity(ctx, "p", "1", nil)
			if p == aztables.SASProtocolHTTPS && !isTLS(srv) {
				wantCode(t, err, 403, "AuthorizationProtocolMismatch")
			} else if err != nil {
				t.Fatalf("service SAS spr=%q (TLS %v): %v", p, isTLS(srv), err)
			}
		}
	}
	// HTTP alone is not a valid signed protocol.
	qp, _ := aztables.SASSignatureValues{TableName: "proto", Permissions: "r", Protocol: "http", ExpiryTime: time.Now().Add(time.Hour)}.Sign(plain.Credential)
	sc, _ := aztables.NewClientWithNoCredential(plain.URL+"/proto?"+qp, nil)
	_, err := sc.GetEntity(ctx, "p", "1", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
}

// A service SAS through aztables' signing helper: it reaches the entities
// of its table only, and no table-level, ACL or service operation.
func TestSDKServiceSASScope(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	newTable(t, srv, "scoped").AddEntity(ctx, ent("p", "1"), nil)
	newTable(t, srv, "other").AddEntity(ctx, ent("p", "1"), nil)
	qp, err := aztables.SASSignatureValues{TableName: "scoped", Permissions: "raud", ExpiryTime: time.Now().Add(time.Hour)}.Sign(srv.Credential)
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := aztables.NewServiceClientWithNoCredential(srv.URL+"/?"+qp, nil)
	tc := svc.NewClient("scoped")
	if _, err := tc.GetEntity(ctx, "p", "1", nil); err != nil {
		t.Fatalf("GetEntity: %v", err)
	}
	actions := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: ent("p", "2")},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: ent("p", "3")},
	}
	if _, err := tc.SubmitTransaction(ctx, actions, nil); err != nil {
		t.Fatalf("batch with sp=raud: %v", err)
	}
	for what, f := range map[string]func() error{
		"ListTables":    func() error { _, err := svc.NewListTablesPager(nil).NextPage(ctx); return err },
		"CreateTable":   func() error { _, err := svc.CreateTable(ctx, "newone", nil); return err },
		"DeleteTable":   func() error { _, err := svc.DeleteTable(ctx, "scoped", nil); return err },
		"GetProperties": func() error { _, err := svc.GetProperties(ctx, nil); return err },
		"GetStatistics": func() error {
			_, err := secondarySASClient(t, srv, srv.URL+"/?"+qp).GetStatistics(ctx, nil)
			return err
		},
		"GetAccessPolicy": func() error { _, err := tc.GetAccessPolicy(ctx, nil); return err },
		"SetAccessPolicy": func() error { _, err := tc.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{}); return err },
		"other table":     func() error { _, err := svc.NewClient("other").GetEntity(ctx, "p", "1", nil); return err },
		"other table batch": func() error {
			_, err := svc.NewClient("other").SubmitTransaction(ctx, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: ent("p", "9")}}, nil)
			return err
		},
	} {
		if gs, gc := code(f()); gs != 403 || gc != "AuthorizationFailure" {
			t.Errorf("%s with a service SAS: %d %q, want 403 AuthorizationFailure", what, gs, gc)
		}
	}
	if _, err := srv.Account.GetTable(ctx, "scoped"); err != nil {
		t.Fatal("a service SAS deleted its table")
	}
	if _, err := srv.Account.Table("other").Get(ctx, "p", "9", nil); err == nil {
		t.Fatal("a service SAS wrote to another table")
	}
}

// TestWireSASCredentialsRefused: a request carrying a shared access
// signature and an Authorization header is refused, not authorized by the
// SAS alone; a service SAS whose tn is missing or empty is refused at
// authentication, as the service refuses a SAS missing a mandatory field.
func TestWireSASCredentialsRefused(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	newTable(t, srv, "scoped").AddEntity(ctx, ent("p", "1"), nil)
	qp, err := aztables.SASSignatureValues{TableName: "scoped", Permissions: "r", ExpiryTime: time.Now().Add(time.Hour)}.Sign(srv.Credential)
	if err != nil {
		t.Fatal(err)
	}
	get := srv.URL + "/scoped(PartitionKey='p',RowKey='1')?"
	accept := map[string]string{"Accept": "application/json;odata=nometadata"}
	if resp, body := do(t, "GET", get+qp, accept, ""); resp.StatusCode != 200 {
		t.Fatalf("the SAS alone: %d %s", resp.StatusCode, body)
	}
	for _, authz := range []string{"SharedKey devstoreaccount1:c2lnbmF0dXJl", "Bearer abc.def.ghi"} {
		resp, body := do(t, "GET", get+qp, map[string]string{"Accept": accept["Accept"], "Authorization": authz}, "")
		wantStatus(t, "SAS with Authorization "+authz, resp, body, 401, "InvalidAuthenticationInfo")
	}

	key, _ := base64.StdEncoding.DecodeString(server.DevAccountKey)
	for what, q := range map[string]url.Values{
		"empty tn":   {"sv": {"2019-02-02"}, "sp": {"r"}, "se": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, "tn": {""}},
		"missing tn": {"sv": {"2019-02-02"}, "sp": {"r"}, "se": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}},
	} {
		q.Set("sig", auth.Sign(key, auth.ServiceSASString(server.DevAccountName, q)))
		resp, body := do(t, "GET", get+q.Encode(), accept, "")
		wantStatus(t, "service SAS, "+what, resp, body, 403, "AuthenticationFailed")
		if !strings.Contains(body, "tn is mandatory") {
			t.Errorf("service SAS, %s: %s", what, body)
		}
	}
}
