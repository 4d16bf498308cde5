package server_test

import (
	"net/http"
	"testing"
	"time"
)

// TestWireCommonHeaders checks the headers every response carries, on
// success and on failure, and the echo of x-ms-client-request-id.
func TestWireCommonHeaders(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/Tables", ""},
		{"GET", "/tt1()", ""},
		{"GET", "/tt1(PartitionKey='p',RowKey='missing')", ""},
		{"POST", "/tt1", `{"PartitionKey":"p","RowKey":"r"}`},
		{"POST", "/tt1", `not json`},
		{"DELETE", "/Tables('nosuch')", ""},
	} {
		resp, got := do(t, c.method, base+c.path, map[string]string{"Accept": minimal, "x-ms-client-request-id": "client-id-1"}, c.body)
		if resp.Header.Get("x-ms-request-id") == "" || resp.Header.Get("x-ms-version") == "" {
			t.Errorf("%s %s: no x-ms-request-id or x-ms-version: %v", c.method, c.path, resp.Header)
		}
		if _, err := time.Parse(http.TimeFormat, resp.Header.Get("Date")); err != nil {
			t.Errorf("%s %s: Date %q is not RFC 1123", c.method, c.path, resp.Header.Get("Date"))
		}
		if resp.Header.Get("x-ms-client-request-id") != "client-id-1" {
			t.Errorf("%s %s: x-ms-client-request-id not echoed: %d %s", c.method, c.path, resp.StatusCode, got)
		}
	}
}
