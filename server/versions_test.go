package server_test

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

// storageXMLError is the storage services' common XML error document.
type storageXMLError struct {
	XMLName                   xml.Name
	Code                      string `xml:"Code"`
	Message                   string `xml:"Message"`
	HeaderName                string `xml:"HeaderName"`
	HeaderValue               string `xml:"HeaderValue"`
	AuthenticationErrorDetail string `xml:"AuthenticationErrorDetail"`
}

// odataXMLError is the Table service's OData XML error document.
type odataXMLError struct {
	XMLName xml.Name
	Code    string `xml:"code"`
	Message struct {
		Lang string `xml:"lang,attr"`
		Text string `xml:",chardata"`
	} `xml:"message"`
}

// wantStorageXMLError checks a response is the storage XML error with
// code, its message starting with msg, and returns it.
func wantStorageXMLError(t *testing.T, what string, resp *http.Response, body string, status int, code, msg string) storageXMLError {
	t.Helper()
	var e storageXMLError
	if err := xml.Unmarshal([]byte(body), &e); err != nil || e.XMLName.Local != "Error" || e.XMLName.Space != "" {
		t.Fatalf("%s: not a storage XML error (%v): %s", what, err, body)
	}
	if resp.StatusCode != status || e.Code != code || resp.Header.Get("x-ms-error-code") != code {
		t.Errorf("%s: %d %s (header %q), want %d %s", what, resp.StatusCode, e.Code, resp.Header.Get("x-ms-error-code"), status, code)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/xml" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	wantMessage(t, what, resp, e.Message, msg)
	return e
}

// wantODataXMLError checks a response is the OData XML error with code.
func wantODataXMLError(t *testing.T, what string, resp *http.Response, body string, status int, code, msg string) {
	t.Helper()
	var e odataXMLError
	if err := xml.Unmarshal([]byte(body), &e); err != nil || e.XMLName.Local != "error" ||
		e.XMLName.Space != "http://schemas.microsoft.com/ado/2007/08/dataservices/metadata" || e.Message.Lang != "en-US" {
		t.Fatalf("%s: not an OData XML error (%v): %s", what, err, body)
	}
	if !strings.Contains(body, `<m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><m:code>`) {
		t.Errorf("%s: not the service's m:error form: %s", what, body)
	}
	wantHeader := code
	if v := resp.Request.Header.Get("x-ms-version"); v != "" {
		wantHeader = errCodeFor(v, code)
	}
	if resp.StatusCode != status || e.Code != code || resp.Header.Get("x-ms-error-code") != wantHeader {
		t.Errorf("%s: %d %s (header %q), want %d %s: %s", what, resp.StatusCode, e.Code, resp.Header.Get("x-ms-error-code"), status, code, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/xml" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	wantMessage(t, what, resp, e.Message.Text, msg)
}

// wantMessage checks an error message starts with msg and ends with the
// request id and a 7-digit UTC time.
func wantMessage(t *testing.T, what string, resp *http.Response, got, msg string) {
	t.Helper()
	text, tail, ok := strings.Cut(got, "\nRequestId:")
	id, tm, ok2 := strings.Cut(tail, "\nTime:")
	if !ok || !ok2 || !strings.HasPrefix(text, msg) || id != resp.Header.Get("x-ms-request-id") {
		t.Errorf("%s: message %q, want %q…\\nRequestId:%s\\nTime:…", what, got, msg, resp.Header.Get("x-ms-request-id"))
	}
	if _, err := time.Parse("2006-01-02T15:04:05.0000000Z", tm); err != nil {
		t.Errorf("%s: message time %q: %v", what, tm, err)
	}
}

// Every listed version is accepted and echoed; from 2013-08-15 the JSON
// operations work, and before it they are 415 JsonFormatNotSupported.
func TestWireVersionEchoed(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	for _, v := range server.SupportedVersions() {
		resp, got := do(t, "GET", base+"/?restype=service&comp=properties", map[string]string{"x-ms-version": v}, "")
		if resp.StatusCode != 200 {
			t.Fatalf("%s: properties: %d %s", v, resp.StatusCode, got)
		}
		want := v
		if v < "2009-09-19" { // the service sends x-ms-version from 2009-09-19
			want = ""
		}
		if g := resp.Header.Get("x-ms-version"); g != want {
			t.Errorf("%s: x-ms-version %q, want %q", v, g, want)
		}
		resp, got = do(t, "GET", base+"/Tables", map[string]string{"x-ms-version": v, "Accept": minimal}, "")
		if v >= "2013-08-15" {
			if resp.StatusCode != 200 || (v >= "2009-09-19" && resp.Header.Get("x-ms-version") != v) {
				t.Errorf("%s: query tables: %d %q %s", v, resp.StatusCode, resp.Header.Get("x-ms-version"), got)
			}
			continue
		}
		wantODataXMLError(t, v+" JSON", resp, got, 415, "JsonFormatNotSupported", "JSON format is not supported.")
	}
	if vs := server.SupportedVersions(); vs[len(vs)-1] != server.LatestVersion || !slices.IsSorted(vs) || vs[0] != "2009-04-14" {
		t.Errorf("LatestVersion %s is not the newest listed version", server.LatestVersion)
	}
}

// errCodeFor is the x-ms-error-code a version answers with: none before
// 2017-07-29.
func errCodeFor(v, code string) string {
	if v < "2017-07-29" {
		return ""
	}
	return code
}

// A malformed or unknown x-ms-version is 400 InvalidHeaderValue in the
// storage XML format, naming the header and its value, on every kind of
// operation; the response carries the newest version.
func TestWireVersionRejected(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	for _, v := range []string{"2019-02-03", "2099-12-31", "2019-2-2", "latest", "", "2019-02-02x", "<&>"} {
		for _, path := range []string{"/Tables", "/tt1()", "/?restype=service&comp=properties", "/tt1?comp=acl"} {
			resp, got := do(t, "GET", base+path, map[string]string{"x-ms-version": v, "Accept": minimal}, "")
			e := wantStorageXMLError(t, v+" "+path, resp, got, 400, "InvalidHeaderValue", "The value for one of the HTTP headers is not in the correct format.")
			if e.HeaderName != "x-ms-version" || e.HeaderValue != v {
				t.Errorf("%q %s: HeaderName %q HeaderValue %q", v, path, e.HeaderName, e.HeaderValue)
			}
			if g := resp.Header.Get("x-ms-version"); g != server.LatestVersion {
				t.Errorf("%q %s: x-ms-version %q", v, path, g)
			}
		}
	}
	req, _ := http.NewRequest("GET", base+"/Tables", nil)
	req.Header.Add("x-ms-version", "2019-02-02")
	req.Header.Add("x-ms-version", "2020-08-04")
	resp, got := send(t, req)
	wantStorageXMLError(t, "two versions", resp, got, 400, "InvalidHeaderValue", "The value for one of the HTTP headers")
}

// A request with credentials must name its version (403
// AuthenticationFailed otherwise); a SAS request is served with its
// signed version, ignoring x-ms-version; with authentication off an
// unversioned request is served with the newest version.
func TestWireUnversionedRequests(t *testing.T) {
	srv := localtabletest.NewServer(t)
	req := sharedKeyRequest(t, server.DevAccountName, srv.Key(), "GET", srv.URL+"/Tables", "")
	resp, got := send(t, req)
	if resp.StatusCode != 200 || resp.Header.Get("x-ms-version") != "2019-02-02" {
		t.Fatalf("versioned shared key: %d %q %s", resp.StatusCode, resp.Header.Get("x-ms-version"), got)
	}
	for _, path := range []string{"/Tables", "/?restype=service&comp=properties"} {
		req = sharedKeyRequest(t, server.DevAccountName, srv.Key(), "GET", srv.URL+path, "")
		req.Header.Del("x-ms-version") // not part of a Table Shared Key signature
		resp, got = send(t, req)
		e := wantStorageXMLError(t, "unversioned shared key "+path, resp, got, 403, "AuthenticationFailed", "Server failed to authenticate the request.")
		if e.AuthenticationErrorDetail != "Unversioned authenticated access is not allowed." {
			t.Errorf("unversioned shared key %s: detail %q", path, e.AuthenticationErrorDetail)
		}
	}

	now := time.Now()
	sas := accountSAS(srv.Key(), "2020-08-04", "rl", "sco", now.Add(-time.Hour), now.Add(time.Hour))
	for _, hdr := range []string{"", "2019-02-02", "not-a-version"} {
		req, _ = http.NewRequest("GET", srv.URL+"/Tables?"+sas, nil)
		if hdr != "" {
			req.Header.Set("x-ms-version", hdr)
		}
		resp, got = send(t, req)
		if resp.StatusCode != 200 || resp.Header.Get("x-ms-version") != "2020-08-04" {
			t.Errorf("SAS sv=2020-08-04, x-ms-version %q: %d %q %s", hdr, resp.StatusCode, resp.Header.Get("x-ms-version"), got)
		}
	}

	// A CORS preflight is anonymous: neither a missing nor a bad version
	// refuses it (no CORS rule here: 403 CorsPreflightFailure).
	for _, v := range []string{"", "bogus"} {
		req, _ = http.NewRequest("OPTIONS", srv.URL+"/Tables", nil)
		req.Header.Set("Origin", "http://a.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		req.Header.Set("Authorization", "SharedKey devstoreaccount1:bm9wZQ==")
		if v != "" {
			req.Header.Set("x-ms-version", v)
		}
		resp, got = send(t, req)
		wantStatus(t, "preflight, x-ms-version "+v, resp, got, 403, "CorsPreflightFailure")
	}

	hs, _ := rawServer(t)
	resp, got = do(t, "GET", hs.URL+"/devstoreaccount1/Tables", map[string]string{"Authorization": "SharedKey x:y"}, "")
	if resp.StatusCode != 200 || resp.Header.Get("x-ms-version") != server.LatestVersion {
		t.Errorf("auth off, unversioned: %d %q %s", resp.StatusCode, resp.Header.Get("x-ms-version"), got)
	}
}

// What the service's responses show differs by version: x-ms-error-code
// from 2017-07-29, the x-ms-client-request-id echo from 2019-02-02, Get
// Table Service Stats from 2013-08-15, JSON from 2013-08-15 (Atom before,
// which this server does not speak).
func TestWireVersionDependentBehaviour(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	for _, c := range []struct {
		v        string
		wantCode string
	}{{"2017-04-17", ""}, {"2017-07-29", "ResourceNotFound"}, {"2019-02-02", "ResourceNotFound"}} {
		resp, got := do(t, "DELETE", base+"/Tables('nosuch')", map[string]string{"x-ms-version": c.v, "Accept": minimal}, "")
		if _, ok := resp.Header["X-Ms-Error-Code"]; resp.StatusCode != 404 || resp.Header.Get("x-ms-error-code") != c.wantCode || ok != (c.wantCode != "") ||
			!strings.Contains(got, `"code":"ResourceNotFound"`) {
			t.Errorf("%s: %d x-ms-error-code %q: %s", c.v, resp.StatusCode, resp.Header.Get("x-ms-error-code"), got)
		}
	}
	for _, c := range []struct {
		v    string
		echo bool
	}{{"2018-11-09", false}, {"2019-02-02", true}, {server.LatestVersion, true}} {
		for _, path := range []string{"/Tables", "/Tables('nosuch')"} {
			resp, _ := do(t, "GET", base+path, map[string]string{"x-ms-version": c.v, "x-ms-client-request-id": "abc-123", "Accept": minimal}, "")
			if got := resp.Header.Get("x-ms-client-request-id"); (got == "abc-123") != c.echo || (!c.echo && got != "") {
				t.Errorf("%s %s: x-ms-client-request-id %q, echo %v", c.v, path, got, c.echo)
			}
		}
	}
	resp, got := do(t, "GET", base+"-secondary/?restype=service&comp=stats", map[string]string{"x-ms-version": "2012-02-12"}, "")
	wantODataXMLError(t, "stats 2012-02-12", resp, got, 400, "InvalidQueryParameterValue", "Value for one of the query parameters specified in the request URI is invalid.")
	resp, got = do(t, "GET", base+"-secondary/?restype=service&comp=stats", map[string]string{"x-ms-version": "2013-08-15"}, "")
	if resp.StatusCode != 200 || !strings.Contains(got, "<Status>live</Status>") {
		t.Errorf("stats 2013-08-15: %d %s", resp.StatusCode, got)
	}
	resp, got = do(t, "GET", base+"/Tables", map[string]string{"x-ms-version": "2012-02-12", "Accept": "application/atom+xml"}, "")
	wantODataXMLError(t, "Atom 2012-02-12", resp, got, 415, "AtomFormatNotSupported", "Atom format is not supported")
	resp, got = do(t, "POST", base+"/tt1", map[string]string{"x-ms-version": "2011-08-18", "Content-Type": "application/json"}, `{"PartitionKey":"p","RowKey":"r"}`)
	wantODataXMLError(t, "JSON insert 2011-08-18", resp, got, 415, "JsonFormatNotSupported", "JSON format is not supported.")
	resp, got = do(t, "GET", base+"/tt1(PartitionKey='p',RowKey='r')", map[string]string{"Accept": minimal}, "")
	if resp.StatusCode != 404 {
		t.Errorf("the refused insert wrote: %d %s", resp.StatusCode, got)
	}
}

// x-ms-client-request-id is echoed when it is 1 to 1024 visible ASCII
// characters, and left out otherwise.
func TestWireClientRequestIDEcho(t *testing.T) {
	hs, _ := rawServer(t)
	url := hs.URL + "/devstoreaccount1/Tables"
	for _, c := range []struct {
		id   string
		echo bool
	}{
		{strings.Repeat("a", 1024), true},
		{strings.Repeat("a", 1025), false},
		{"~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./", true},
		{"with space", false},
		{"caf\u00e9", false},
	} {
		resp, _ := do(t, "GET", url, map[string]string{"x-ms-client-request-id": c.id, "x-ms-version": "2019-02-02"}, "")
		if got := resp.Header.Get("x-ms-client-request-id"); (c.echo && got != c.id) || (!c.echo && got != "") {
			t.Errorf("id %.20q (%d bytes): echoed %.20q, want echo %v", c.id, len(c.id), got, c.echo)
		}
	}
}

// With AcceptAnyVersion (Azurite's --skipApiVersionCheck) an unknown
// x-ms-version is served with the newest known version not after it,
// and echoed as that version; two versions are still refused.
func TestWireAcceptAnyVersion(t *testing.T) {
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(server.New(acct, &server.Options{DisableAuth: true, AcceptAnyVersion: true}))
	t.Cleanup(func() { hs.Close(); acct.Close() })
	base := hs.URL + "/devstoreaccount1"
	for v, want := range map[string]string{
		"2099-12-31": server.LatestVersion, // a client newer than the server
		"2019-02-03": "2019-02-02",         // between two versions
		"2008-01-01": "2009-04-14",         // before the first (no x-ms-version in the answer)
		"latest":     server.LatestVersion, // no date
		"2019-02-02": "2019-02-02",         // known: itself
	} {
		resp, got := do(t, "GET", base+"/Tables", map[string]string{"x-ms-version": v, "Accept": minimal}, "")
		if want < "2013-08-15" {
			wantODataXMLError(t, v, resp, got, 415, "JsonFormatNotSupported", "JSON format is not supported.")
			continue
		}
		if resp.StatusCode != 200 || resp.Header.Get("x-ms-version") != want {
			t.Errorf("%s: %d, x-ms-version %q, want 200 %s: %s", v, resp.StatusCode, resp.Header.Get("x-ms-version"), want, got)
		}
	}
	req, _ := http.NewRequest("GET", base+"/Tables", nil)
	req.Header.Add("x-ms-version", "2019-02-02")
	req.Header.Add("x-ms-version", "2099-08-04")
	resp, got := send(t, req)
	wantStorageXMLError(t, "two versions", resp, got, 400, "InvalidHeaderValue", "The value for one of the HTTP headers")
}
