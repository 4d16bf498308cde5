package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// These tests check wire details with raw HTTP, authentication off.

func rawServer(t *testing.T) (*httptest.Server, *localtable.Account) {
	t.Helper()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(server.New(acct, &server.Options{DisableAuth: true}))
	t.Cleanup(func() { hs.Close(); acct.Close() })
	if _, err := acct.CreateTable(context.Background(), "tt1"); err != nil {
		t.Fatal(err)
	}
	return hs, acct
}

func do(t *testing.T, method, url string, hdr map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

const minimal = "application/json;odata=minimalmetadata"

func TestWireEntityEncoding(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	body := `{"PartitionKey":"pk","RowKey":"rk","Timestamp":"2000-01-01T00:00:00Z","odata.etag":"x",
	"I32":5,"Big":3000000000,"Frac":1.5,"Two":2.0,"S":"s","B":true,"N":null,
	"I64@odata.type":"Edm.Int64","I64":"123456789012",
	"D@odata.type":"Edm.Double","D":"NaN",
	"DT@odata.type":"Edm.DateTime","DT":"2013-08-02T17:37:43.0090000Z",
	"G@odata.type":"Edm.Guid","G":"4185404a-5818-48c3-b9be-f217df0dba6f",
	"Bin@odata.type":"Edm.Binary","Bin":"AAE="}`
	resp, got := do(t, "POST", base+"/tt1", map[string]string{"Accept": minimal, "Content-Type": "application/json"}, body)
	if resp.StatusCode != 201 || resp.Header.Get("ETag") == "" || resp.Header.Get("Location") == "" {
		t.Fatalf("insert: %d %s", resp.StatusCode, got)
	}
	for _, want := range []string{
		`"odata.metadata":"` + base + `/$metadata#tt1/@Element"`,
		`"I32":5,`, `"Big":3000000000.0`, `"Frac":1.5`, `"Two":2.0`,
		`"I64@odata.type":"Edm.Int64","I64":"123456789012"`,
		`"D@odata.type":"Edm.Double","D":"NaN"`,
		`"DT@odata.type":"Edm.DateTime","DT":"2013-08-02T17:37:43.009Z"`,
		`"G@odata.type":"Edm.Guid"`, `"Bin@odata.type":"Edm.Binary","Bin":"AAE="`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	for _, bad := range []string{`"N"`, `2000-01-01`, `"I32@odata.type"`, `"S@odata.type"`, `"B@odata.type"`, `"Frac@odata.type"`} {
		if strings.Contains(got, bad) {
			t.Errorf("unexpected %s in\n%s", bad, got)
		}
	}
	// Metadata levels.
	ent := base + "/tt1(PartitionKey='pk',RowKey='rk')"
	_, none := do(t, "GET", ent, map[string]string{"Accept": "application/json;odata=nometadata"}, "")
	if strings.Contains(none, "odata.") || strings.Contains(none, "@odata") {
		t.Errorf("nometadata has metadata: %s", none)
	}
	_, full := do(t, "GET", ent+"?$format=application/json;odata=fullmetadata", nil, "")
	for _, want := range []string{`"odata.type":"devstoreaccount1.tt1"`, `"odata.id":"` + ent + `"`, `"odata.editLink":"tt1(PartitionKey='pk',RowKey='rk')"`, `"Timestamp@odata.type":"Edm.DateTime"`} {
		if !strings.Contains(full, want) {
			t.Errorf("fullmetadata lacks %s: %s", want, full)
		}
	}
	_, sel := do(t, "GET", ent+"?$select=I32,Nope", map[string]string{"Accept": minimal}, "")
	if !strings.Contains(sel, `"I32":5,"Nope":null`) || strings.Contains(sel, `"S"`) {
		t.Errorf("$select: %s", sel)
	}
	// Prefer: return-no-content.
	resp, got = do(t, "POST", base+"/tt1", map[string]string{"Accept": minimal, "Prefer": "return-no-content"}, `{"PartitionKey":"pk","RowKey":"r2"}`)
	if resp.StatusCode != 204 || resp.Header.Get("Preference-Applied") != "return-no-content" || resp.Header.Get("DataServiceId") == "" || got != "" {
		t.Fatalf("return-no-content: %d %v %q", resp.StatusCode, resp.Header, got)
	}
}

func TestWireDecodeErrors(t *testing.T) {
	hs, _ := rawServer(t)
	url := hs.URL + "/devstoreaccount1/tt1"
	for _, c := range []struct{ body, code string }{
		{`{"RowKey":"r"}`, "PropertiesNeedValue"},
		{`{"PartitionKey":"p","RowKey":"r","A":1,"A":2}`, "DuplicatePropertiesSpecified"},
		{`{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int32","A":"x"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Boolean","A":1}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Guid","A":"nope"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Thing","A":"x"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","A":[1]}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r",`, "InvalidInput"},
		{`[]`, "InvalidInput"},
		{`{"PartitionKey":"p/","RowKey":"r"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"r","bad-name":1}`, "PropertyNameInvalid"},
	} {
		resp, got := do(t, "POST", url, map[string]string{"Accept": minimal}, c.body)
		if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != c.code {
			t.Errorf("%s: %d %s %s", c.body, resp.StatusCode, resp.Header.Get("x-ms-error-code"), got)
			continue
		}
		var e struct {
			Err struct {
				Code    string
				Message struct{ Lang, Value string }
			} `json:"odata.error"`
		}
		if err := json.Unmarshal([]byte(got), &e); err != nil || e.Err.Code != c.code || !strings.Contains(e.Err.Message.Value, "\nRequestId:") || e.Err.Message.Lang != "en-US" {
			t.Errorf("%s: error body %s", c.body, got)
		}
	}
}

func TestWireMergeVerbAndTunnelling(t *testing.T) {
	hs, acct := rawServer(t)
	ent := hs.URL + "/devstoreaccount1/tt1(PartitionKey='a%20b''c%25',RowKey='')"
	resp, got := do(t, "PUT", ent, nil, `{"A":1,"B":2}`)
	if resp.StatusCode != 204 {
		t.Fatalf("upsert: %d %s", resp.StatusCode, got)
	}
	do(t, "MERGE", ent, map[string]string{"If-Match": "*"}, `{"A":10}`)
	do(t, "POST", ent, map[string]string{"X-HTTP-Method": "MERGE", "If-Match": "*"}, `{"C":3}`)
	e, err := acct.Table("tt1").Get(context.Background(), "a b'c%", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.Properties["A"].Int32() != 10 || e.Properties["B"].Int32() != 2 || e.Properties["C"].Int32() != 3 {
		t.Fatalf("merged: %v", e.Properties)
	}
	resp, _ = do(t, "GET", ent, map[string]string{"X-HTTP-Method": "MERGE"}, "")
	if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "XMethodNotUsingPost" {
		t.Fatalf("X-HTTP-Method on GET: %d", resp.StatusCode)
	}
	resp, _ = do(t, "PUT", ent, map[string]string{"If-Match": "garbage"}, `{}`)
	if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidInput" {
		t.Fatalf("malformed ETag: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	resp, _ = do(t, "GET", ent, map[string]string{"Accept": "application/atom+xml"}, "")
	if resp.StatusCode != 415 {
		t.Fatalf("atom: %d", resp.StatusCode)
	}
	for _, h := range []string{"x-ms-request-id", "x-ms-version", "Date"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
}

const batchReq = "--batch_B\r\n" +
	"Content-Type: multipart/mixed; boundary=changeset_C\r\n\r\n" +
	"--changeset_C\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n" +
	"POST http://127.0.0.1/devstoreaccount1/tt1?%%24format=application%%2Fjson%%3Bodata%%3Dminimalmetadata HTTP/1.1\r\n" +
	"Accept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n" +
	`{"PartitionKey":"p'k","RowKey":"%s","V":1}` + "\r\n" +
	"--changeset_C\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n" +
	"DELETE http://127.0.0.1/devstoreaccount1/tt1(PartitionKey='p'k',RowKey='%s') HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n" +
	"--changeset_C--\r\n\r\n--batch_B--\r\n"

func TestWireBatchFraming(t *testing.T) {
	hs, acct := rawServer(t)
	acct.Table("tt1").Insert(context.Background(), localtable.Entity{PartitionKey: "p'k", RowKey: "old"})
	url := hs.URL + "/devstoreaccount1/$batch"
	ct := map[string]string{"Content-Type": "multipart/mixed; boundary=batch_B"}
	resp, got := do(t, "POST", url, ct, fmt.Sprintf(batchReq, "new", "old"))
	if resp.StatusCode != 202 || !strings.HasPrefix(got, "--batchresponse_") || strings.Count(got, "HTTP/1.1 204 No Content\r\n") != 2 {
		t.Fatalf("batch: %d\n%s", resp.StatusCode, got)
	}
	if !strings.Contains(got, "\r\n\r\n\r\n--changesetresponse_") {
		t.Errorf("no extra CRLF after an inner response:\n%q", got)
	}
	// Failure: index 1 (the entity to delete is gone), nothing applied.
	resp, got = do(t, "POST", url, ct, fmt.Sprintf(batchReq, "new2", "old"))
	if resp.StatusCode != 202 || strings.Count(got, "HTTP/1.1 ") != 1 || !strings.Contains(got, "HTTP/1.1 404 Not Found") || !strings.Contains(got, `"value":"1:`) {
		t.Fatalf("failed batch: %d\n%s", resp.StatusCode, got)
	}
	if _, err := acct.Table("tt1").Get(context.Background(), "p'k", "new2", nil); err == nil {
		t.Fatal("failed batch applied")
	}
	// A query alone in a batch.
	q := "--batch_B\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"GET http://127.0.0.1/devstoreaccount1/tt1()?$filter=RowKey%20eq%20'new' HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\n\r\n\r\n--batch_B--\r\n"
	resp, got = do(t, "POST", url, ct, q)
	if resp.StatusCode != 202 || !strings.Contains(got, "HTTP/1.1 200 OK") || !strings.Contains(got, `"RowKey":"new"`) {
		t.Fatalf("query batch: %d\n%s", resp.StatusCode, got)
	}
	// A body over 4 MiB is 413.
	resp, _ = do(t, "POST", url, ct, strings.Repeat("x", server.MaxBatchBody+1))
	if resp.StatusCode != 413 || resp.Header.Get("x-ms-error-code") != "RequestBodyTooLarge" {
		t.Fatalf("large batch: %d", resp.StatusCode)
	}
}

func TestWireACLAndServiceProperties(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	acl := `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>p1</Id><AccessPolicy><Start>2020-01-01T00:00:00Z</Start><Expiry>2099-01-01T00:00:00Z</Expiry><Permission>raud</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	resp, got := do(t, "PUT", base+"/tt1?comp=acl", nil, acl)
	if resp.StatusCode != 204 {
		t.Fatalf("set acl: %d %s", resp.StatusCode, got)
	}
	resp, got = do(t, "GET", base+"/tt1?comp=acl", nil, "")
	if resp.StatusCode != 200 || !strings.Contains(got, "<Id>p1</Id>") || !strings.Contains(got, "<Permission>raud</Permission>") {
		t.Fatalf("get acl: %d %s", resp.StatusCode, got)
	}
	six := "<SignedIdentifiers>" + strings.Repeat("<SignedIdentifier><Id>x</Id></SignedIdentifier>", 6) + "</SignedIdentifiers>"
	if resp, _ = do(t, "PUT", base+"/tt1?comp=acl", nil, six); resp.StatusCode != 400 {
		t.Fatalf("6 identifiers: %d", resp.StatusCode)
	}
	if resp, _ = do(t, "PUT", base+"/tt1?comp=acl", nil, "<broken"); resp.StatusCode != 400 {
		t.Fatalf("bad XML: %d", resp.StatusCode)
	}
	props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>60</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`
	if resp, got = do(t, "PUT", base+"/?restype=service&comp=properties", nil, props); resp.StatusCode != 202 {
		t.Fatalf("set properties: %d %s", resp.StatusCode, got)
	}
	if resp, got = do(t, "GET", base+"/?restype=service&comp=properties", nil, ""); resp.StatusCode != 200 || !strings.Contains(got, "<AllowedOrigins>*</AllowedOrigins>") {
		t.Fatalf("get properties: %d %s", resp.StatusCode, got)
	}
	if resp, got = do(t, "GET", base+"-secondary/?restype=service&comp=stats", nil, ""); resp.StatusCode != 200 || !strings.Contains(got, "<Status>live</Status>") {
		t.Fatalf("stats: %d %s", resp.StatusCode, got)
	}
}

// Bad inputs of every kind answer 4xx, never 5xx.
func TestWireHammerBadInputs(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	cases := []struct{ method, path, body string }{
		{"GET", "/devstoreaccount1/tt1(PartitionKey='a',RowKey=", ""},
		{"GET", "/devstoreaccount1/tt1(PartitionKey='a)", ""},
		{"GET", "/devstoreaccount1/tt1(Foo='a',RowKey='b')", ""},
		{"GET", "/devstoreaccount1/tt1(PartitionKey='a',PartitionKey='b')", ""},
		{"GET", "/devstoreaccount1/a/b/c", ""},
		{"GET", "/nosuchaccount/Tables", ""},
		{"GET", "/devstoreaccount1/tt1()?$top=1001", ""},
		{"GET", "/devstoreaccount1/tt1()?$top=x", ""},
		{"GET", "/devstoreaccount1/tt1()?$filter=((((", ""},
		{"GET", "/devstoreaccount1/tt1()?NextPartitionKey=zz&NextRowKey=yy", ""},
		{"GET", "/devstoreaccount1/tt1()?a=%zz", ""},
		{"GET", "/devstoreaccount1/Tables?$filter=TableName%20eq", ""},
		{"POST", "/devstoreaccount1/Tables", `{"TableName":5}`},
		{"POST", "/devstoreaccount1/Tables", `{}`},
		{"POST", "/devstoreaccount1/Tables", `nope`},
		{"DELETE", "/devstoreaccount1/Tables('x", ""},
		{"POST", "/devstoreaccount1/$batch", "garbage"},
		{"PUT", "/devstoreaccount1/Tables", ""},
		{"GET", "/devstoreaccount1", ""},
		{"GET", "/devstoreaccount1/?restype=service&comp=nope", ""},
		{"PUT", "/devstoreaccount1/?restype=service&comp=properties", "<Wrong/>"},
		{"PATCH", "/devstoreaccount1/tt1", "{}"},
		{"DELETE", "/devstoreaccount1/tt1()", ""},
	}
	for _, c := range cases {
		resp, got := do(t, c.method, hs.URL+c.path, map[string]string{"Accept": minimal}, c.body)
		if resp.StatusCode < 400 || resp.StatusCode >= 500 || resp.Header.Get("x-ms-error-code") == "" {
			t.Errorf("%s %s: %d %s", c.method, c.path, resp.StatusCode, got)
		}
	}
	for _, ct := range []string{"", "multipart/mixed", "text/plain", "multipart/mixed; boundary=x"} {
		resp, _ := do(t, "POST", base+"/$batch", map[string]string{"Content-Type": ct}, "--x\r\nContent-Type: application/http\r\n\r\nBAD\r\n--x--")
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("batch %q: %d", ct, resp.StatusCode)
		}
	}
	big := `{"PartitionKey":"p","RowKey":"r","S":"` + strings.Repeat("x", server.MaxEntityBody) + `"}`
	if resp, _ := do(t, "POST", base+"/tt1", nil, big); resp.StatusCode != 413 {
		t.Errorf("large entity body: %d", resp.StatusCode)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&buf, `,"P%d":1`, i)
	}
	buf.WriteString("}")
	if resp, _ := do(t, "POST", base+"/tt1", nil, buf.String()); resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "TooManyProperties" {
		t.Errorf("too many properties: %d", resp.StatusCode)
	}
}

func TestWireRecoverMiddleware(t *testing.T) {
	// A nil account makes every entity operation panic inside the handler.
	h := server.New(nil, &server.Options{DisableAuth: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Accounts: []server.AccountConfig{{Name: "broken"}}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/broken/tt1()", nil))
	if rec.Code != 500 || rec.Header().Get("x-ms-error-code") != "InternalError" {
		t.Fatalf("panic answered %d %q", rec.Code, rec.Header().Get("x-ms-error-code"))
	}
}
