package server_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable/server"
)

var guidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestWireCommonHeaders checks, on every route, on success and on
// failure, the headers the service sends with every response: a fresh
// x-ms-request-id, the request's x-ms-version, an RFC 1123 Date, the
// echoed x-ms-client-request-id, a Content-Type with every body (and
// none without), no-cache and nosniff on the JSON operations (neither on
// the XML ones), and HTTP/1.1 persistent connections.
func TestWireCommonHeaders(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	const version = "2021-12-02"
	entity := "/tt1(PartitionKey='p',RowKey='r')"
	staleETag := `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`
	batchCT := "multipart/mixed; boundary=batch_B"
	acl := `<SignedIdentifiers><SignedIdentifier><Id>p1</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	props := `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging></StorageServiceProperties>`
	cases := []struct {
		method, path, body string
		hdr                map[string]string
		status             int
		xmlOp              bool
	}{
		{"POST", "/Tables", `{"TableName":"hdrtable"}`, nil, 201, false},
		{"POST", "/Tables", `{"TableName":"hdrtable"}`, nil, 409, false},
		{"GET", "/Tables", "", nil, 200, false},
		{"GET", "/Tables?$top=1001", "", nil, 400, false},
		{"POST", "/tt1", `{"PartitionKey":"p","RowKey":"r"}`, nil, 201, false},
		{"POST", "/tt1", `{"PartitionKey":"p","RowKey":"r"}`, nil, 409, false},
		{"POST", "/tt1", `not json`, nil, 400, false},
		{"POST", "/tt1", `{"PartitionKey":"p","RowKey":"nc"}`, map[string]string{"Prefer": "return-no-content"}, 204, false},
		{"GET", "/tt1()", "", nil, 200, false},
		{"GET", "/tt1()?$filter=this%20is%20not%20a%20filter", "", nil, 400, false},
		{"GET", entity, "", nil, 200, false},
		{"GET", "/tt1(PartitionKey='p',RowKey='missing')", "", nil, 404, false},
		{"PUT", entity, `{"V":1}`, map[string]string{"If-Match": "*"}, 204, false},
		{"PUT", entity, `{"V":1}`, map[string]string{"If-Match": staleETag}, 412, false},
		{"PATCH", entity, `{"W":2}`, map[string]string{"If-Match": "*"}, 204, false},
		{"MERGE", entity, `{"W":3}`, map[string]string{"If-Match": "*"}, 204, false},
		{"PATCH", entity, `{"W":2}`, map[string]string{"If-Match": staleETag}, 412, false},
		{"DELETE", entity, "", map[string]string{"If-Match": "*"}, 204, false},
		{"DELETE", entity, "", map[string]string{"If-Match": "*"}, 404, false},
		{"POST", "/$batch", fmt.Sprintf(batchReq, "b1", "nc"), map[string]string{"Content-Type": batchCT}, 202, false},
		{"POST", "/$batch", "junk", map[string]string{"Content-Type": "text/plain"}, 400, false},
		{"PUT", "/tt1?comp=acl", acl, nil, 204, true},
		{"GET", "/tt1?comp=acl", "", nil, 200, true},
		{"PUT", "/tt1?comp=acl", "<broken", nil, 400, true},
		{"GET", "/nosuch?comp=acl", "", nil, 404, true},
		{"PUT", "/?restype=service&comp=properties", props, nil, 202, true},
		{"GET", "/?restype=service&comp=properties", "", nil, 200, true},
		{"PUT", "/?restype=service&comp=properties", "<broken", nil, 400, true},
		{"GET", "-secondary/?restype=service&comp=stats", "", nil, 200, true},
		{"GET", "/?restype=service&comp=stats", "", nil, 400, true},
		{"GET", "-secondary/tt1()", "", nil, 200, false},
		{"POST", "-secondary/tt1", `{"PartitionKey":"p","RowKey":"s"}`, nil, 403, false},
		{"DELETE", "/Tables('hdrtable')", "", nil, 204, false},
		{"DELETE", "/Tables('hdrtable')", "", nil, 404, false},
		{"GET", "/tt1/extra/segments", "", nil, 400, false},
		{"GET", "x/Tables", "", nil, 404, false}, // unknown account
	}
	seen := map[string]bool{}
	for _, c := range cases {
		hdr := map[string]string{"Accept": minimal, "x-ms-version": version, "x-ms-client-request-id": "client-id-1"}
		if strings.HasPrefix(c.body, "{") {
			hdr["Content-Type"] = "application/json"
		}
		for k, v := range c.hdr {
			hdr[k] = v
		}
		what := c.method + " " + c.path
		resp, got := do(t, c.method, base+c.path, hdr, c.body)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d: %s", what, resp.StatusCode, c.status, got)
		}
		checkCommonHeaders(t, what, resp, got, version, seen)
		json := resp.Header.Get("Cache-Control") == "no-cache" && resp.Header.Get("X-Content-Type-Options") == "nosniff"
		none := resp.Header.Get("Cache-Control") == "" && resp.Header.Get("X-Content-Type-Options") == ""
		if (c.xmlOp && !none) || (!c.xmlOp && !json) {
			t.Errorf("%s: Cache-Control %q X-Content-Type-Options %q", what, resp.Header.Get("Cache-Control"), resp.Header.Get("X-Content-Type-Options"))
		}
	}
	// A rejected version: the response carries the newest version.
	resp, got := do(t, "GET", base+"/Tables", map[string]string{"x-ms-version": "1999-01-01", "x-ms-client-request-id": "client-id-1"}, "")
	if resp.StatusCode != 400 {
		t.Errorf("bad version: %d", resp.StatusCode)
	}
	checkCommonHeaders(t, "bad version", resp, got, server.LatestVersion, seen)
}

func checkCommonHeaders(t *testing.T, what string, resp *http.Response, body, version string, seen map[string]bool) {
	t.Helper()
	id := resp.Header.Get("x-ms-request-id")
	if !guidRE.MatchString(id) || seen[id] {
		t.Errorf("%s: x-ms-request-id %q not a fresh GUID", what, id)
	}
	seen[id] = true
	if g := resp.Header.Get("x-ms-version"); g != version {
		t.Errorf("%s: x-ms-version %q, want %q", what, g, version)
	}
	if d, err := time.Parse(http.TimeFormat, resp.Header.Get("Date")); err != nil || time.Since(d) > time.Minute || time.Until(d) > time.Minute {
		t.Errorf("%s: Date %q", what, resp.Header.Get("Date"))
	}
	if g := resp.Header.Get("x-ms-client-request-id"); g != "client-id-1" {
		t.Errorf("%s: x-ms-client-request-id %q", what, g)
	}
	if ct := resp.Header.Get("Content-Type"); (body != "") != (ct != "") {
		t.Errorf("%s: Content-Type %q with a %d-byte body", what, ct, len(body))
	}
	if resp.Close || resp.Header.Get("Connection") != "" || resp.Header.Get("Keep-Alive") != "" {
		t.Errorf("%s: HTTP/1.1 connection not kept alive: Close %v, Connection %q", what, resp.Close, resp.Header.Get("Connection"))
	}
}

// Keep-alive is Go's HTTP/1.1 server's: persistent by default and with no
// header, "Connection: close" when the client asks to close, and
// "Connection: keep-alive" to an HTTP/1.0 client that asks to keep the
// connection. An error answered before the body is read keeps the
// connection when the body is small.
func TestWireKeepAlive(t *testing.T) {
	hs, _ := rawServer(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	roundTrip := func(req string) *http.Response {
		t.Helper()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b [4096]byte
		for {
			if _, err := resp.Body.Read(b[:]); err != nil {
				break
			}
		}
		resp.Body.Close()
		return resp
	}
	body := `{"PartitionKey":"p","RowKey":"r"}`
	for i, req := range []string{
		"GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nx-ms-version: 2019-02-02\r\n\r\n",
		"GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nx-ms-version: 1999-01-01\r\n\r\n",
		"POST /devstoreaccount1/tt1 HTTP/1.1\r\nHost: x\r\nx-ms-version: 1999-01-01\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body,
		"POST /devstoreaccount1-secondary/tt1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body,
	} {
		resp := roundTrip(req)
		if resp.Close || resp.Header.Get("Connection") != "" {
			t.Errorf("request %d: %d, Connection %q, Close %v", i, resp.StatusCode, resp.Header.Get("Connection"), resp.Close)
		}
	}
	resp := roundTrip("GET /devstoreaccount1/Tables HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
	if resp.Header.Get("Connection") != "keep-alive" || resp.Close {
		t.Errorf("HTTP/1.0 keep-alive: Connection %q, Close %v", resp.Header.Get("Connection"), resp.Close)
	}
	resp = roundTrip("GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if !resp.Close { // ReadResponse consumes the "Connection: close" it reports as Close
		t.Errorf("Connection: close: the response does not close")
	}
}
