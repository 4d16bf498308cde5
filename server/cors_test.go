package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// These tests check CORS on the wire ("CORS support for the Azure Storage
// services", "Preflight Table Request"), authentication on.

// corsRuleXML is one CorsRule element.
func corsRuleXML(origins, methods, allowed, exposed string, maxAge int) string {
	return "<CorsRule><AllowedOrigins>" + origins + "</AllowedOrigins><AllowedMethods>" + methods +
		"</AllowedMethods><AllowedHeaders>" + allowed + "</AllowedHeaders><ExposedHeaders>" + exposed +
		"</ExposedHeaders><MaxAgeInSeconds>" + fmt.Sprint(maxAge) + "</MaxAgeInSeconds></CorsRule>"
}

// putProperties sends a Set Table Service Properties body with Shared Key.
func putProperties(t *testing.T, srv *localtabletest.Server, body string) (*http.Response, string) {
	t.Helper()
	return send(t, sharedKeyRequest(t, "devstoreaccount1", srv.Key(), "PUT", srv.URL+"/?restype=service&comp=properties", body))
}

// getProperties answers Get Table Service Properties.
func getProperties(t *testing.T, srv *localtabletest.Server) string {
	t.Helper()
	resp, got := send(t, sharedKeyRequest(t, "devstoreaccount1", srv.Key(), "GET", srv.URL+"/?restype=service&comp=properties", ""))
	if resp.StatusCode != 200 {
		t.Fatalf("get properties: %d %s", resp.StatusCode, got)
	}
	return got
}

// setCORS puts rules (CorsRule elements) in force.
func setCORS(t *testing.T, srv *localtabletest.Server, rules ...string) {
	t.Helper()
	resp, got := putProperties(t, srv, `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors>`+strings.Join(rules, "")+`</Cors></StorageServiceProperties>`)
	if resp.StatusCode != 202 {
		t.Fatalf("set CORS rules: %d %s", resp.StatusCode, got)
	}
}

// preflight sends an anonymous OPTIONS request; empty values are left out.
func preflight(t *testing.T, url, origin, method, headers string, extra map[string]string) (*http.Response, string) {
	t.Helper()
	hdr := map[string]string{}
	for k, v := range map[string]string{"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers} {
		if v != "" {
			hdr[k] = v
		}
	}
	for k, v := range extra {
		hdr[k] = v
	}
	return do(t, "OPTIONS", url, hdr, "")
}

// The example rules of "CORS support for the Azure Storage services", with
// distinct max ages to tell which rule answered.
var docRules = []string{
	corsRuleXML("http://a.example, http://b.example", "PUT,HEAD", "x-ms-blob-content-type, x-ms-meta-data*", "x-ms-*", 5),
	corsRuleXML("*", "PUT,GET", "x-ms-blob-content-type,x-ms-blob-content-disposition", "x-ms-*", 7),
	corsRuleXML("http://a.example", "GET,DELETE", "x-ms-client-request-id", "x-ms-*", 9),
}

func TestWireCORSPreflight(t *testing.T) {
	srv := localtabletest.NewServer(t)
	newTable(t, srv, "corstable")
	setCORS(t, srv, docRules...)
	tbl := srv.URL + "/corstable"
	cases := []struct {
		name, origin, method, headers string
		status                        int
		code                          string
		maxAge                        string // "" unless 200
	}{
		{"first rule", "http://a.example", "PUT", "x-ms-blob-content-type", 200, "", "5"},
		{"second origin of the first rule", "http://b.example", "HEAD", "", 200, "", "5"},
		{"method not in the first rule: the second", "http://a.example", "GET", "x-ms-blob-content-type", 200, "", "7"},
		{"first match wins, its headers fail", "http://a.example", "GET", "x-ms-client-request-id", 403, "CorsPreflightFailure", ""},
		{"third rule", "http://a.example", "DELETE", "x-ms-client-request-id", 200, "", "9"},
		{"no rule for the origin and method", "http://c.example", "DELETE", "", 403, "CorsPreflightFailure", ""},
		{"any origin", "http://c.example", "PUT", "", 200, "", "7"},
		{"origins are case-sensitive", "HTTP://A.EXAMPLE", "PUT", "x-ms-blob-content-type", 200, "", "7"},
		{"origins are exact", "http://a.example/", "DELETE", "", 403, "CorsPreflightFailure", ""},
		{"methods are exact", "http://a.example", "put", "", 403, "CorsPreflightFailure", ""},
		{"headers are case-insensitive", "http://a.example", "PUT", "X-MS-BLOB-CONTENT-TYPE", 200, "", "5"},
		{"prefixed headers", "http://a.example", "PUT", "x-ms-meta-data, X-Ms-Meta-DataTarget , x-ms-blob-content-type", 200, "", "5"},
		{"prefix does not cover", "http://a.example", "PUT", "x-ms-meta-dat", 403, "CorsPreflightFailure", ""},
		{"one header not allowed", "http://a.example", "PUT", "x-ms-blob-content-type,content-type", 403, "CorsPreflightFailure", ""},
		{"no Origin", "", "PUT", "", 400, "InvalidHeaderValue", ""},
		{"no Access-Control-Request-Method", "http://a.example", "", "", 400, "InvalidHeaderValue", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, got := preflight(t, tbl, c.origin, c.method, c.headers, nil)
			h := resp.Header
			if resp.StatusCode != c.status || h.Get("x-ms-error-code") != c.code {
				t.Fatalf("%d %q %s", resp.StatusCode, h.Get("x-ms-error-code"), got)
			}
			if c.status != 200 {
				if h.Get("Access-Control-Allow-Origin") != "" || !strings.Contains(got, `"code":"`+c.code+`"`) {
					t.Fatalf("failed preflight: %v %s", h, got)
				}
				return
			}
			want := map[string]string{
				"Access-Control-Allow-Origin":      c.origin, // the origin even when "*" allowed it
				"Access-Control-Allow-Methods":     c.method,
				"Access-Control-Allow-Headers":     c.headers, // as sent
				"Access-Control-Max-Age":           c.maxAge,
				"Access-Control-Allow-Credentials": "true",
				"Access-Control-Expose-Headers":    "",
				"Vary":                             "",
				"Content-Length":                   "0",
			}
			for k, v := range want {
				if h.Get(k) != v {
					t.Errorf("%s: %q, want %q", k, h.Get(k), v)
				}
			}
			if _, ok := h["Access-Control-Allow-Headers"]; ok != (c.headers != "") {
				t.Errorf("Access-Control-Allow-Headers present: %v", ok)
			}
			if got != "" {
				t.Errorf("body %q", got)
			}
		})
	}
}

// A preflight is anonymous and evaluated at the service level: any
// resource, existing or not, and credentials are ignored.
func TestWireCORSPreflightAnyResource(t *testing.T) {
	srv := localtabletest.NewServer(t)
	newTable(t, srv, "corstable")
	for _, withRules := range []bool{false, true} {
		if withRules {
			setCORS(t, srv, corsRuleXML("http://a.example", "PUT,POST,DELETE,PATCH,MERGE,GET", "*", "", 60))
		}
		for _, path := range []string{
			"", "/", "/?restype=service&comp=properties", "/?restype=service&comp=stats",
			"/Tables", "/Tables()", "/Tables('corstable')", "/Tables('nosuch')",
			"/corstable", "/corstable()", "/corstable(PartitionKey='a',RowKey='b')", "/corstable?comp=acl",
			"/nosuch", "/nosuch(PartitionKey='a',RowKey='b')", "/$batch", "/a/b/c", "/bad(PartitionKey='",
		} {
			for _, extra := range []map[string]string{nil, {"Authorization": "SharedKey devstoreaccount1:bm9wZQ=="}} {
				resp, got := preflight(t, srv.URL+path, "http://a.example", "PATCH", "content-type,x-ms-version", extra)
				code := resp.Header.Get("x-ms-error-code")
				switch {
				case withRules && (resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://a.example"):
					t.Errorf("%s %v: %d %s", path, extra, resp.StatusCode, got)
				case !withRules && (resp.StatusCode != 403 || code != "CorsPreflightFailure"):
					t.Errorf("%s %v without rules: %d %s", path, extra, resp.StatusCode, got)
				}
			}
		}
	}
	// The 400 for a malformed preflight comes before the rules.
	resp, got := preflight(t, srv.URL+"/Tables", "http://a.example", "", "", nil)
	if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidHeaderValue" || !strings.Contains(got, "A required CORS header is not present.") {
		t.Errorf("no method: %d %s", resp.StatusCode, got)
	}
}

// corsExpect is what an actual request's response must carry.
type corsExpect struct {
	allowOrigin, credentials, vary string
	expose                         []string // names that Access-Control-Expose-Headers must list
	noExpose                       []string // and must not
}

func checkCORSHeaders(t *testing.T, what string, h http.Header, want corsExpect) {
	t.Helper()
	for k, v := range map[string]string{
		"Access-Control-Allow-Origin":      want.allowOrigin,
		"Access-Control-Allow-Credentials": want.credentials,
		"Vary":                             want.vary,
	} {
		if got := strings.Join(h.Values(k), ", "); got != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
	var exposed []string
	for _, n := range strings.Split(h.Get("Access-Control-Expose-Headers"), ",") {
		if n != "" {
			exposed = append(exposed, strings.ToLower(n))
		}
	}
	for _, n := range want.expose {
		if !slices.Contains(exposed, n) {
			t.Errorf("%s: Access-Control-Expose-Headers %q lacks %s", what, h.Get("Access-Control-Expose-Headers"), n)
		}
	}
	for _, n := range want.noExpose {
		if slices.Contains(exposed, n) {
			t.Errorf("%s: Access-Control-Expose-Headers %q has %s", what, h.Get("Access-Control-Expose-Headers"), n)
		}
	}
	if len(want.expose) == 0 && len(exposed) > 0 {
		t.Errorf("%s: Access-Control-Expose-Headers %q", what, h.Get("Access-Control-Expose-Headers"))
	}
}

func TestWireCORSActualRequests(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	tc := newTable(t, srv, "corstable")
	if _, err := tc.AddEntity(ctx, ent("p", "r"), nil); err != nil {
		t.Fatal(err)
	}
	entity := srv.URL + "/corstable(PartitionKey='p',RowKey='r')"
	missing := srv.URL + "/corstable(PartitionKey='p',RowKey='nope')"
	const a, z = "http://a.example", "http://z.example"
	specific := corsRuleXML(a, "GET,HEAD,PUT,POST,DELETE", "*", "x-ms-*,ETag", 60)
	anyGet := corsRuleXML("*", "GET,HEAD", "", "content-*", 60)

	request := func(method, url, origin, body string, signed bool) *http.Response {
		t.Helper()
		req := sharedKeyRequest(t, "devstoreaccount1", srv.Key(), method, url, body)
		if !signed {
			req.Header.Del("Authorization")
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, _ := send(t, req)
		return resp
	}
	specificMatch := corsExpect{allowOrigin: a, credentials: "true", vary: "Origin",
		expose: []string{"x-ms-request-id", "x-ms-version", "etag"}, noExpose: []string{"content-type"}}
	anyMatch := corsExpect{allowOrigin: "*", expose: []string{"content-type", "content-length"}, noExpose: []string{"x-ms-request-id"}}
	cases := []struct {
		name          string
		rules         []string
		method, url   string
		origin, body  string
		unsigned      bool
		status        int
		want          corsExpect
		wantErrorCode bool
	}{
		{name: "GET, origin named by a rule", rules: []string{specific, anyGet}, method: "GET", url: entity, origin: a, status: 200, want: specificMatch},
		{name: "HEAD, origin named by a rule", rules: []string{specific, anyGet}, method: "HEAD", url: srv.URL + "/Tables", origin: a, status: 405, want: specificMatch},
		{name: "404 is readable", rules: []string{specific, anyGet}, method: "GET", url: missing, origin: a, status: 404,
			want: corsExpect{allowOrigin: a, credentials: "true", vary: "Origin", expose: []string{"x-ms-error-code", "x-ms-request-id", "etag"}}},
		{name: "403 AuthenticationFailed is readable", rules: []string{specific, anyGet}, method: "GET", url: entity, origin: a, unsigned: true, status: 403,
			want: corsExpect{allowOrigin: a, credentials: "true", vary: "Origin", expose: []string{"x-ms-error-code"}}},
		{name: "PUT: no Vary", rules: []string{specific, anyGet}, method: "PUT", url: entity, origin: a, body: `{"X":1}`, status: 204,
			want: corsExpect{allowOrigin: a, credentials: "true", expose: []string{"x-ms-request-id", "etag"}}},
		{name: "rule for any origin answers *", rules: []string{specific, anyGet}, method: "GET", url: entity, origin: z, status: 200, want: anyMatch},
		{name: "no Origin, rule for any origin", rules: []string{specific, anyGet}, method: "GET", url: entity, status: 200, want: anyMatch},
		{name: "no Origin, rule for any origin, error", rules: []string{specific, anyGet}, method: "GET", url: missing, status: 404, want: anyMatch},
		{name: "origins are case-sensitive", rules: []string{specific, anyGet}, method: "GET", url: entity, origin: "HTTP://A.EXAMPLE", status: 200, want: anyMatch},
		{name: "no rule for the method", rules: []string{specific, anyGet}, method: "POST", url: srv.URL + "/corstable", origin: z, body: `{"PartitionKey":"p","RowKey":"r2"}`, status: 201},
		{name: "no Origin, not GET", rules: []string{specific, anyGet}, method: "DELETE", url: srv.URL + "/corstable(PartitionKey='p',RowKey='r2')", status: 204},
		{name: "GET, no rule for the origin", rules: []string{specific}, method: "GET", url: entity, origin: z, status: 200, want: corsExpect{vary: "Origin"}},
		{name: "GET, no Origin, no rule for every origin", rules: []string{specific}, method: "GET", url: entity, status: 200, want: corsExpect{vary: "Origin"}},
		{name: "CORS off", method: "GET", url: entity, origin: a, status: 200},
		{name: "CORS off, error", method: "GET", url: missing, origin: a, status: 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			setCORS(t, srv, c.rules...)
			resp := request(c.method, c.url, c.origin, c.body, !c.unsigned)
			if resp.StatusCode != c.status {
				t.Fatalf("%s %s: %d", c.method, c.url, resp.StatusCode)
			}
			checkCORSHeaders(t, c.name, resp.Header, c.want)
		})
	}
}

// The Expose-Headers list names the response's own headers that a prefix
// covers, and the literal names as set.
func TestWireCORSExposeHeaders(t *testing.T) {
	srv := localtabletest.NewServer(t)
	newTable(t, srv, "corstable")
	for _, c := range []struct {
		exposed string
		want    []string
	}{
		{"", nil},
		{"x-custom-header", []string{"x-custom-header"}},
		{"x-ms-request-*", []string{"X-Ms-Request-Id"}},
		{"X-MS-VERS*,date", []string{"X-Ms-Version", "date"}},
		{"DA*", []string{"Dataserviceversion", "Date"}},
		{"DATE*", []string{"Date"}},
		{"*", nil}, // every header: checked below
	} {
		setCORS(t, srv, corsRuleXML("http://a.example", "GET", "", c.exposed, 1))
		req := sharedKeyRequest(t, "devstoreaccount1", srv.Key(), "GET", srv.URL+"/Tables", "")
		req.Header.Set("Origin", "http://a.example")
		resp, _ := send(t, req)
		got := resp.Header.Get("Access-Control-Expose-Headers")
		if c.exposed == "*" {
			for _, n := range []string{"X-Ms-Request-Id", "X-Ms-Version", "Content-Type", "Date", "Content-Length", "Transfer-Encoding"} {
				if !slices.Contains(strings.Split(got, ","), n) {
					t.Errorf("*: %q lacks %s", got, n)
				}
			}
			continue
		}
		if got != strings.Join(c.want, ",") {
			t.Errorf("%q: Access-Control-Expose-Headers %q, want %q", c.exposed, got, strings.Join(c.want, ","))
		}
	}
}

func TestWireCORSRuleValidation(t *testing.T) {
	srv := localtabletest.NewServer(t)
	good := corsRuleXML("http://a.example", "GET", "", "", 60)
	many := func(n int, f func(i int) string) string {
		var s []string
		for i := range n {
			s = append(s, f(i))
		}
		return strings.Join(s, ",")
	}
	long := strings.Repeat("x", 257)
	cases := []struct {
		name, cors string
		code       string // "" for 202
	}{
		{"five rules", strings.Repeat(good, 5), ""},
		{"no rules", "", ""},
		{"every method, spaced", corsRuleXML("*", " DELETE, GET,HEAD,MERGE,POST,OPTIONS,PUT,PATCH,CONNECT,TRACE ", "", "", 0), ""},
		{"limits reached", corsRuleXML(many(64, func(i int) string { return fmt.Sprint("http://", i) }), "GET",
			many(2, func(i int) string { return fmt.Sprint("p", i, "*") })+","+many(64, func(i int) string { return fmt.Sprint("h", i) }), "x*", 1), ""},
		{"max age with spaces", strings.Replace(good, ">60<", "> 60 <", 1), ""},
		{"rules in any element order", "<CorsRule><MaxAgeInSeconds>1</MaxAgeInSeconds><ExposedHeaders/><AllowedHeaders/><AllowedMethods>GET</AllowedMethods><AllowedOrigins>*</AllowedOrigins></CorsRule>", ""},

		{"six rules", strings.Repeat(good, 6), "InvalidXmlDocument"},
		{"missing MaxAgeInSeconds", "<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders/><ExposedHeaders/></CorsRule>", "InvalidXmlDocument"},
		{"missing ExposedHeaders", "<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders/><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule>", "InvalidXmlDocument"},
		{"duplicate element", strings.Replace(good, "<AllowedMethods>", "<AllowedMethods>GET</AllowedMethods><AllowedMethods>", 1), "InvalidXmlDocument"},
		{"unknown element in CorsRule", strings.Replace(good, "<AllowedMethods>", "<Extra/><AllowedMethods>", 1), "InvalidXmlDocument"},
		{"unknown element in Cors", "<Rule/>", "InvalidXmlDocument"},
		{"text in Cors", "text" + good, "InvalidXmlDocument"},
		{"element in a value", strings.Replace(good, "http://a.example", "<b>x</b>", 1), "InvalidXmlDocument"},
		{"more than 2048 characters", corsRuleXML("*", "GET", many(60, func(i int) string { return fmt.Sprintf("header-%034d", i) }), "", 1), "InvalidXmlDocument"},
		{"2048 characters over several rules", strings.Repeat(corsRuleXML("*", "GET", many(20, func(i int) string { return fmt.Sprintf("header-%014d", i) }), "", 1), 5), "InvalidXmlDocument"},

		{"unknown method", corsRuleXML("*", "GET,FOO", "", "", 1), "InvalidXmlNodeValue"},
		{"lower-case method", corsRuleXML("*", "get", "", "", 1), "InvalidXmlNodeValue"},
		{"no method", corsRuleXML("*", "", "", "", 1), "InvalidXmlNodeValue"},
		{"empty method", corsRuleXML("*", "GET,,PUT", "", "", 1), "InvalidXmlNodeValue"},
		{"max age not a number", strings.Replace(good, ">60<", ">sixty<", 1), "InvalidXmlNodeValue"},
		{"max age empty", strings.Replace(good, ">60<", "><", 1), "InvalidXmlNodeValue"},
		{"max age beyond int32", strings.Replace(good, ">60<", ">2147483648<", 1), "InvalidXmlNodeValue"},
		{"* and other origins", corsRuleXML("*,http://a.example", "GET", "", "", 1), "InvalidXmlNodeValue"},
		{"empty origin", corsRuleXML("http://a.example,,http://b.example", "GET", "", "", 1), "InvalidXmlNodeValue"},
		{"no origin", corsRuleXML("", "GET", "", "", 1), "InvalidXmlNodeValue"},
		{"65 origins", corsRuleXML(many(65, func(i int) string { return fmt.Sprint(i) }), "GET", "", "", 1), "InvalidXmlNodeValue"},
		{"long origin", corsRuleXML("http://"+long, "GET", "", "", 1), "InvalidXmlNodeValue"},
		{"wildcard inside a header", corsRuleXML("*", "GET", "x-*-y", "", 1), "InvalidXmlNodeValue"},
		{"three prefixed headers", corsRuleXML("*", "GET", "", "a*,b*,c*", 1), "InvalidXmlNodeValue"},
		{"* counts as prefixed", corsRuleXML("*", "GET", "a*,b*,*", "", 1), "InvalidXmlNodeValue"},
		{"65 literal headers", corsRuleXML("*", "GET", many(65, func(i int) string { return fmt.Sprint("h", i) }), "", 1), "InvalidXmlNodeValue"},
		{"67 headers", corsRuleXML("*", "GET", "", many(67, func(i int) string { return "h" }), 1), "InvalidXmlNodeValue"},
		{"empty header", corsRuleXML("*", "GET", "a,,b", "", 1), "InvalidXmlNodeValue"},
		{"long header", corsRuleXML("*", "GET", "", long, 1), "InvalidXmlNodeValue"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			setCORS(t, srv, good) // a known state
			body := "<StorageServiceProperties><Cors>" + c.cors + "</Cors></StorageServiceProperties>"
			resp, got := putProperties(t, srv, body)
			if c.code == "" {
				if resp.StatusCode != 202 {
					t.Fatalf("%d %s", resp.StatusCode, got)
				}
				if props := getProperties(t, srv); !strings.Contains(props, "<Cors>"+c.cors+"</Cors>") {
					t.Errorf("properties %s", props)
				}
				return
			}
			if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != c.code {
				t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), got)
			}
			// Nothing was written: the known rule is still in force.
			if props := getProperties(t, srv); !strings.Contains(props, good) {
				t.Errorf("properties after a failed PUT: %s", props)
			}
			if resp, got := preflight(t, srv.URL+"/Tables", "http://a.example", "GET", "", nil); resp.StatusCode != 200 {
				t.Errorf("preflight after a failed PUT: %d %s", resp.StatusCode, got)
			}
		})
	}
}

// A properties document without a Cors element keeps the rules in force
// (and Get Table Service Properties shows them); an empty Cors element
// removes them.
func TestWireCORSPropertiesWithoutCors(t *testing.T) {
	srv := localtabletest.NewServer(t)
	rule := corsRuleXML("http://a.example", "GET", "", "", 60)
	logging := `<Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>`
	allowed := func() bool {
		t.Helper()
		resp, _ := preflight(t, srv.URL+"/", "http://a.example", "GET", "", nil)
		return resp.StatusCode == 200
	}
	for _, c := range []struct {
		name, body string
		allowed    bool
		want       string // in Get Table Service Properties
	}{
		{"rules", "<StorageServiceProperties><Cors>" + rule + "</Cors></StorageServiceProperties>", true, "<Cors>" + rule + "</Cors>"},
		{"no Cors element", `<?xml version="1.0"?>` + "\n<StorageServiceProperties>" + logging + "</StorageServiceProperties>",
			true, "<StorageServiceProperties>" + logging + "<Cors>" + rule + "</Cors></StorageServiceProperties>"},
		{"self-closing root", "<StorageServiceProperties />", true, "<StorageServiceProperties ><Cors>" + rule + "</Cors></StorageServiceProperties>"},
		{"empty Cors", "<StorageServiceProperties>" + logging + "<Cors/></StorageServiceProperties>", false, logging + "<Cors/></StorageServiceProperties>"},
		{"still none", "<StorageServiceProperties>" + logging + "</StorageServiceProperties>", false, "<StorageServiceProperties>" + logging + "<Cors/></StorageServiceProperties>"},
		{"rules again", "<StorageServiceProperties><Cors>" + rule + "</Cors></StorageServiceProperties>", true, "<Cors>" + rule + "</Cors>"},
		{"Cors with no CorsRule", "<StorageServiceProperties><Cors>\n</Cors></StorageServiceProperties>", false, "<Cors>\n</Cors>"},
		{"duplicate Cors", "<StorageServiceProperties><Cors/><Cors/></StorageServiceProperties>", false, "<Cors>\n</Cors>"},
	} {
		resp, got := putProperties(t, srv, c.body)
		if strings.HasPrefix(c.name, "duplicate") {
			if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidXmlDocument" {
				t.Errorf("%s: %d %s", c.name, resp.StatusCode, got)
			}
		} else if resp.StatusCode != 202 {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, got)
		}
		if allowed() != c.allowed {
			t.Errorf("%s: preflight allowed %v", c.name, !c.allowed)
		}
		if props := getProperties(t, srv); !strings.Contains(props, c.want) {
			t.Errorf("%s: properties %s", c.name, props)
		}
	}
}

// The Go SDK sets rules that the server then applies, reads them back, and
// keeps them when it sets properties without any.
func TestSDKCORSRules(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	rule := &aztables.CorsRule{
		AllowedOrigins:  to.Ptr("http://app.example"),
		AllowedMethods:  to.Ptr("GET,PATCH,MERGE"),
		AllowedHeaders:  to.Ptr("x-ms-*,content-type"),
		ExposedHeaders:  to.Ptr("etag"),
		MaxAgeInSeconds: to.Ptr(int32(120)),
	}
	if _, err := srv.Client.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{rule}}, nil); err != nil {
		t.Fatal(err)
	}
	resp, got := preflight(t, srv.URL+"/Tables", "http://app.example", "PATCH", "x-ms-version,content-type", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Max-Age") != "120" {
		t.Fatalf("preflight: %d %s", resp.StatusCode, got)
	}
	logging := &aztables.Logging{Version: to.Ptr("1.0"), Read: to.Ptr(true), Write: to.Ptr(false), Delete: to.Ptr(false),
		RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(false)}}
	if _, err := srv.Client.SetProperties(ctx, aztables.ServiceProperties{Logging: logging}, nil); err != nil {
		t.Fatal(err)
	}
	props, err := srv.Client.GetProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(props.Cors) != 1 || *props.Cors[0].AllowedMethods != "GET,PATCH,MERGE" || props.Logging == nil || !*props.Logging.Read {
		t.Fatalf("properties: %+v", props.ServiceProperties)
	}
	rule.AllowedMethods = to.Ptr("GET,FETCH")
	_, err = srv.Client.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{rule}}, nil)
	wantCode(t, err, 400, "InvalidXmlNodeValue")
}

// Only a batch's own response carries the Access-Control headers, not the
// responses inside its body.
func TestWireCORSBatch(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	props := "<StorageServiceProperties><Cors>" + corsRuleXML("*", "GET,POST", "*", "x-ms-*", 60) + "</Cors></StorageServiceProperties>"
	if resp, got := do(t, "PUT", base+"/?restype=service&comp=properties", nil, props); resp.StatusCode != 202 {
		t.Fatalf("set properties: %d %s", resp.StatusCode, got)
	}
	if resp, got := do(t, "POST", base+"/tt1", map[string]string{"Content-Type": "application/json"}, `{"PartitionKey":"p","RowKey":"r"}`); resp.StatusCode != 201 {
		t.Fatalf("insert: %d %s", resp.StatusCode, got)
	}
	q := "--batch_B\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"GET http://h/devstoreaccount1/tt1(PartitionKey='p',RowKey='r') HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\nOrigin: http://a.example\r\n\r\n\r\n--batch_B--\r\n"
	resp, got := do(t, "POST", base+"/$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_B", "Origin": "http://a.example"}, q)
	if resp.StatusCode != 202 || !strings.Contains(got, "HTTP/1.1 200 OK\r\n") {
		t.Fatalf("batch: %d %s", resp.StatusCode, got)
	}
	checkCORSHeaders(t, "batch", resp.Header, corsExpect{allowOrigin: "*", expose: []string{"x-ms-request-id"}})
	if lower := strings.ToLower(got); strings.Contains(lower, "access-control-") || strings.Contains(lower, "vary:") {
		t.Errorf("CORS headers inside the batch:\n%s", got)
	}
}
