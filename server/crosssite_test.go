package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestWireRefusesOtherMediaTypes: a JSON operation's body must be
// application/json. A page on any site can POST text/plain, form and
// multipart bodies without a CORS preflight; the service refuses them
// with 415, and so does the server (issue 22).
func TestWireRefusesOtherMediaTypes(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	for _, ct := range []string{
		"text/plain",
		"text/plain;charset=UTF-8",
		"application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x",
		"application/octet-stream",
	} {
		resp, got := do(t, "POST", base+"/Tables", map[string]string{"Content-Type": ct}, `{"TableName":"crosssite"}`)
		if resp.StatusCode != http.StatusUnsupportedMediaType || resp.Header.Get("x-ms-error-code") != "MediaTypeNotSupported" {
			t.Errorf("create table as %s: %d %s", ct, resp.StatusCode, got)
		}
		resp, got = do(t, "POST", base+"/tt1", map[string]string{"Content-Type": ct}, `{"PartitionKey":"p","RowKey":"r"}`)
		if resp.StatusCode != http.StatusUnsupportedMediaType || resp.Header.Get("x-ms-error-code") != "MediaTypeNotSupported" {
			t.Errorf("insert entity as %s: %d %s", ct, resp.StatusCode, got)
		}
		resp, got = do(t, "PUT", base+"/tt1(PartitionKey='p',RowKey='r')", map[string]string{"Content-Type": ct}, `{}`)
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("upsert entity as %s: %d %s", ct, resp.StatusCode, got)
		}
	}
	if _, got := do(t, "GET", base+"/tt1()", map[string]string{"Accept": minimal}, ""); !strings.Contains(got, `"value":[]`) {
		t.Errorf("an entity was stored: %s", got)
	}
	// What the SDKs send is accepted.
	for i, ct := range []string{"application/json", "application/json;odata=nometadata", "application/json; odata=minimalmetadata; charset=utf-8", "Application/JSON"} {
		resp, got := do(t, "POST", base+"/tt1", map[string]string{"Content-Type": ct}, `{"PartitionKey":"p","RowKey":"`+string(rune('a'+i))+`"}`)
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("insert entity as %s: %d %s", ct, resp.StatusCode, got)
		}
	}
}

// TestWireNoAuthRefusesOtherOrigins: without authentication, a browser
// request (one with an Origin header) is served only if a CORS rule of
// the account allows its origin and method (issue 22).
func TestWireNoAuthRefusesOtherOrigins(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	json := map[string]string{"Content-Type": "application/json"}
	from := func(origin string) map[string]string {
		return map[string]string{"Content-Type": "application/json", "Origin": origin}
	}
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1"} {
		resp, got := do(t, "POST", base+"/Tables", from(origin), `{"TableName":"crosssite"}`)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("x-ms-error-code") != "AuthorizationFailure" {
			t.Errorf("create table from %s: %d %s", origin, resp.StatusCode, got)
		}
		resp, got = do(t, "GET", base+"/tt1()", from(origin), "")
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("query from %s: %d %s", origin, resp.StatusCode, got)
		}
	}
	if resp, got := do(t, "GET", base+"/Tables('crosssite')", json, ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the table was created: %d %s", resp.StatusCode, got)
	}
	// Without Origin (not a browser) every request is served.
	if resp, got := do(t, "POST", base+"/tt1", json, `{"PartitionKey":"p","RowKey":"r"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("insert without Origin: %d %s", resp.StatusCode, got)
	}
	// A rule for an origin lets that origin, and its methods, through.
	props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://app.example</AllowedOrigins><AllowedMethods>GET,POST</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>60</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`
	if resp, got := do(t, "PUT", base+"/?restype=service&comp=properties", nil, props); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("set properties: %d %s", resp.StatusCode, got)
	}
	if resp, got := do(t, "POST", base+"/tt1", from("http://app.example"), `{"PartitionKey":"p","RowKey":"s"}`); resp.StatusCode != http.StatusCreated || resp.Header.Get("Access-Control-Allow-Origin") != "http://app.example" {
		t.Errorf("insert from an allowed origin: %d %s", resp.StatusCode, got)
	}
	if resp, got := do(t, "DELETE", base+"/tt1(PartitionKey='p',RowKey='s')", map[string]string{"Origin": "http://app.example", "If-Match": "*"}, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("delete from an allowed origin, a method no rule allows: %d %s", resp.StatusCode, got)
	}
	if resp, got := do(t, "POST", base+"/tt1", from("http://evil.example"), `{"PartitionKey":"p","RowKey":"t"}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("insert from another origin: %d %s", resp.StatusCode, got)
	}
}
