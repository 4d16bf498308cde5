package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
)

// TestWireIfMatchForms sends If-Match values of every form to update,
// merge and delete. As the service answers (Azurite issues 1229 and 2013,
// reporting the service and its emulator): any weak ETag W/"…" is a valid
// condition, so one that matches nothing is 412 UpdateConditionNotSatisfied
// (404 ResourceNotFound when the entity is missing), while a value that is
// not a weak ETag (unquoted, a strong "…" ETag, a list) is 400
// InvalidInput.
func TestWireIfMatchForms(t *testing.T) {
	ctx := context.Background()
	hs, acct := rawServer(t)
	base := hs.URL + "/devstoreaccount1/tt1"
	ent := base + "(PartitionKey='p',RowKey='r')"
	tag, err := acct.Table("tt1").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"V": localtable.Int32Value(1)}})
	if err != nil {
		t.Fatal(err)
	}
	type req struct {
		method string
		hdr    map[string]string
		body   string
	}
	reqs := func(ifMatch string) []req {
		return []req{
			{"PUT", map[string]string{"If-Match": ifMatch}, `{"V":2}`},
			{"PATCH", map[string]string{"If-Match": ifMatch}, `{"V":2}`},
			{"MERGE", map[string]string{"If-Match": ifMatch}, `{"V":2}`},
			{"POST", map[string]string{"If-Match": ifMatch, "X-HTTP-Method": "MERGE"}, `{"V":2}`},
			{"DELETE", map[string]string{"If-Match": ifMatch}, ""},
		}
	}
	for _, c := range []struct {
		ifMatch string
		status  int
		code    string
	}{
		{`W/"wrong"`, 412, "UpdateConditionNotSatisfied"},
		{`w/"wrong"`, 412, "UpdateConditionNotSatisfied"},
		{`W/""`, 412, "UpdateConditionNotSatisfied"},
		{`W/"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, 412, "UpdateConditionNotSatisfied"},
		{`W/"a\"b"`, 412, "UpdateConditionNotSatisfied"},
		{`MalformedETag`, 400, "InvalidInput"},
		{`garbage`, 400, "InvalidInput"},
		{`"0x8D9C2C4D3F2A1B0"`, 400, "InvalidInput"}, // a strong ETag, as blobs have
		{`W/wrong`, 400, "InvalidInput"},
		{`W/"a", W/"b"`, 400, "InvalidInput"},
		{string(tag) + `, W/"b"`, 400, "InvalidInput"},
		{`W/"a"b"`, 400, "InvalidInput"},
		{`**`, 400, "InvalidInput"},
	} {
		for _, r := range reqs(c.ifMatch) {
			resp, body := do(t, r.method, ent, r.hdr, r.body)
			if resp.StatusCode != c.status || resp.Header.Get("x-ms-error-code") != c.code {
				t.Errorf("%s If-Match %s: %d %q, want %d %q: %.200s", r.method, c.ifMatch, resp.StatusCode, resp.Header.Get("x-ms-error-code"), c.status, c.code, body)
			}
		}
	}
	// Nothing was written.
	if e, err := acct.Table("tt1").Get(ctx, "p", "r", nil); err != nil || e.ETag != tag || e.Properties["V"].Int32() != 1 {
		t.Fatalf("entity after failed writes: %+v %v", e, err)
	}
	// A weak ETag that matches nothing, on a missing entity: 404.
	for _, r := range reqs(`W/"wrong"`) {
		resp, body := do(t, r.method, base+"(PartitionKey='p',RowKey='none')", r.hdr, r.body)
		if resp.StatusCode != 404 || resp.Header.Get("x-ms-error-code") != "ResourceNotFound" {
			t.Errorf("%s of a missing entity with a weak ETag: %d %.200s", r.method, resp.StatusCode, body)
		}
	}
	// The current ETag matches.
	resp, body := do(t, "PATCH", ent, map[string]string{"If-Match": string(tag)}, `{"V":3}`)
	if resp.StatusCode != 204 {
		t.Fatalf("PATCH with the current ETag: %d %s", resp.StatusCode, body)
	}
}

// TestSDKIfMatchForms sends the same conditions through aztables, which
// passes an azcore.ETag through as If-Match.
func TestSDKIfMatchForms(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "ifmatch")
	e, _ := json.Marshal(aztables.Entity{PartitionKey: "p", RowKey: "r"})
	if _, err := c.AddEntity(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		etag   azcore.ETag
		status int
		code   string
	}{
		{`W/"wrong"`, 412, "UpdateConditionNotSatisfied"},
		{`W/"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, 412, "UpdateConditionNotSatisfied"},
		{`MalformedETag`, 400, "InvalidInput"},
		{`"strong"`, 400, "InvalidInput"},
	} {
		for _, mode := range []aztables.UpdateMode{aztables.UpdateModeMerge, aztables.UpdateModeReplace} {
			_, err := c.UpdateEntity(ctx, e, &aztables.UpdateEntityOptions{IfMatch: &tc.etag, UpdateMode: mode})
			if s, code := code(err); s != tc.status || code != tc.code {
				t.Errorf("UpdateEntity %s If-Match %s: %d %q (%v), want %d %q", mode, tc.etag, s, code, err, tc.status, tc.code)
			}
		}
		_, err := c.DeleteEntity(ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: &tc.etag})
		if s, code := code(err); s != tc.status || code != tc.code {
			t.Errorf("DeleteEntity If-Match %s: %d %q (%v), want %d %q", tc.etag, s, code, err, tc.status, tc.code)
		}
	}
	if _, err := c.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("entity gone after failed deletes: %v", err)
	}
}
