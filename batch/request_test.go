package batch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/localtable/localtable/batch"
)

const ctB = "multipart/mixed; boundary=batch_B"

// csPart is one operation part of changeset_C: extra MIME part headers,
// then the request itself.
func csPart(mime, req string) string {
	return "--changeset_C\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n" + mime + "\r\n" + req
}

// csBody is a body, boundary batch_B, holding one changeset of parts.
func csBody(parts ...string) string {
	return "--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_C\r\n\r\n" + strings.Join(parts, "") + "--changeset_C--\r\n\r\n--batch_B--\r\n"
}

// lone is a body, boundary batch_B, holding one operation alone.
func lone(req string) string {
	return "--batch_B\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" + req + "--batch_B--\r\n"
}

const insert = "POST http://h/acct/t1 HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\r\n"

var insertOp = batch.Operation{Method: "POST", URL: "http://h/acct/t1",
	Header: batch.Header{{Name: "Content-Type", Value: "application/json"}, {Name: "Prefer", Value: "return-no-content"}},
	Body:   []byte(`{"PartitionKey":"p","RowKey":"r"}`)}

var cmpOpts = cmp.Options{cmpopts.EquateEmpty()}

func TestParseRequest(t *testing.T) {
	del := "DELETE http://h/acct/t1(PartitionKey='p',RowKey='r') HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n"
	delOp := batch.Operation{Method: "DELETE", URL: "http://h/acct/t1(PartitionKey='p',RowKey='r')", Header: batch.Header{{Name: "If-Match", Value: "*"}}}
	for _, c := range []struct {
		name, body string
		want       batch.Request
	}{
		{"changeset", csBody(csPart("", insert), csPart("", del)),
			batch.Request{Changeset: true, Operations: []batch.Operation{insertOp, delOp}}},
		{"LF line endings", strings.ReplaceAll(csBody(csPart("", insert), csPart("", del)), "\r\n", "\n"),
			batch.Request{Changeset: true, Operations: []batch.Operation{insertOp, delOp}}},
		{"dangling last delimiter, as @azure/data-tables 12 sent",
			strings.TrimSuffix(csBody(csPart("", insert)), "\r\n--batch_B--\r\n") + "\r\n--batch_B\r\n",
			batch.Request{Changeset: true, Operations: []batch.Operation{insertOp}}},
		{"preamble, epilogue, white space after delimiters",
			"preamble\r\n--batch_B \r\nContent-Type: multipart/mixed; boundary=changeset_C\r\n\r\n" + csPart("", insert) + "--changeset_C--\t\r\n--batch_B--\r\nepilogue",
			batch.Request{Changeset: true, Operations: []batch.Operation{insertOp}}},
		{"lone GET", lone("GET http://h/acct/t1()?$top=1 HTTP/1.1\r\nAccept: application/json\r\n\r\n\r\n"),
			batch.Request{Operations: []batch.Operation{{Method: "GET", URL: "http://h/acct/t1()?$top=1", Header: batch.Header{{Name: "Accept", Value: "application/json"}}}}}},
		{"request line without protocol, lower-case method", csBody(csPart("", "delete /t1(PartitionKey='p',RowKey='r')\r\n\r\n")),
			batch.Request{Changeset: true, Operations: []batch.Operation{{Method: "DELETE", URL: "/t1(PartitionKey='p',RowKey='r')"}}}},
		{"X-HTTP-Method tunnels through POST", csBody(csPart("", "POST /t1(PartitionKey='p',RowKey='r') HTTP/1.1\r\nX-HTTP-Method: merge\r\n\r\n{}\r\n")),
			batch.Request{Changeset: true, Operations: []batch.Operation{{Method: "MERGE", URL: "/t1(PartitionKey='p',RowKey='r')",
				Header: batch.Header{{Name: "X-HTTP-Method", Value: "merge"}}, Body: []byte("{}")}}}},
		{"X-HTTP-Method ignored on another method", csBody(csPart("", "PUT /t1(PartitionKey='p',RowKey='r') HTTP/1.1\r\nX-HTTP-Method: DELETE\r\n\r\n{}\r\n")),
			batch.Request{Changeset: true, Operations: []batch.Operation{{Method: "PUT", URL: "/t1(PartitionKey='p',RowKey='r')",
				Header: batch.Header{{Name: "X-HTTP-Method", Value: "DELETE"}}, Body: []byte("{}")}}}},
		{"body kept exactly, white space and blank lines too", csBody(csPart("", "PUT /t1 HTTP/1.1\r\n\r\n\r\n  {}\r\n\r\n\r\n")),
			batch.Request{Changeset: true, Operations: []batch.Operation{{Method: "PUT", URL: "/t1", Body: []byte("\r\n  {}\r\n\r\n")}}}},
		{"extra changesets are counted, not read", csBody(csPart("", insert))[:len(csBody(csPart("", insert)))-len("--batch_B--\r\n")] +
			"--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_D\r\n\r\nanything at all\r\n" +
			"--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_E\r\n\r\n--changeset_E--\r\n--batch_B--\r\n",
			batch.Request{Changeset: true, Operations: []batch.Operation{insertOp}, ExtraChangesets: 2}},
	} {
		got, err := batch.ParseRequest([]byte(c.body), ctB)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if d := cmp.Diff(&c.want, got, cmpOpts); d != "" {
			t.Errorf("%s: (-want +got)\n%s", c.name, d)
		}
	}
}

// TestContentID: the Content-ID is the operation's own header, not its
// MIME part's: the one the service echoes.
func TestContentID(t *testing.T) {
	body := csBody(csPart("Content-ID: 9\r\n", insert), csPart("", strings.Replace(insert, "Prefer:", "Content-ID:  7 \r\nPrefer:", 1)))
	req, err := batch.ParseRequest([]byte(body), ctB)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := req.Operations[0].ContentID(), req.Operations[1].ContentID(); a != "" || b != "7" {
		t.Errorf("Content-IDs %q %q, want \"\" \"7\"", a, b)
	}
}

// errIs checks that err is a *batch.Error with code, status and index,
// whose message contains msg.
func errIs(t *testing.T, name string, err error, code string, status, index int, msg string) *batch.Error {
	t.Helper()
	var be *batch.Error
	if !errors.As(err, &be) {
		t.Errorf("%s: %v, want a *batch.Error", name, err)
		return nil
	}
	if be.Code != code || be.Status != status || be.Index != index || !strings.Contains(be.Message, msg) {
		t.Errorf("%s: %s %d index %d %q, want %s %d index %d with %q", name, be.Code, be.Status, be.Index, be.Message, code, status, index, msg)
	}
	return be
}

func TestParseRequestErrors(t *testing.T) {
	ok := csBody(csPart("", insert))
	nested := "--changeset_C\r\nContent-Type: multipart/mixed; boundary=changeset_D\r\n\r\n--changeset_D\r\nContent-Type: application/http\r\n\r\n" +
		insert + "--changeset_D--\r\n"
	get := "GET http://h/acct/t1() HTTP/1.1\r\n\r\n"
	for _, c := range []struct {
		name, ct, body, code, msg string
	}{
		{"no Content-Type", "", ok, "MissingRequiredHeader", "mandatory"},
		{"wrong Content-Type", "application/json", ok, "InvalidHeaderValue", "not in the correct format"},
		{"no boundary", "multipart/mixed", ok, "InvalidHeaderValue", "not in the correct format"},
		{"multipart/form-data", "multipart/form-data; boundary=batch_B", ok, "InvalidHeaderValue", "not in the correct format"},
		{"empty body", ctB, "", "InvalidInput", "no delimiter"},
		{"no delimiter", ctB, "garbage", "InvalidInput", "no delimiter of boundary 'batch_B'"},
		{"other boundary", ctB, strings.ReplaceAll(ok, "batch_B", "batch_X"), "InvalidInput", "no delimiter"},
		{"boundary duplicated in the changeset", ctB, strings.ReplaceAll(ok, "changeset_C", "batch_B"), "InvalidInput", ""},
		{"closed before any part", ctB, "--batch_B--\r\n", "InvalidInput", "closes before its first part"},
		{"truncated", ctB, ok[:strings.Index(ok, `"RowKey"`)], "InvalidInput", "without the closing delimiter"},
		{"changeset without closing delimiter", ctB, strings.Replace(ok, "--changeset_C--\r\n", "", 1), "InvalidInput", "closing delimiter of boundary 'changeset_C'"},
		{"nested changesets", ctB, csBody(nested), "InvalidInput", "cannot hold another changeset"},
		{"empty changeset", ctB, csBody(), "InvalidInput", "closes before its first part"},
		{"changeset of a dangling delimiter", ctB, "--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_C\r\n\r\n--changeset_C\r\n--batch_B--\r\n", "InvalidInput", "a changeset holds no operation"},
		{"space before a header's colon", ctB, csBody(csPart("", strings.Replace(insert, "Prefer:", "Prefer :", 1))), "InvalidInput", "bad header line"},
		{"header line starting with white space", ctB, csBody(csPart("", strings.Replace(insert, "Content-Type", " Content-Type", 1))), "InvalidInput", "starts with white space"},
		{"changeset without boundary", ctB, strings.Replace(ok, "; boundary=changeset_C", "", 1), "InvalidInput", "a changeset has no boundary"},
		{"garbage request line", ctB, csBody(csPart("", "this is no request line\r\n\r\n")), "InvalidInput", "bad request line"},
		{"request line without URL", ctB, csBody(csPart("", "POST\r\n\r\n{}\r\n")), "InvalidInput", "bad request line"},
		{"bad protocol", ctB, csBody(csPart("", strings.Replace(insert, "HTTP/1.1", "FTP/1.0", 1))), "InvalidInput", "bad request line"},
		{"bad method token", ctB, csBody(csPart("", strings.Replace(insert, "POST", "{POST}", 1))), "InvalidInput", "bad request line"},
		{"bad part header", ctB, csBody(csPart("no colon here\r\n", insert)), "InvalidInput", "bad header line"},
		{"bad operation header", ctB, csBody(csPart("", strings.Replace(insert, "Prefer:", "Prefer", 1))), "InvalidInput", "bad header line"},
		{"control character in a header", ctB, csBody(csPart("", strings.Replace(insert, "return-no-content", "return\x01", 1))), "InvalidInput", "bad header line"},
		{"part without Content-Type", ctB, "--batch_B\r\n\r\n" + get + "--batch_B--\r\n", "InvalidInput", "no valid Content-Type"},
		{"part of another type", ctB, strings.Replace(lone(get), "application/http", "text/plain", 1), "InvalidInput", "unexpected part type 'text/plain'"},
		{"operation of another type", ctB, csBody(strings.Replace(csPart("", insert), "application/http", "text/plain", 1)), "InvalidInput", "unexpected operation type"},
		{"write outside a changeset", ctB, lone(insert), "InvalidInput", "a write must be inside a changeset"},
		{"query before a changeset", ctB, strings.TrimSuffix(lone(get), "--batch_B--\r\n") + ok, "InvalidInput", "a query can only be alone"},
		{"query after a changeset", ctB, strings.TrimSuffix(ok, "--batch_B--\r\n") + lone(get), "InvalidInput", "a query can only be alone"},
		{"two queries", ctB, strings.TrimSuffix(lone(get), "--batch_B--\r\n") + lone(get), "InvalidInput", "a query can only be alone"},
	} {
		req, err := batch.ParseRequest([]byte(c.body), c.ct)
		if req != nil {
			t.Errorf("%s: parsed %+v", c.name, req)
		}
		be := errIs(t, c.name, err, c.code, 400, -1, c.msg)
		if be != nil && be.Operation != nil {
			t.Errorf("%s: operation %+v", c.name, be.Operation)
		}
	}
}

// TestGETInChangeset: a GET in a changeset fails the changeset at its
// index, naming the operation (its response carries its Content-ID).
func TestGETInChangeset(t *testing.T) {
	body := csBody(csPart("", insert), csPart("", "GET http://h/acct/t1() HTTP/1.1\r\nContent-ID: 4\r\n\r\n"))
	_, err := batch.ParseRequest([]byte(body), ctB)
	be := errIs(t, "GET in a changeset", err, "InvalidInput", 400, 1, "A query can only be alone in a batch, outside a changeset.")
	if be != nil && (be.Operation == nil || be.Operation.Method != "GET" || be.Operation.ContentID() != "4") {
		t.Errorf("operation at fault: %+v", be.Operation)
	}
	if be != nil && be.Error() != "batch: operation 1: A query can only be alone in a batch, outside a changeset." {
		t.Errorf("Error() = %q", be.Error())
	}
	if _, _, err := batch.EncodeRequest(&batch.Request{Changeset: true, Operations: []batch.Operation{insertOp, {Method: "GET", URL: "/t1()"}}}, "X"); err == nil {
		t.Error("EncodeRequest encodes a GET in a changeset")
	}
}

// changeset returns a changeset of n inserts.
func changeset(n int) *batch.Request {
	req := &batch.Request{Changeset: true}
	for i := range n {
		op := insertOp
		op.Body = fmt.Appendf(nil, `{"PartitionKey":"p","RowKey":"%d"}`, i)
		req.Operations = append(req.Operations, op)
	}
	return req
}

// TestMaxOperations: 100 operations pass, 101 fail at index 99 with the
// service's message, for ParseRequest and EncodeRequest alike.
func TestMaxOperations(t *testing.T) {
	if _, _, err := batch.EncodeRequest(changeset(101), "X"); err == nil {
		t.Error("EncodeRequest: 101 operations encoded")
	} else {
		errIs(t, "EncodeRequest 101", err, "InvalidInput", 400, 99, "The batch request operation exceeds the maximum 100 changes per change set.")
	}
	var parts []string
	for i := range 101 {
		parts = append(parts, csPart("", strings.Replace(insert, `"r"`, fmt.Sprintf(`"%d"`, i), 1)))
	}
	req, err := batch.ParseRequest([]byte(csBody(parts[:100]...)), ctB)
	if err != nil || len(req.Operations) != 100 {
		t.Fatalf("100 operations: %v", err)
	}
	_, err = batch.ParseRequest([]byte(csBody(parts...)), ctB)
	if be := errIs(t, "101 operations", err, "InvalidInput", 400, 99, "The batch request operation exceeds the maximum 100 changes per change set."); be != nil && be.Operation != nil {
		t.Errorf("101 operations: an error of the changeset names operation %+v", be.Operation)
	}
	// The count stops the reading: whatever follows the 101st part.
	_, err = batch.ParseRequest([]byte(strings.Join(append([]string{"--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_C\r\n\r\n"}, parts...), "")+"--changeset_C\r\ngarbage\r\n--batch_B--\r\n"), ctB)
	errIs(t, "101 operations, then garbage", err, "InvalidInput", 400, 99, "maximum 100 changes")
}

// padded returns a valid changeset body of exactly n bytes, padded in
// its epilogue.
func padded(t *testing.T, n int) []byte {
	body := []byte(csBody(csPart("", insert)))
	if n < len(body) {
		t.Fatalf("%d < %d", n, len(body))
	}
	return append(body, bytes.Repeat([]byte("x"), n-len(body))...)
}

// TestMaxBodySize: a body of 4 MiB passes, one byte more is 413, through
// ParseRequest, ReadRequest and EncodeRequest.
func TestMaxBodySize(t *testing.T) {
	if batch.MaxBodySize != 4<<20 {
		t.Fatalf("MaxBodySize %d", batch.MaxBodySize)
	}
	for _, n := range []int{batch.MaxBodySize, batch.MaxBodySize + 1} {
		body := padded(t, n)
		req1, err1 := batch.ParseRequest(body, ctB)
		req2, err2 := batch.ReadRequest(bytes.NewReader(body), ctB)
		if n == batch.MaxBodySize {
			if err1 != nil || err2 != nil || len(req1.Operations) != 1 || len(req2.Operations) != 1 {
				t.Errorf("%d bytes: %v %v", n, err1, err2)
			}
			continue
		}
		for i, err := range []error{err1, err2} {
			errIs(t, fmt.Sprint("body of ", n, " bytes, ", i), err, "RequestBodyTooLarge", 413, -1,
				"The request body is too large and exceeds the maximum permissible limit of 4194304 bytes.")
		}
	}
	// EncodeRequest: one insert whose body brings the encoding to the
	// limit, then one byte more.
	req := changeset(1)
	_, base, err := batch.EncodeRequest(req, "X")
	if err != nil {
		t.Fatal(err)
	}
	req.Operations[0].Body = bytes.Repeat([]byte("y"), batch.MaxBodySize-len(base)+len(req.Operations[0].Body))
	if _, b, err := batch.EncodeRequest(req, "X"); err != nil || len(b) != batch.MaxBodySize {
		t.Errorf("EncodeRequest at the limit: %d bytes, %v", len(b), err)
	}
	req.Operations[0].Body = append(req.Operations[0].Body, 'y')
	_, _, err = batch.EncodeRequest(req, "X")
	errIs(t, "EncodeRequest over the limit", err, "RequestBodyTooLarge", 413, -1, "4194304 bytes")
}

func TestReadRequestReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := batch.ReadRequest(iotest.ErrReader(boom), ctB)
	var be *batch.Error
	if !errors.Is(err, boom) || errors.As(err, &be) {
		t.Errorf("ReadRequest: %v", err)
	}
}

// TestEncodeRequestSDKFraming: EncodeRequest frames a changeset byte for
// byte as aztables does, and ParseRequest reads aztables' body to the
// operations it sent.
func TestEncodeRequestSDKFraming(t *testing.T) {
	var captured []byte
	var capturedCT string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		captured, _ = io.ReadAll(r.Body)
		capturedCT = r.Header.Get("Content-Type")
		req, err := batch.ParseRequest(captured, capturedCT)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		rep := &batch.Reply{Changeset: true}
		for range req.Operations {
			rep.Responses = append(rep.Responses, batch.Response{Status: 204, Header: batch.NoContentHeader("", "", "", "")})
		}
		ct, body, err := batch.EncodeResponse(rep, "")
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(http.StatusAccepted)
		w.Write(body)
	}))
	defer hs.Close()
	client, err := aztables.NewClientWithNoCredential(hs.URL+"/acct/t1", &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	etag := azcore.ETag(`W/"datetime'2024-01-01T00%3A00%3A00Z'"`)
	_, err = client.SubmitTransaction(context.Background(), []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p'k","RowKey":"a","V":1}`)},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: []byte(`{"PartitionKey":"p'k","RowKey":"b"}`), IfMatch: &etag},
		{ActionType: aztables.TransactionTypeDelete, Entity: []byte(`{"PartitionKey":"p'k","RowKey":"c"}`)},
	}, nil)
	if err != nil {
		t.Fatalf("aztables does not take the reply: %v", err)
	}
	req, err := batch.ParseRequest(captured, capturedCT)
	if err != nil {
		t.Fatal(err)
	}
	methods := []string{}
	for _, op := range req.Operations {
		methods = append(methods, op.Method)
	}
	if fmt.Sprint(methods) != "[POST PATCH DELETE]" || !strings.Contains(req.Operations[2].URL, "/t1(PartitionKey='p%27k',RowKey='c')?") ||
		req.Operations[1].Header.Get("If-Match") != string(etag) || string(req.Operations[0].Body) != `{"PartitionKey":"p'k","RowKey":"a","V":1}` {
		t.Errorf("aztables' operations read as %+v", req)
	}
	// The SDK draws two random UUIDs; name them X as EncodeRequest does.
	norm := regexp.MustCompile(`(batch|changeset)_[0-9a-f-]{36}`).ReplaceAllString(string(captured), "${1}_X")
	ct, body, err := batch.EncodeRequest(req, "X")
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != norm || ct != "multipart/mixed; boundary=batch_X" {
		t.Errorf("EncodeRequest:\n%q\naztables:\n%q", body, norm)
	}
}

func TestEncodeRequestRejects(t *testing.T) {
	with := func(f func(op *batch.Operation)) *batch.Request {
		op := insertOp
		op.Header = slices.Clone(insertOp.Header)
		f(&op)
		return &batch.Request{Changeset: true, Operations: []batch.Operation{op}}
	}
	for _, c := range []struct {
		name string
		req  *batch.Request
		id   string
	}{
		{"no operation", &batch.Request{Changeset: true}, ""},
		{"lone write", &batch.Request{Operations: []batch.Operation{insertOp}}, ""},
		{"two lone GETs", &batch.Request{Operations: []batch.Operation{{Method: "GET", URL: "/t"}, {Method: "GET", URL: "/t"}}}, ""},
		{"lone GET with extra changesets", &batch.Request{Operations: []batch.Operation{{Method: "GET", URL: "/t"}}, ExtraChangesets: 1}, ""},
		{"lower-case method", with(func(op *batch.Operation) { op.Method = "post" }), ""},
		{"method with a space", with(func(op *batch.Operation) { op.Method = "PO ST" }), ""},
		{"empty URL", with(func(op *batch.Operation) { op.URL = "" }), ""},
		{"URL with a space", with(func(op *batch.Operation) { op.URL = "/t 1" }), ""},
		{"URL with a line break", with(func(op *batch.Operation) { op.URL = "/t\n1" }), ""},
		{"POST tunnelling another method", with(func(op *batch.Operation) {
			op.Header = append(op.Header, batch.HeaderField{Name: "x-http-method", Value: "MERGE"})
		}), ""},
		{"header value with a line break", with(func(op *batch.Operation) { op.Header[1].Value = "a\r\nB: c" }), ""},
		{"header value with a NUL", with(func(op *batch.Operation) { op.Header[1].Value = "a\x00" }), ""},
		{"header value with a leading space", with(func(op *batch.Operation) { op.Header[1].Value = " a" }), ""},
		{"header value with a trailing tab", with(func(op *batch.Operation) { op.Header[1].Value = "a\t" }), ""},
		{"header name with a space", with(func(op *batch.Operation) { op.Header[1].Name = "Pre fer" }), ""},
		{"header name with a colon", with(func(op *batch.Operation) { op.Header[1].Name = "A:b" }), ""},
		{"empty header name", with(func(op *batch.Operation) { op.Header[1].Name = "" }), ""},
		{"body holding the batch delimiter", with(func(op *batch.Operation) { op.Body = []byte("{\n--batch_X\n}") }), "X"},
		{"body holding the changeset's closing delimiter", with(func(op *batch.Operation) { op.Body = []byte("--changeset_X-- \r") }), "X"},
		{"negative extra changesets", &batch.Request{Changeset: true, Operations: []batch.Operation{insertOp}, ExtraChangesets: -1}, ""},
		{"bad boundary ID", changeset(1), "a b"},
		{"long boundary ID", changeset(1), strings.Repeat("x", 41)},
	} {
		if _, body, err := batch.EncodeRequest(c.req, c.id); err == nil {
			t.Errorf("%s: encoded\n%s", c.name, body)
		}
	}
	// What looks like a delimiter but is not one is fine.
	req := with(func(op *batch.Operation) { op.Body = []byte("--batch_X-\n --batch_X\n--batch_Xy\n--changeset_X---") })
	if _, _, err := batch.EncodeRequest(req, "X"); err != nil {
		t.Errorf("near-delimiters: %v", err)
	}
}

// TestRequestRoundTrip: ParseRequest reads back what EncodeRequest
// writes, random boundaries or not.
func TestRequestRoundTrip(t *testing.T) {
	tunnel := batch.Operation{Method: "MERGE", URL: "/t1(PartitionKey='p',RowKey='r')",
		Header: batch.Header{{Name: "x-http-method", Value: "merge"}, {Name: "If-Match", Value: "*"}, {Name: "Foo", Value: "x"}, {Name: "foo", Value: "y\tz"}, {Name: "Empty", Value: ""}},
		Body:   []byte("{}\r")}
	for _, req := range []*batch.Request{
		changeset(100),
		{Changeset: true, Operations: []batch.Operation{tunnel, {Method: "DELETE", URL: "/t1(PartitionKey='p',RowKey='s')"}}, ExtraChangesets: 2},
		{Operations: []batch.Operation{{Method: "GET", URL: "http://h/acct/t1()?$filter=PartitionKey%20eq%20'p'", Header: batch.Header{{Name: "Accept", Value: "application/json;odata=nometadata"}}}}},
		{Operations: []batch.Operation{{Method: "GET", URL: "/t1()", Body: []byte("a body ends\n")}}},
	} {
		for _, id := range []string{"", "X", "2f1d0c4e-5a1b-4c2d-8e3f-000000000000"} {
			ct, body, err := batch.EncodeRequest(req, id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := batch.ParseRequest(body, ct)
			if err != nil {
				t.Fatalf("%v\n%s", err, body)
			}
			if d := cmp.Diff(req, got, cmpOpts); d != "" {
				t.Errorf("round trip, id %q: (-sent +read)\n%s", id, d)
			}
		}
	}
}
