package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

// batchErr returns the status and the odata.error of a failed
// SubmitTransaction: aztables reports a failed changeset as a 202
// ResponseError whose body is the whole multipart response.
func batchErr(t *testing.T, err error) (int, string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("not a ResponseError: %v", err)
	}
	return re.StatusCode, err.Error()
}

func TestSDKBatchEdgeCases(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "edge")
	ent := func(pk, rk string, v int) []byte {
		b, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk, "V": v})
		return b
	}
	add := func(pk, rk string, v int) aztables.TransactionAction {
		return aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: ent(pk, rk, v)}
	}
	count := func() int {
		n := 0
		pager := c.NewListEntitiesPager(nil)
		for pager.More() {
			p, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n += len(p.Entities)
		}
		return n
	}
	if _, err := c.AddEntity(ctx, ent("p", "exists", 0), nil); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetEntity(ctx, "p", "exists", nil)
	if err != nil {
		t.Fatal(err)
	}
	stale := got.ETag
	if _, err := c.UpdateEntity(ctx, ent("p", "exists", 1), nil); err != nil {
		t.Fatal(err)
	}

	var many []aztables.TransactionAction
	for i := 0; i < 101; i++ {
		many = append(many, add("p", fmt.Sprintf("m%03d", i), i))
	}
	cases := []struct {
		name    string
		actions []aztables.TransactionAction
		status  int    // outer status
		inner   string // text the error must contain
	}{
		{"101 operations", many, 202, `"value":"99:The batch request operation exceeds the maximum 100 changes per change set.`},
		{"mixed partitions", []aztables.TransactionAction{add("p", "a", 1), add("q", "b", 1)}, 202, "CommandsInBatchActOnDifferentPartitions"},
		{"same row twice", []aztables.TransactionAction{add("p", "a", 1), {ActionType: aztables.TransactionTypeUpdateMerge, Entity: ent("p", "a", 2)}}, 202, "InvalidDuplicateRow"},
		{"exists at 2", []aztables.TransactionAction{add("p", "n1", 1), add("p", "n2", 1), add("p", "exists", 1)}, 202, `"value":"2:The specified entity already exists.`},
		{"stale etag at 1", []aztables.TransactionAction{add("p", "n1", 1),
			{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent("p", "exists", 9), IfMatch: &stale}}, 202, `"value":"1:`},
		{"missing entity at 1", []aztables.TransactionAction{add("p", "n1", 1),
			{ActionType: aztables.TransactionTypeDelete, Entity: ent("p", "nope", 0)}}, 202, `"value":"1:The specified resource does not exist.`},
	}
	for _, cs := range cases {
		before := count()
		_, err := c.SubmitTransaction(ctx, cs.actions, nil)
		if err == nil {
			t.Errorf("%s: succeeded", cs.name)
			continue
		}
		status, text := batchErr(t, err)
		if status != cs.status || !strings.Contains(text, cs.inner) {
			t.Errorf("%s: %d, want %d with %q:\n%s", cs.name, status, cs.status, cs.inner, text)
		}
		if after := count(); after != before {
			t.Errorf("%s: %d entities before, %d after: a failed batch applied", cs.name, before, after)
		}
	}
	if g, _ := c.GetEntity(ctx, "p", "exists", nil); !strings.Contains(string(g.Value), `"V":1`) {
		t.Errorf("stale-ETag batch changed the entity: %s", g.Value)
	}
	if _, err := c.SubmitTransaction(ctx, many[:100], nil); err != nil {
		t.Fatalf("100 operations: %v", err)
	}
	// Missing table: 404 TableNotFound with the 0: prefix.
	_, err = srv.Client.NewClient("nosuchtable").SubmitTransaction(ctx, []aztables.TransactionAction{add("p", "a", 1)}, nil)
	if status, text := batchErr(t, err); status != 202 || !strings.Contains(text, "TableNotFound") || !strings.Contains(text, `"value":"0:`) {
		t.Errorf("missing table: %d %s", status, text)
	}
	// Body over 4 MiB: 413.
	big := strings.Repeat("x", 30000)
	var huge []aztables.TransactionAction
	for i := 0; i < 100; i++ {
		b, _ := json.Marshal(map[string]any{"PartitionKey": "h", "RowKey": fmt.Sprint(i), "A": big, "B": big})
		huge = append(huge, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: b})
	}
	_, err = c.SubmitTransaction(ctx, huge, nil)
	wantCode(t, err, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")

	// Each of the six action kinds succeeding, Delete with the default *.
	if _, err := c.AddEntity(ctx, ent("six", "um", 0), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddEntity(ctx, ent("six", "ur", 0), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddEntity(ctx, ent("six", "del", 0), nil); err != nil {
		t.Fatal(err)
	}
	g, _ := c.GetEntity(ctx, "six", "ur", nil)
	_, err = c.SubmitTransaction(ctx, []aztables.TransactionAction{
		add("six", "add", 1),
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: ent("six", "um", 2)},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent("six", "ur", 3), IfMatch: &g.ETag},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: ent("six", "im", 4)},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: ent("six", "ir", 5)},
		{ActionType: aztables.TransactionTypeDelete, Entity: ent("six", "del", 0)},
	}, nil)
	if err != nil {
		t.Fatalf("six kinds: %v", err)
	}
	for rk, v := range map[string]int{"add": 1, "um": 2, "ur": 3, "im": 4, "ir": 5} {
		g, err := c.GetEntity(ctx, "six", rk, nil)
		if err != nil || !strings.Contains(string(g.Value), fmt.Sprintf(`"V":%d`, v)) {
			t.Errorf("%s after batch: %v %s", rk, err, g.Value)
		}
	}
	if _, err := c.GetEntity(ctx, "six", "del", nil); err == nil {
		t.Error("delete in batch not applied")
	}
}

var reBoundary = regexp.MustCompile(`^--(batchresponse_[0-9a-f-]+)\r\nContent-Type: multipart/mixed; boundary=(changesetresponse_[0-9a-f-]+)\r\n\r\n`)

// TestWireBatchResponseFraming checks the exact bytes of a successful and
// of a failed changeset response.
func TestWireBatchResponseFraming(t *testing.T) {
	hs, _ := rawServer(t)
	url := hs.URL + "/devstoreaccount1/$batch"
	ct := map[string]string{"Content-Type": "multipart/mixed; boundary=batch_B"}
	part := func(req string) string {
		return "--changeset_C\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n" + req
	}
	body := func(parts ...string) string {
		return "--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_C\r\n\r\n" + strings.Join(parts, "") + "--changeset_C--\r\n\r\n--batch_B--\r\n"
	}
	ins := func(rk string) string {
		return part("POST http://h/devstoreaccount1/tt1 HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n" +
			`{"PartitionKey":"p","RowKey":"` + rk + `"}` + "\r\n")
	}
	resp, got := do(t, "POST", url, ct, body(ins("a"), ins("b")))
	m := reBoundary.FindStringSubmatch(got)
	if resp.StatusCode != 202 || m == nil || resp.Header.Get("Content-Type") != "multipart/mixed; boundary="+m[1] {
		t.Fatalf("batch: %d %s\n%q", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	inner := regexp.MustCompile(`--` + m[2] + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"HTTP/1.1 204 No Content\r\n(?:[A-Za-z-]+: [^\r\n]*\r\n)+\r\n\r\n")
	rest := got[len(m[0]):]
	for i := 0; i < 2; i++ {
		loc := inner.FindStringIndex(rest)
		if loc == nil || loc[0] != 0 {
			t.Fatalf("inner response %d malformed:\n%q", i, rest)
		}
		hdr := rest[:loc[1]]
		for _, h := range []string{"\r\nPreference-Applied: return-no-content\r\n", "\r\nETag: W/\"datetime'", "\r\nDataServiceVersion: 3.0;\r\n", "\r\nDataServiceId: http://"} {
			if !strings.Contains(hdr, h) { // spelled as the service does: clients match case-sensitively
				t.Errorf("inner response %d lacks %q:\n%q", i, h, hdr)
			}
		}
		rest = rest[loc[1]:]
	}
	if want := "--" + m[2] + "--\r\n--" + m[1] + "--\r\n"; rest != want {
		t.Errorf("closing boundaries %q, want %q", rest, want)
	}

	// A failed changeset: 202, one inner error response, then the closings.
	resp, got = do(t, "POST", url, ct, body(ins("c"), ins("a")))
	m = reBoundary.FindStringSubmatch(got)
	if resp.StatusCode != 202 || m == nil {
		t.Fatalf("failed batch: %d\n%q", resp.StatusCode, got)
	}
	failed := regexp.MustCompile(`^--` + m[2] + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"HTTP/1.1 409 Conflict\r\n(?:[A-Za-z-]+: [^\r\n]*\r\n)+\r\n" +
		`\{"odata.error":\{"code":"EntityAlreadyExists","message":\{"lang":"en-US","value":"1:The specified entity already exists\.[^"]*"\}\}\}` +
		"\r\n--" + m[2] + "--\r\n--" + m[1] + "--\r\n$")
	if !failed.MatchString(got[len(m[0]):]) {
		t.Errorf("failed batch framing:\n%q", got)
	}
	if resp, got = do(t, "GET", hs.URL+"/devstoreaccount1/tt1(PartitionKey='p',RowKey='c')", nil, ""); resp.StatusCode != 404 {
		t.Errorf("failed batch applied: %d %s", resp.StatusCode, got)
	}

	// A query alone, outside a changeset.
	q := "--batch_B\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"GET http://h/devstoreaccount1/tt1(PartitionKey='p',RowKey='a') HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\n\r\n\r\n--batch_B--\r\n"
	resp, got = do(t, "POST", url, ct, q)
	if resp.StatusCode != 202 || !strings.HasPrefix(got, "--batchresponse_") || !strings.Contains(got, "HTTP/1.1 200 OK\r\n") || !strings.Contains(got, `{"PartitionKey":"p","RowKey":"a","Timestamp":"`) {
		t.Errorf("query batch: %d\n%q", resp.StatusCode, got)
	}
	// A query inside a changeset is refused, and nothing else applies.
	resp, got = do(t, "POST", url, ct, body(ins("d"), part("GET http://h/devstoreaccount1/tt1() HTTP/1.1\r\n\r\n")))
	if resp.StatusCode >= 500 || !strings.Contains(got, "InvalidInput") {
		t.Errorf("query in changeset: %d\n%s", resp.StatusCode, got)
	}
	if resp, _ = do(t, "GET", hs.URL+"/devstoreaccount1/tt1(PartitionKey='p',RowKey='d')", nil, ""); resp.StatusCode != 404 {
		t.Errorf("changeset with a query applied its insert")
	}
	// A delete without If-Match in a changeset means If-Match: *.
	resp, got = do(t, "POST", url, ct, body(part("DELETE http://h/devstoreaccount1/tt1(PartitionKey='p',RowKey='b') HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n")))
	if resp.StatusCode != 202 || !strings.Contains(got, "HTTP/1.1 204 No Content\r\n") {
		t.Errorf("delete without If-Match: %d\n%s", resp.StatusCode, got)
	}
	if resp, _ = do(t, "GET", hs.URL+"/devstoreaccount1/tt1(PartitionKey='p',RowKey='b')", nil, ""); resp.StatusCode != 404 {
		t.Errorf("delete without If-Match not applied: %d", resp.StatusCode)
	}
	// A key with an escaped slash is the key rules' InvalidInput, at its index.
	resp, got = do(t, "POST", url, ct, body(ins("h"), part("DELETE http://h/devstoreaccount1/tt1(PartitionKey='p',RowKey='a%2Fb') HTTP/1.1\r\nIf-Match: *\r\n\r\n")))
	if resp.StatusCode != 202 || !strings.Contains(got, "HTTP/1.1 400 ") || !strings.Contains(got, `"InvalidInput"`) || !strings.Contains(got, `"value":"1:`) {
		t.Errorf("escaped slash in a key: %d\n%s", resp.StatusCode, got)
	}
	// Mixed partitions and duplicate rows through raw HTTP carry their codes.
	resp, got = do(t, "POST", url, ct, body(ins("e"), strings.Replace(ins("f"), `"p"`, `"q"`, 1)))
	if resp.StatusCode != 202 || !strings.Contains(got, "HTTP/1.1 400 ") || !strings.Contains(got, `"CommandsInBatchActOnDifferentPartitions"`) {
		t.Errorf("mixed partitions: %d\n%s", resp.StatusCode, got)
	}
	resp, got = do(t, "POST", url, ct, body(ins("g"), ins("g")))
	if resp.StatusCode != 202 || !strings.Contains(got, "HTTP/1.1 400 ") || !strings.Contains(got, `"InvalidDuplicateRow"`) {
		t.Errorf("duplicate row: %d\n%s", resp.StatusCode, got)
	}
}

// csPart is one operation of a changeset with boundary changeset_C:
// MIME part headers (mime, may be empty), then the request itself.
func csPart(mime, req string) string {
	return "--changeset_C\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n" + mime + "\r\n" + req
}

// csBody is a $batch body, boundary batch_B, holding one changeset.
func csBody(parts ...string) string {
	return "--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_C\r\n\r\n" + strings.Join(parts, "") + "--changeset_C--\r\n\r\n--batch_B--\r\n"
}

var batchCT = map[string]string{"Content-Type": "multipart/mixed; boundary=batch_B"}

// subResponses splits a 202 batch response with the standard library's
// multipart reader and returns each inner response's raw text, status
// line to end of body.
func subResponses(t *testing.T, resp *http.Response, body string) []string {
	t.Helper()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("batch answered %d:\n%s", resp.StatusCode, body)
	}
	_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("response Content-Type %q: %v", resp.Header.Get("Content-Type"), err)
	}
	var out []string
	var read func(r *multipart.Reader)
	read = func(r *multipart.Reader) {
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("response framing: %v\n%q", err, body)
			}
			mt, pp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
			if mt == "multipart/mixed" {
				read(multipart.NewReader(p, pp["boundary"]))
				continue
			}
			b, err := io.ReadAll(p)
			if err != nil {
				t.Fatalf("response part: %v\n%q", err, body)
			}
			out = append(out, string(b))
		}
	}
	read(multipart.NewReader(strings.NewReader(body), params["boundary"]))
	return out
}

var reETag = regexp.MustCompile(`W/"datetime'[^']*'"`)

// TestWireBatchSubResponseHeaders pins the bytes of each kind of
// sub-response: the service's header spelling ("ETag", not Go's
// "Etag") and order, its DataServiceVersion per kind, Content-ID echoed
// from the operation's own headers (not from its MIME part headers), and
// ETags equal to what a later GET returns.
func TestWireBatchSubResponseHeaders(t *testing.T) {
	hs, acct := rawServer(t)
	ctx := context.Background()
	for _, rk := range []string{"old", "gone"} {
		if _, err := acct.Table("tt1").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: rk}); err != nil {
			t.Fatal(err)
		}
	}
	base := hs.URL + "/devstoreaccount1"
	ins := "POST " + base + "/tt1 HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nContent-Type: application/json\r\n"
	resp, got := do(t, "POST", base+"/$batch", batchCT, csBody(
		csPart("", ins+"Content-ID: 1\r\nPrefer: return-no-content\r\n\r\n"+`{"PartitionKey":"p","RowKey":"a"}`+"\r\n"),
		csPart("", ins+"Content-ID: 2\r\n\r\n"+`{"PartitionKey":"p","RowKey":"b","V":1}`+"\r\n"),
		csPart("Content-ID: 9\r\n", "PUT "+base+"/tt1(PartitionKey='p',RowKey='c') HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{}\r\n"),
		csPart("", "MERGE "+base+"/tt1(PartitionKey='p',RowKey='old') HTTP/1.1\r\nIf-Match: *\r\n\r\n{\"V\":2}\r\n"),
		csPart("", "DELETE "+base+"/tt1(PartitionKey='p',RowKey='gone') HTTP/1.1\r\nIf-Match: *\r\n\r\n"),
	))
	if resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("DataServiceVersion") != "" {
		t.Errorf("outer headers: %v", resp.Header)
	}
	subs := subResponses(t, resp, got)
	loc := func(rk string) string { return base + "/tt1(PartitionKey='p',RowKey='" + rk + "')" }
	want := []string{
		"HTTP/1.1 204 No Content\r\nContent-ID: 1\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n" +
			"Preference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\nLocation: " + loc("a") + "\r\n" +
			"DataServiceId: " + loc("a") + "\r\nETag: $ETAG\r\n\r\n",
		"HTTP/1.1 201 Created\r\nDataServiceVersion: 3.0;\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n" +
			"Content-ID: 2\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nLocation: " + loc("b") + "\r\nETag: $ETAG\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 1.0;\r\nETag: $ETAG\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 1.0;\r\nETag: $ETAG\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 1.0;\r\n\r\n",
	}
	if len(subs) != len(want) {
		t.Fatalf("%d sub-responses, want %d:\n%s", len(subs), len(want), got)
	}
	for i, rk := range []string{"a", "b", "c", "old", "gone"} {
		head, body, _ := strings.Cut(subs[i], "\r\n\r\n")
		tags := reETag.FindAllString(head, -1)
		if g := reETag.ReplaceAllString(head, "$$ETAG") + "\r\n\r\n"; g != want[i] {
			t.Errorf("sub-response %d:\n got %q\nwant %q", i, g, want[i])
		}
		r, _ := do(t, "GET", loc(rk), nil, "")
		if rk == "gone" {
			if r.StatusCode != 404 || len(tags) != 0 {
				t.Errorf("delete: GET %d, ETags %q", r.StatusCode, tags)
			}
			continue
		}
		if len(tags) != 1 || r.Header.Get("ETag") != tags[0] {
			t.Errorf("sub-response %d: ETag %q, GET answers %q", i, tags, r.Header.Get("ETag"))
		}
		if rk == "b" {
			tag, _ := json.Marshal(tags[0])
			if !strings.Contains(body, `"odata.etag":`+string(tag)) || !strings.Contains(body, `"RowKey":"b"`) || !strings.Contains(body, `"V":1`) {
				t.Errorf("201 body: %s", body)
			}
		} else if body != "" {
			t.Errorf("sub-response %d has a body: %q", i, body)
		}
	}
}

// TestSDKBatchErrorMessages checks, through aztables, the odata.error a
// failed changeset carries: the failing operation's index, the service's
// own message, then the RequestId of the $batch request and the Time.
func TestSDKBatchErrorMessages(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "errmsg")
	ent := func(pk, rk string) []byte {
		b, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk})
		return b
	}
	add := func(pk, rk string) aztables.TransactionAction {
		return aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: ent(pk, rk)}
	}
	for _, cs := range []struct {
		name    string
		actions []aztables.TransactionAction
		code    string
		message string
	}{
		{"missing entity at 0", []aztables.TransactionAction{{ActionType: aztables.TransactionTypeDelete, Entity: ent("p", "nope")}, add("p", "x")},
			"ResourceNotFound", "0:The specified resource does not exist."},
		{"mixed partitions at 1", []aztables.TransactionAction{add("p", "a"), add("q", "b")},
			"CommandsInBatchActOnDifferentPartitions", "1:All commands in a batch must operate on same entity group."},
		{"same row at 1", []aztables.TransactionAction{add("p", "a"), {ActionType: aztables.TransactionTypeInsertMerge, Entity: ent("p", "a")}},
			"InvalidDuplicateRow", "1:The batch request contains multiple changes with same row key. An entity can appear only once in a batch request."},
	} {
		_, err := c.SubmitTransaction(ctx, cs.actions, nil)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusAccepted {
			t.Errorf("%s: %v", cs.name, err)
			continue
		}
		id := re.RawResponse.Header.Get("x-ms-request-id")
		// The body is the multipart response; the error is JSON inside it.
		text := err.Error()
		i := strings.Index(text, `{"odata.error"`)
		j := strings.LastIndex(text, "}}}")
		if i < 0 || j < i {
			t.Errorf("%s: no odata.error in\n%s", cs.name, text)
			continue
		}
		var e struct {
			Err struct {
				Code    string
				Message struct{ Lang, Value string }
			} `json:"odata.error"`
		}
		if err := json.Unmarshal([]byte(text[i:j+3]), &e); err != nil {
			t.Errorf("%s: %v in %s", cs.name, err, text[i:j+3])
			continue
		}
		re7 := regexp.MustCompile(`^` + regexp.QuoteMeta(cs.message+"\nRequestId:"+id+"\nTime:") + `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$`)
		if e.Err.Code != cs.code || !re7.MatchString(e.Err.Message.Value) || id == "" {
			t.Errorf("%s: %s %q, want %s %q + RequestId %s + Time", cs.name, e.Err.Code, e.Err.Message.Value, cs.code, cs.message, id)
		}
	}
}

// TestWireBatchErrorResponses pins the bytes of a failed changeset's one
// response: an operation's error carries the operation's Content-ID,
// Cache-Control and Preference-Applied; an error of the changeset as a
// whole (a missing table) only the service's three headers.
func TestWireBatchErrorResponses(t *testing.T) {
	hs, acct := rawServer(t)
	if _, err := acct.Table("tt1").Insert(context.Background(), localtable.Entity{PartitionKey: "p", RowKey: "dup"}); err != nil {
		t.Fatal(err)
	}
	base := hs.URL + "/devstoreaccount1"
	ins := func(table, rk, extra string) string {
		return csPart("", "POST "+base+"/"+table+" HTTP/1.1\r\nContent-Type: application/json\r\n"+extra+"Prefer: return-no-content\r\n\r\n"+
			`{"PartitionKey":"p","RowKey":"`+rk+`"}`+"\r\n")
	}
	reTime := regexp.MustCompile(`\\nRequestId:[0-9a-f-]{36}\\nTime:[0-9T:.-]{27}Z"`)
	for _, cs := range []struct {
		name, body, want string
	}{
		{"operation", csBody(ins("tt1", "n1", ""), ins("tt1", "dup", "Content-ID: 7\r\n")),
			"HTTP/1.1 409 Conflict\r\nContent-ID: 7\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\n" +
				"DataServiceVersion: 3.0;\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n" +
				`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"1:The specified entity already exists.$T}}}`},
		{"missing table", csBody(ins("nosuch", "n1", "Content-ID: 7\r\n")),
			"HTTP/1.1 404 Not Found\r\nX-Content-Type-Options: nosniff\r\nDataServiceVersion: 3.0;\r\n" +
				"Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n" +
				`{"odata.error":{"code":"TableNotFound","message":{"lang":"en-US","value":"0:The table specified does not exist.$T}}}`},
	} {
		resp, got := do(t, "POST", base+"/$batch", batchCT, cs.body)
		subs := subResponses(t, resp, got)
		if len(subs) != 1 || reTime.ReplaceAllString(subs[0], "$$T") != cs.want {
			t.Errorf("%s:\n got %q\nwant %q", cs.name, subs, cs.want)
		}
	}
}

// TestWireBatchRetrieve: a batch holding one GET outside a changeset is
// answered with the entity, as the service does, or with its error.
func TestWireBatchRetrieve(t *testing.T) {
	hs, acct := rawServer(t)
	if _, err := acct.Table("tt1").Insert(context.Background(), localtable.Entity{PartitionKey: "p", RowKey: "r",
		Properties: localtable.Properties{"V": localtable.Int32Value(7)}}); err != nil {
		t.Fatal(err)
	}
	base := hs.URL + "/devstoreaccount1"
	get := func(rk string) string {
		return "--batch_B\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
			"GET " + base + "/tt1(PartitionKey='p',RowKey='" + rk + "') HTTP/1.1\r\nContent-ID: 3\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n--batch_B--\r\n"
	}
	direct, entity := do(t, "GET", base+"/tt1(PartitionKey='p',RowKey='r')", map[string]string{"Accept": minimal}, "")
	resp, got := do(t, "POST", base+"/$batch", batchCT, get("r"))
	if !strings.HasPrefix(got, "--batchresponse_") || strings.Contains(got, "changesetresponse") {
		t.Errorf("retrieve is not answered outside a changeset:\n%s", got)
	}
	subs := subResponses(t, resp, got)
	want := "HTTP/1.1 200 OK\r\nDataServiceVersion: 3.0;\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n" +
		"Content-ID: 3\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nETag: " + direct.Header.Get("ETag") + "\r\n\r\n" + entity
	if len(subs) != 1 || subs[0] != want || !strings.Contains(entity, `"V":7`) {
		t.Errorf("retrieve:\n got %q\nwant %q", subs, want)
	}
	resp, got = do(t, "POST", base+"/$batch", batchCT, get("missing"))
	subs = subResponses(t, resp, got)
	wantHead := "HTTP/1.1 404 Not Found\r\nContent-ID: 3\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n" +
		"Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n" +
		`{"odata.error":{"code":"ResourceNotFound","message":{"lang":"en-US","value":"0:The specified resource does not exist.\nRequestId:`
	if len(subs) != 1 || !strings.HasPrefix(subs[0], wantHead) {
		t.Errorf("missing entity:\n got %q\nwant %q…", subs, wantHead)
	}
}

// TestWireBatchMalformed: a $batch whose Content-Type, framing or
// operations are malformed is a 400 with an error code, never a 5xx, and
// applies nothing. The leniencies of the service's reader (LF line
// endings, a dangling last delimiter as @azure/data-tables 12 sent) are
// accepted, and a second changeset is rejected alone, as documented.
func TestWireBatchMalformed(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	insert := func(rk string) string {
		return "POST " + base + "/tt1 HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n" +
			`{"PartitionKey":"p","RowKey":"` + rk + `"}` + "\r\n"
	}
	ok := csBody(csPart("", insert("m")))
	single := func(req string) string {
		return "--batch_B\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" + req + "--batch_B--\r\n"
	}
	nested := "--changeset_C\r\nContent-Type: multipart/mixed; boundary=changeset_D\r\n\r\n--changeset_D\r\nContent-Type: application/http\r\n\r\n" +
		insert("m") + "--changeset_D--\r\n"
	for _, c := range []struct{ name, ct, body, code string }{
		{"no Content-Type", "", ok, "MissingRequiredHeader"},
		{"wrong Content-Type", "application/json", ok, "InvalidHeaderValue"},
		{"no boundary", "multipart/mixed", ok, "InvalidHeaderValue"},
		{"not multipart/mixed", "multipart/form-data; boundary=batch_B", ok, "InvalidHeaderValue"},
		{"empty body", "", "", "MissingRequiredHeader"},
		{"empty body with boundary", batchCT["Content-Type"], "", "InvalidInput"},
		{"no delimiter", batchCT["Content-Type"], "garbage", "InvalidInput"},
		{"other boundary", batchCT["Content-Type"], strings.ReplaceAll(ok, "batch_B", "batch_X"), "InvalidInput"},
		{"closed before any part", batchCT["Content-Type"], "--batch_B--\r\n", "InvalidInput"},
		{"truncated", batchCT["Content-Type"], ok[:strings.Index(ok, `"RowKey"`)], "InvalidInput"},
		{"changeset without closing delimiter", batchCT["Content-Type"], strings.Replace(ok, "--changeset_C--\r\n", "", 1), "InvalidInput"},
		{"batch without closing delimiter", batchCT["Content-Type"], strings.TrimSuffix(ok, "\r\n--batch_B--\r\n") + "\r\n{}", "InvalidInput"},
		{"nested changesets", batchCT["Content-Type"], csBody(nested), "InvalidInput"},
		{"empty changeset", batchCT["Content-Type"], csBody(), "InvalidInput"},
		{"garbage request line", batchCT["Content-Type"], csBody(csPart("", "this is no request line\r\n\r\n")), "InvalidInput"},
		{"request line without URL", batchCT["Content-Type"], csBody(csPart("", "POST\r\n\r\n{}\r\n")), "InvalidInput"},
		{"bad protocol", batchCT["Content-Type"], csBody(csPart("", strings.Replace(insert("m"), "HTTP/1.1", "FTP/1.0", 1))), "InvalidInput"},
		{"bad method token", batchCT["Content-Type"], csBody(csPart("", strings.Replace(insert("m"), "POST", "{POST}", 1))), "InvalidInput"},
		{"bad part header", batchCT["Content-Type"], csBody(csPart("no colon here\r\n", insert("m"))), "InvalidInput"},
		{"bad operation header", batchCT["Content-Type"], csBody(csPart("", strings.Replace(insert("m"), "Prefer:", "Prefer", 1))), "InvalidInput"},
		{"part without Content-Type", batchCT["Content-Type"], "--batch_B\r\n\r\nGET " + base + "/tt1() HTTP/1.1\r\n\r\n--batch_B--\r\n", "InvalidInput"},
		{"operation of another type", batchCT["Content-Type"], csBody(strings.Replace(csPart("", insert("m")), "application/http", "text/plain", 1)), "InvalidInput"},
		{"write outside a changeset", batchCT["Content-Type"], single(insert("m")), "InvalidInput"},
		{"query before a changeset", batchCT["Content-Type"], strings.TrimSuffix(single("GET "+base+"/tt1() HTTP/1.1\r\n\r\n"), "--batch_B--\r\n") + ok, "InvalidInput"},
		{"two queries", batchCT["Content-Type"], strings.Replace(single("GET "+base+"/tt1() HTTP/1.1\r\n\r\n"), "--batch_B--", "--batch_B\r\nContent-Type: application/http\r\n\r\nGET "+base+"/tt1() HTTP/1.1\r\n\r\n--batch_B--", 1), "InvalidInput"},
	} {
		hdr := map[string]string{}
		if c.ct != "" {
			hdr["Content-Type"] = c.ct
		}
		resp, got := do(t, "POST", base+"/$batch", hdr, c.body)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != c.code || !strings.Contains(got, `"code":"`+c.code+`"`) {
			t.Errorf("%s: %d %q, want 400 %s\n%s", c.name, resp.StatusCode, resp.Header.Get("x-ms-error-code"), c.code, got)
		}
		if r, _ := do(t, "GET", base+"/tt1(PartitionKey='p',RowKey='m')", nil, ""); r.StatusCode != http.StatusNotFound {
			t.Fatalf("%s: applied", c.name)
		}
	}

	// Accepted: LF line endings, and a last opening delimiter with
	// nothing after it.
	for i, body := range []string{
		strings.ReplaceAll(csBody(csPart("", insert("lf"))), "\r\n", "\n"),
		strings.TrimSuffix(csBody(csPart("", insert("dangling"))), "\r\n--batch_B--\r\n") + "\r\n--batch_B\r\n",
	} {
		rk := []string{"lf", "dangling"}[i]
		resp, got := do(t, "POST", base+"/$batch", batchCT, body)
		if subs := subResponses(t, resp, got); len(subs) != 1 || !strings.HasPrefix(subs[0], "HTTP/1.1 204 No Content\r\n") {
			t.Errorf("%s: %q", rk, subs)
		}
		if r, _ := do(t, "GET", base+"/tt1(PartitionKey='p',RowKey='"+rk+"')", nil, ""); r.StatusCode != http.StatusOK {
			t.Errorf("%s: not applied: %d", rk, r.StatusCode)
		}
	}

	// Two changesets: the first is processed, the second rejected with 400.
	two := "--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_C\r\n\r\n" + csPart("", insert("first")) + "--changeset_C--\r\n" +
		"--batch_B\r\nContent-Type: multipart/mixed; boundary=changeset_E\r\n\r\n" + strings.Replace(csPart("", insert("second")), "changeset_C", "changeset_E", 1) + "--changeset_E--\r\n--batch_B--\r\n"
	resp, got := do(t, "POST", base+"/$batch", batchCT, two)
	subs := subResponses(t, resp, got)
	if len(subs) != 2 || !strings.HasPrefix(subs[0], "HTTP/1.1 204 No Content\r\n") || !strings.HasPrefix(subs[1], "HTTP/1.1 400 Bad Request\r\n") || !strings.Contains(subs[1], `"code":"InvalidInput"`) {
		t.Errorf("two changesets: %q", subs)
	}
	for rk, status := range map[string]int{"first": http.StatusOK, "second": http.StatusNotFound} {
		if r, _ := do(t, "GET", base+"/tt1(PartitionKey='p',RowKey='"+rk+"')", nil, ""); r.StatusCode != status {
			t.Errorf("two changesets: %s: %d, want %d", rk, r.StatusCode, status)
		}
	}
}

// TestWireBatchPackageRules: the rules package batch enforces reach the
// wire as the service answers them: a GET in a changeset and a 101st
// operation fail the changeset within a 202 (the GET's response carrying
// its Content-ID, the count's only the changeset's headers); the body
// limit is 4 MiB exactly, passed at 4 MiB and answered 413 one byte over.
func TestWireBatchPackageRules(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	insert := func(rk string) string {
		return csPart("", "POST "+base+"/tt1 HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n"+
			`{"PartitionKey":"p","RowKey":"`+rk+`"}`+"\r\n")
	}
	exists := func(rk string) bool {
		r, _ := do(t, "GET", base+"/tt1(PartitionKey='p',RowKey='"+rk+"')", nil, "")
		return r.StatusCode == http.StatusOK
	}
	reTime := regexp.MustCompile(`\\nRequestId:[0-9a-f-]{36}\\nTime:[0-9T:.-]{27}Z"`)
	get := csPart("", "GET "+base+"/tt1() HTTP/1.1\r\nContent-ID: 4\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n")
	var many []string
	for i := range 101 {
		many = append(many, insert(fmt.Sprint("m", i)))
	}
	for _, c := range []struct{ name, body, want string }{
		{"GET in a changeset", csBody(insert("g"), get),
			"HTTP/1.1 400 Bad Request\r\nContent-ID: 4\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n" +
				"Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n" +
				`{"odata.error":{"code":"InvalidInput","message":{"lang":"en-US","value":"1:A query can only be alone in a batch, outside a changeset.$T}}}`},
		{"101 operations", csBody(many...),
			"HTTP/1.1 400 Bad Request\r\nX-Content-Type-Options: nosniff\r\nDataServiceVersion: 3.0;\r\n" +
				"Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n" +
				`{"odata.error":{"code":"InvalidInput","message":{"lang":"en-US","value":"99:The batch request operation exceeds the maximum 100 changes per change set.$T}}}`},
	} {
		resp, got := do(t, "POST", base+"/$batch", batchCT, c.body)
		subs := subResponses(t, resp, got)
		if len(subs) != 1 || reTime.ReplaceAllString(subs[0], "$$T") != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, subs, c.want)
		}
	}
	if exists("g") || exists("m0") {
		t.Error("a failed changeset applied")
	}
	if resp, got := do(t, "POST", base+"/$batch", batchCT, csBody(many[:100]...)); resp.StatusCode != http.StatusAccepted || strings.Contains(got, "HTTP/1.1 4") || !exists("m99") {
		t.Errorf("100 operations: %d\n%.300s", resp.StatusCode, got)
	}

	// A valid body padded (in its epilogue) to 4 MiB, then one byte more.
	for _, n := range []int{server.MaxBatchBody, server.MaxBatchBody + 1} {
		rk := fmt.Sprint("size", n)
		body := csBody(insert(rk))
		body += strings.Repeat("x", n-len(body))
		resp, got := do(t, "POST", base+"/$batch", batchCT, body)
		switch {
		case n == server.MaxBatchBody && (resp.StatusCode != http.StatusAccepted || !exists(rk)):
			t.Errorf("%d bytes: %d %.300s", n, resp.StatusCode, got)
		case n > server.MaxBatchBody && (resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("x-ms-error-code") != "RequestBodyTooLarge" || exists(rk)):
			t.Errorf("%d bytes: %d %s %.300s", n, resp.StatusCode, resp.Header.Get("x-ms-error-code"), got)
		}
	}
}
