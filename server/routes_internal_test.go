package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable/internal/reqclass"
)

// TestRoutes checks that the router and the table of operations in
// package reqclass agree: every operation has a handler (a preflight is
// answered before dispatch), every handler serves an operation, and one
// request of each operation, classified by reqclass, is served by the
// server rather than refused as an unknown route.
func TestRoutes(t *testing.T) {
	for _, o := range reqclass.Ops() {
		if _, ok := handlers[o]; !ok && o != reqclass.Preflight {
			t.Errorf("%v: no handler", o)
		}
	}
	for o := range handlers {
		if o == reqclass.Unknown || o.String() == "Unknown" {
			t.Errorf("a handler serves unknown operation %d", o)
		}
	}

	srv := fuzzServer(t)
	srv.opts.TestControls = noControls{}
	batchBody := "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\n" +
		"POST http://h/devstoreaccount1/tt1 HTTP/1.1\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"b\"}\r\n--c--\r\n--b--\r\n"
	seen := map[reqclass.Op]bool{}
	for _, c := range []struct {
		method, target, body string
		header               map[string]string
	}{
		{"OPTIONS", "/devstoreaccount1/tt1", "", map[string]string{"Origin": "http://x", "Access-Control-Request-Method": "GET"}},
		{"PUT", "/devstoreaccount1/?restype=service&comp=properties", "<StorageServiceProperties/>", nil},
		{"GET", "/devstoreaccount1/?restype=service&comp=properties", "", nil},
		{"GET", "/devstoreaccount1-secondary/?restype=service&comp=stats", "", nil},
		{"POST", "/devstoreaccount1/Tables", `{"TableName":"tt2"}`, nil},
		{"GET", "/devstoreaccount1/Tables", "", nil},
		{"GET", "/devstoreaccount1/Tables('tt2')", "", nil},
		{"PUT", "/devstoreaccount1/tt1?comp=acl", "<SignedIdentifiers/>", nil},
		{"GET", "/devstoreaccount1/tt1?comp=acl", "", nil},
		{"PUT", "/devstoreaccount1/tt1?comp=indexes", `{"Name":"ByA","Properties":["A"]}`, nil},
		{"GET", "/devstoreaccount1/tt1?comp=indexes", "", nil},
		{"POST", "/devstoreaccount1/tt1?comp=indexes&name=ByA", "", nil},
		{"DELETE", "/devstoreaccount1/tt1?comp=indexes&name=ByA", "", nil},
		{"PUT", "/devstoreaccount1/tt1?comp=expiry", `{"Property":"A"}`, nil},
		{"GET", "/devstoreaccount1/tt1?comp=expiry", "", nil},
		{"DELETE", "/devstoreaccount1/tt1?comp=expiry", "", nil},
		{"POST", "/devstoreaccount1/tt1", `{"PartitionKey":"p","RowKey":"r"}`, nil},
		{"GET", "/devstoreaccount1/tt1()", "", nil},
		{"GET", "/devstoreaccount1/tt1(PartitionKey='p',RowKey='r')", "", nil},
		{"PUT", "/devstoreaccount1/tt1(PartitionKey='p',RowKey='r')", `{"A":1}`, map[string]string{"If-Match": "*"}},
		{"MERGE", "/devstoreaccount1/tt1(PartitionKey='p',RowKey='r')", `{"B":1}`, map[string]string{"If-Match": "*"}},
		{"PUT", "/devstoreaccount1/tt1(PartitionKey='p',RowKey='s')", `{"A":1}`, nil},
		{"PATCH", "/devstoreaccount1/tt1(PartitionKey='p',RowKey='t')", `{"A":1}`, nil},
		{"DELETE", "/devstoreaccount1/tt1(PartitionKey='p',RowKey='r')", "", nil},
		{"POST", "/devstoreaccount1/$batch", batchBody, map[string]string{"Content-Type": "multipart/mixed; boundary=b"}},
		{"DELETE", "/devstoreaccount1/Tables('tt2')", "", nil},
		{"GET", "/devstoreaccount1/$changes?from=0", "", nil},
		{"POST", "/devstoreaccount1/$test?comp=reset", "", nil},
		{"PUT", "/devstoreaccount1/$test?comp=snapshot&name=a", "", nil},
		{"POST", "/devstoreaccount1/$test?comp=restore&name=a", "", nil},
		{"DELETE", "/devstoreaccount1/$test?comp=snapshot&name=a", "", nil},
		{"GET", "/devstoreaccount1/$test?comp=faults", "", nil},
		{"POST", "/devstoreaccount1/$test?comp=faults", "{}", nil},
		{"DELETE", "/devstoreaccount1/$test?comp=faults", "", nil},
		{"PUT", "/devstoreaccount1/$test?comp=latency", "{}", nil},
		{"DELETE", "/devstoreaccount1/$test?comp=latency", "", nil},
		{"GET", "/devstoreaccount1/$test?comp=clock", "", nil},
		{"PUT", "/devstoreaccount1/$test?comp=clock", "{}", nil},
		{"GET", "/devstoreaccount1/$test?comp=log", "", nil},
		{"DELETE", "/devstoreaccount1/$test?comp=log", "", nil},
	} {
		r := httptest.NewRequest(c.method, c.target, strings.NewReader(c.body))
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		op := reqclass.Classify(r).Op
		if op == reqclass.Unknown {
			t.Errorf("%s %s: classified Unknown", c.method, c.target)
			continue
		}
		seen[op] = true
		if op == reqclass.WatchChanges { // a stream: until the client goes
			ctx, cancel := context.WithTimeout(r.Context(), 50*time.Millisecond)
			defer cancel()
			r = r.WithContext(ctx)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		if rec.Code >= 300 && op != reqclass.Preflight {
			t.Errorf("%s %s (%v): status %d %s: %s", c.method, c.target, op, rec.Code, rec.Header().Get("X-Ms-Error-Code"), rec.Body)
		}
		if op == reqclass.Preflight && rec.Code == http.StatusMethodNotAllowed {
			t.Errorf("preflight refused as a method")
		}
	}
	for _, o := range reqclass.Ops() {
		if !seen[o] {
			t.Errorf("%v: no request of it is served here", o)
		}
	}
}

// noControls accepts every test control and does nothing: the router's
// half is what TestRoutes checks (internal/cli's tests check the
// controls themselves).
type noControls struct{}

func (noControls) TestControl(context.Context, *TestControl) (any, error) { return nil, nil }
