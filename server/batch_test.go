package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
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
		for _, h := range []string{"\r\nPreference-Applied: return-no-content\r\n", "\r\nEtag: W/\"datetime'", "\r\nDataserviceversion: 3.0;\r\n", "\r\nDataserviceid: http://"} {
			if !strings.Contains(http.CanonicalHeaderKey(hdr), http.CanonicalHeaderKey(h)) && !strings.Contains(strings.ToLower(hdr), strings.ToLower(h)) {
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
