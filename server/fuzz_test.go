package server

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
)

func fuzzServer(t testing.TB) *Server {
	acct, err := localtable.Open(&localtable.Options{Feed: &localtable.FeedOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acct.Close() })
	acct.CreateTable(context.Background(), "tt1")
	return New(acct, &Options{DisableAuth: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// FuzzBatch feeds arbitrary $batch bodies to the handler: never a panic,
// never a 5xx.
func FuzzBatch(f *testing.F) {
	f.Add("--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nPOST http://h/devstoreaccount1/tt1 HTTP/1.1\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\r\n--c--\r\n--b--\r\n")
	f.Add("--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nDELETE http://h/devstoreaccount1/tt1(PartitionKey='p'k',RowKey='r') HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n--c--\r\n--b--\r\n")
	f.Add("--b\r\nContent-Type: application/http\r\n\r\nGET http://h/devstoreaccount1/tt1()?$top=1 HTTP/1.1\r\n\r\n\r\n--b--\r\n")
	f.Add("--b\nContent-Type: multipart/mixed; boundary=c\n\n--c\nContent-Type: application/http\n\nMERGE /devstoreaccount1/tt1(PartitionKey='p',RowKey='r') HTTP/1.1\nIf-Match: W/\"x\"\n\n{}\n--c--\n--b--")
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", "/devstoreaccount1/$batch", strings.NewReader(body))
		req.Header.Set("Content-Type", "multipart/mixed; boundary=b")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	})
}

// FuzzEntityPath checks the routes on arbitrary path segments: no panic,
// no 5xx. (The key parser's round trip is reqclass's FuzzClassify.)
func FuzzEntityPath(f *testing.F) {
	for _, s := range []string{
		"tt1(PartitionKey='p',RowKey='r')", "tt1(PartitionKey='p''k', RowKey='')", "tt1()", "tt1",
		"tt1(RowKey='r',PartitionKey='p')", "tt1(PartitionKey='a',RowKey=", "Tables('tt1')", "$batch",
		"tt1(PartitionKey='%2F',RowKey='%ZZ')",
	} {
		f.Add(s)
	}
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, seg string) {
		if strings.ContainsAny(seg, " \t\r\n#?") {
			return
		}
		for _, m := range []string{"GET", "PUT", "DELETE", "MERGE"} {
			req := httptest.NewRequest(m, "/devstoreaccount1/x", strings.NewReader(`{"A":1}`))
			req.URL.RawPath = ""
			req.URL.Path = "/devstoreaccount1/" + seg
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s %q: status %d: %s", m, seg, rec.Code, rec.Body)
			}
		}
	})
}

// FuzzEntityJSON inserts arbitrary JSON bodies: never a panic or a 5xx,
// and an accepted entity reads back (minimal metadata) as a body that
// decodes to the same entity.
func FuzzEntityJSON(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"p","RowKey":"r","A":1,"B":"s","C":true,"D":1.5,"E":null}`,
		`{"PartitionKey":"p","RowKey":"r","L@odata.type":"Edm.Int64","L":"-9223372036854775808"}`,
		`{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Double","N":"NaN","I@odata.type":"Edm.Double","I":"-Infinity"}`,
		`{"PartitionKey":"p","RowKey":"r","T@odata.type":"Edm.DateTime","T":"2013-08-02T17:37:43.0090043+01:00"}`,
		`{"PartitionKey":"p","RowKey":"r","G@odata.type":"Edm.Guid","G":"4185404A-5818-48C3-B9BE-F217DF0DBA6F"}`,
		`{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.Binary","X":""}`,
		`{"PartitionKey":"p","RowKey":"r","Big":1e308,"Small":-4.9e-324,"Z":-0}`,
		`{"PartitionKey":"\u00fc\ud83d\ude00","RowKey":"","S":"\u2028\u0000"}`,
	} {
		f.Add(s)
	}
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", "/devstoreaccount1/tt1", strings.NewReader(body))
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if rec.Code != 201 {
			return
		}
		sent, _, err := entityjson.DecodeRequest([]byte(body), true)
		if err != nil {
			t.Fatalf("accepted %q but entityjson.DecodeRequest fails: %v", body, err)
		}
		got, _, err := entityjson.DecodeRequest(rec.Body.Bytes(), true)
		if err != nil {
			t.Fatalf("response %s does not decode: %v", rec.Body, err)
		}
		if sent.PartitionKey != got.PartitionKey || sent.RowKey != got.RowKey || len(sent.Properties) != len(got.Properties) {
			t.Fatalf("round trip of %q: %s", body, rec.Body)
		}
		for k, v := range sent.Properties {
			if !v.Equal(got.Properties[k]) {
				t.Fatalf("round trip of %q: property %s is %v, sent %v\n%s", body, k, got.Properties[k], v, rec.Body)
			}
		}
		srv.accounts[DevAccountName].data.Table("tt1").Delete(context.Background(), sent.PartitionKey, sent.RowKey, nil)
	})
}
