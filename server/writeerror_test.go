package server_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// WriteError answers in the operation's error format, with the service's
// headers, as the server's own failures are answered.
func TestWriteError(t *testing.T) {
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	s := server.New(acct, nil)
	busy := &localtable.Error{Code: "ServerBusy", Message: "The server is busy."}
	odd := &localtable.Error{Code: "SomethingElse", Message: "An injected failure."}
	for _, c := range []struct {
		method, path, version string
		send                  int // the status passed to WriteError
		e                     *localtable.Error
		status                int
		ctype, prefix         string
	}{
		{"POST", "/devstoreaccount1/orders", "2019-02-02", 0, busy, 503, "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
			`{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"The server is busy.\nRequestId:`},
		{"GET", "/devstoreaccount1/orders?comp=acl", "2019-02-02", 0, busy, 503, "application/xml",
			`<?xml version="1.0" encoding="utf-8"?><m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><m:code>ServerBusy</m:code><m:message xml:lang="en-US">The server is busy.`},
		{"GET", "/devstoreaccount1/?restype=service&comp=properties", "2019-02-02", 0, busy, 503, "application/xml", `<?xml version="1.0" encoding="utf-8"?><m:error`},
		{"GET", "/devstoreaccount1/Tables", "2011-08-18", 0, busy, 503, "application/xml", `<?xml version="1.0" encoding="utf-8"?><m:error`},
		// A status given wins over the code's; an unknown code is 500.
		{"POST", "/devstoreaccount1/orders", "2019-02-02", 429, busy, 429, "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
			`{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"The server is busy.\nRequestId:`},
		{"POST", "/devstoreaccount1/orders", "2019-02-02", 0, odd, 500, "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
			`{"odata.error":{"code":"SomethingElse","message":{"lang":"en-US","value":"An injected failure.\nRequestId:`},
		{"GET", "/devstoreaccount1/Tables", "", 0, nil, 500, "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
			`{"odata.error":{"code":"InternalError","message":{"lang":"en-US","value":"The server encountered an internal error. Please retry the request.`},
	} {
		r := httptest.NewRequest(c.method, "http://127.0.0.1:10002"+c.path, nil)
		if c.version != "" {
			r.Header.Set("x-ms-version", c.version)
		}
		w := httptest.NewRecorder()
		s.WriteError(w, r, c.send, c.e)
		body, _ := io.ReadAll(w.Body)
		h := w.Header()
		if w.Code != c.status || h.Get("Content-Type") != c.ctype || !strings.HasPrefix(string(body), c.prefix) ||
			h.Get("x-ms-request-id") == "" || h.Get("Date") == "" || !strings.Contains(string(body), "RequestId:"+h.Get("x-ms-request-id")) {
			t.Errorf("%s %s (%s): %d %v\n%s", c.method, c.path, c.version, w.Code, h, body)
		}
		if want := c.version >= "2017-07-29" || c.version == ""; (h.Get("x-ms-error-code") != "") != want {
			t.Errorf("%s %s (%s): x-ms-error-code %q", c.method, c.path, c.version, h.Get("x-ms-error-code"))
		}
	}
}
