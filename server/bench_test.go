package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// BenchmarkHandler measures the server's own cost per request: each
// request is signed with Shared Key as the SDKs sign it and served by
// ServeHTTP in-process, so no socket, client or JSON decoding on the client
// side is counted. Compare runs of two builds interleaved (A, B, A, B…):
// the figures are for before/after comparisons of server changes.
func BenchmarkHandler(b *testing.B) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer acct.Close()
	srv := server.New(acct, nil)
	key := devKey(b)
	tbl, err := acct.CreateTable(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	// 1,000 entities in partition p0 for reads.
	for i := 0; i < 1000; i++ {
		e := benchEntity("p0", fmt.Sprintf("r%06d", i))
		if _, err := tbl.Insert(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	// 20,000 entities in 20 partitions for the full-table filter, 1% of
	// them with a Score below 1.0, as in the bench program's data set.
	full, err := acct.CreateTable(ctx, "full")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 20000; i++ {
		e := benchEntity(fmt.Sprintf("p%02d", i%20), fmt.Sprintf("r%06d", i))
		e.Properties["Score"] = localtable.DoubleValue(float64(uint32(i)*2654435761%100000) / 1000)
		if _, err := full.Insert(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	// The same 20,000 entities again in a table with an index on Score,
	// as `serve --index full:Score` declares it: the full-table filter
	// reads the index's 199 entries instead of the table.
	fullix, err := acct.CreateTable(ctx, "fullix")
	if err != nil {
		b.Fatal(err)
	}
	if err := fullix.CreateIndex(ctx, "ByScore", "Score"); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 20000; i++ {
		e := benchEntity(fmt.Sprintf("p%02d", i%20), fmt.Sprintf("r%06d", i))
		e.Properties["Score"] = localtable.DoubleValue(float64(uint32(i)*2654435761%100000) / 1000)
		if _, err := fullix.Insert(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	base := "http://127.0.0.1:10002/" + server.DevAccountName

	serve := func(b *testing.B, req *http.Request, want int) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("%s %s: status %d, want %d: %s", req.Method, req.URL, rec.Code, want, rec.Body.String())
		}
		return rec
	}

	b.Run("Insert", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			body := benchEntityJSON("p1", fmt.Sprintf("r%09d", i))
			req := signedRequest(b, key, http.MethodPost, base+"/bench", "application/json", body)
			req.Header.Set("Prefer", "return-no-content")
			serve(b, req, http.StatusNoContent)
		}
	})
	b.Run("Get", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			req := signedRequest(b, key, http.MethodGet, fmt.Sprintf("%s/bench(PartitionKey='p0',RowKey='r%06d')", base, i%1000), "", "")
			serve(b, req, http.StatusOK)
		}
	})
	b.Run("Query100", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		f := "PartitionKey%20eq%20'p0'%20and%20RowKey%20ge%20'r000100'%20and%20RowKey%20lt%20'r000200'"
		for b.Loop() {
			req := signedRequest(b, key, http.MethodGet, base+"/bench()?$filter="+f, "", "")
			serve(b, req, http.StatusOK)
		}
	})
	b.Run("ScanFilter", func(b *testing.B) {
		// The partition's 1,000 entities, which all pass an Int32 filter.
		b.ReportAllocs()
		defer reportCPU(b)()
		f := "PartitionKey%20eq%20'p0'%20and%20Age%20gt%2040"
		for b.Loop() {
			req := signedRequest(b, key, http.MethodGet, base+"/bench()?$filter="+f, "", "")
			serve(b, req, http.StatusOK)
		}
	})
	b.Run("FullFilter", func(b *testing.B) {
		// The whole table of 20,000 entities, 1% of which pass the filter,
		// page after page as the SDKs follow continuations.
		b.ReportAllocs()
		defer reportCPU(b)()
		f := "Score%20lt%201.0"
		for b.Loop() {
			u := base + "/full()?$filter=" + f
			for {
				rec := serve(b, signedRequest(b, key, http.MethodGet, u, "", ""), http.StatusOK)
				npk := rec.Header().Get("x-ms-continuation-NextPartitionKey")
				if npk == "" {
					break
				}
				u = base + "/full()?$filter=" + f + "&NextPartitionKey=" + npk + "&NextRowKey=" + rec.Header().Get("x-ms-continuation-NextRowKey")
			}
		}
	})
	b.Run("IndexFilter", func(b *testing.B) {
		// The full-table filter through the index on Score: 199 entities,
		// every page, as the Go SDK asks for them.
		f := "Score%20lt%201.0"
		query := func(check bool) (rows int) {
			u := base + "/fullix()?$filter=" + f
			for {
				// The body goes where a connection would take it, not
				// into a buffer that grows: only what the server does is
				// counted.
				w := &connWriter{h: http.Header{}, check: check}
				srv.ServeHTTP(w, signedRequest(b, key, http.MethodGet, u, "", ""))
				if w.code != http.StatusOK {
					b.Fatalf("GET %s: status %d: %s", u, w.code, w.body.String())
				}
				if check {
					if w.h.Get(server.IndexHeader) == "" {
						b.Fatal("the query did not use the index")
					}
					rows += bytes.Count(w.body.Bytes(), []byte(`"PartitionKey"`))
				}
				npk := w.h.Get("x-ms-continuation-NextPartitionKey")
				if npk == "" {
					return rows
				}
				u = base + "/fullix()?$filter=" + f + "&NextPartitionKey=" + npk + "&NextRowKey=" + w.h.Get("x-ms-continuation-NextRowKey")
			}
		}
		if n := query(true); n != 199 {
			b.Fatalf("%d entities, want 199", n)
		}
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			query(false)
		}
	})
	b.Run("Batch100", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			body := benchBatch(base, fmt.Sprintf("b%09d", i), 100)
			req := signedRequest(b, key, http.MethodPost, base+"/$batch", "multipart/mixed; boundary=batch_bench", body)
			serve(b, req, http.StatusAccepted)
		}
	})
}

// connWriter is an http.ResponseWriter that takes a body as a connection
// would, without keeping it (but with check, for the benchmark's check).
type connWriter struct {
	h     http.Header
	code  int
	check bool
	body  bytes.Buffer
}

func (w *connWriter) Header() http.Header { return w.h }

func (w *connWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *connWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.check || w.code != http.StatusOK {
		w.body.Write(p)
	}
	return len(p), nil
}

func devKey(tb testing.TB) []byte {
	key, err := base64.StdEncoding.DecodeString(server.DevAccountKey)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

// signedRequest is sharedKeyRequest for benchmarks: it signs the request
// with Shared Key, dated now.
func signedRequest(tb testing.TB, key []byte, method, rawURL, contentType, body string) *http.Request {
	req, err := http.NewRequest(method, rawURL, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	req.Header.Set("DataServiceVersion", "3.0")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	cr := "/" + server.DevAccountName + req.URL.EscapedPath()
	toSign := method + "\n\n" + req.Header.Get("Content-Type") + "\n" + req.Header.Get("x-ms-date") + "\n" + cr
	req.Header.Set("Authorization", "SharedKey "+server.DevAccountName+":"+hmacSign(key, toSign))
	return req
}

// benchEntity is an entity of about 300 bytes with ten typed properties.
func benchEntity(pk, rk string) localtable.Entity {
	return localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: localtable.Properties{
		"Name":    localtable.StringValue("Jonathan Smithson"),
		"Email":   localtable.StringValue("jonathan.smithson@contoso.com"),
		"City":    localtable.StringValue("Redmond"),
		"Age":     localtable.Int32Value(42),
		"Visits":  localtable.Int64Value(1234567890123),
		"Score":   localtable.DoubleValue(0.75),
		"Active":  localtable.BoolValue(true),
		"Joined":  localtable.DateTimeValue(time.Date(2020, 5, 1, 12, 0, 0, 0, time.UTC)),
		"ID":      localtable.GUIDValue(localtable.GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}),
		"Payload": localtable.BinaryValue([]byte("0123456789abcdef0123456789abcdef")),
	}}
}

func benchEntityJSON(pk, rk string) string {
	return `{"PartitionKey":"` + pk + `","RowKey":"` + rk + `",` +
		`"Name":"Jonathan Smithson","Email":"jonathan.smithson@contoso.com","City":"Redmond",` +
		`"Age":42,"Visits@odata.type":"Edm.Int64","Visits":"1234567890123","Score":0.75,"Active":true,` +
		`"Joined@odata.type":"Edm.DateTime","Joined":"2020-05-01T12:00:00Z",` +
		`"ID@odata.type":"Edm.Guid","ID":"04030201-0605-0807-090a-0b0c0d0e0f10",` +
		`"Payload@odata.type":"Edm.Binary","Payload":"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}`
}

// benchBatch is a changeset of n inserts into partition pk, framed as the
// Go SDK frames it.
func benchBatch(base, pk string, n int) string {
	var buf bytes.Buffer
	buf.WriteString("--batch_bench\r\nContent-Type: multipart/mixed; boundary=changeset_bench\r\n\r\n")
	for i := 0; i < n; i++ {
		buf.WriteString("--changeset_bench\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		buf.WriteString("POST " + base + "/bench HTTP/1.1\r\n")
		buf.WriteString("Content-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0\r\n\r\n")
		buf.WriteString(benchEntityJSON(pk, fmt.Sprintf("r%04d", i)))
		buf.WriteString("\r\n")
	}
	buf.WriteString("--changeset_bench--\r\n--batch_bench--\r\n")
	return buf.String()
}
