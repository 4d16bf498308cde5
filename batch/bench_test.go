package batch_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/localtable/localtable/batch"
)

// benchBody is a changeset of n inserts framed as the Go SDK frames it.
func benchBody(n int) []byte {
	var buf bytes.Buffer
	buf.WriteString("--batch_bench\r\nContent-Type: multipart/mixed; boundary=changeset_bench\r\n\r\n")
	for i := range n {
		buf.WriteString("--changeset_bench\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		buf.WriteString("POST http://127.0.0.1:10002/devstoreaccount1/bench HTTP/1.1\r\n")
		buf.WriteString("Content-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0\r\n\r\n")
		fmt.Fprintf(&buf, `{"PartitionKey":"p","RowKey":"r%04d","Name":"Jonathan Smithson","Email":"jonathan.smithson@contoso.com","City":"Redmond","Age":42,"Visits@odata.type":"Edm.Int64","Visits":"1234567890123","Score":0.75,"Active":true}`, i)
		buf.WriteString("\r\n")
	}
	buf.WriteString("--changeset_bench--\r\n--batch_bench--\r\n")
	return buf.Bytes()
}

// BenchmarkParse parses a changeset of 100 inserts.
func BenchmarkParse(b *testing.B) {
	body := benchBody(batch.MaxOperations)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := batch.ParseRequest(body, "multipart/mixed; boundary=batch_bench")
		if err != nil || len(req.Operations) != batch.MaxOperations {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite writes the reply to a changeset of 100 inserts with
// Prefer: return-no-content, as a server builds it.
func BenchmarkWrite(b *testing.B) {
	etag := `W/"datetime'2024-05-01T12%3A00%3A00.1234567Z'"`
	b.ReportAllocs()
	for b.Loop() {
		rep := &batch.Reply{Changeset: true, Responses: make([]batch.Response, batch.MaxOperations)}
		for i := range rep.Responses {
			loc := fmt.Sprintf("http://127.0.0.1:10002/devstoreaccount1/bench(PartitionKey='p',RowKey='r%04d')", i)
			rep.Responses[i] = batch.Response{Status: 204, Header: batch.NoContentHeader("", "return-no-content", loc, etag)}
		}
		if _, _, err := batch.EncodeResponse(rep, ""); err != nil {
			b.Fatal(err)
		}
	}
}
