package batch_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/localtable/localtable/batch"
)

const (
	minimal = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
	etag    = `W/"datetime'2024-05-01T12%3A00%3A00.1234567Z'"`
	loc     = "http://h/acct/t1(PartitionKey='p',RowKey='a')"
)

// names lists a header's names, in order.
func names(h batch.Header) string {
	var s []string
	for _, f := range h {
		s = append(s, f.Name)
	}
	return strings.Join(s, ",")
}

// TestHeaderOrders pins the service's four header orders, and that empty
// values are left out.
func TestHeaderOrders(t *testing.T) {
	for _, c := range []struct {
		name string
		h    batch.Header
		want string
	}{
		{"insert, return-no-content", batch.NoContentHeader("1", "return-no-content", loc, etag),
			"Content-ID,X-Content-Type-Options,Cache-Control,Preference-Applied,DataServiceVersion,Location,DataServiceId,ETag"},
		{"update", batch.NoContentHeader("", "", "", etag), "X-Content-Type-Options,Cache-Control,DataServiceVersion,ETag"},
		{"delete", batch.NoContentHeader("", "", "", ""), "X-Content-Type-Options,Cache-Control,DataServiceVersion"},
		{"insert 201", batch.ContentHeader(minimal, "2", "return-content", loc, etag),
			"DataServiceVersion,Content-Type,Content-ID,X-Content-Type-Options,Cache-Control,Preference-Applied,Location,ETag"},
		{"query", batch.ContentHeader(minimal, "", "", "", "", batch.HeaderField{Name: "x-ms-continuation-NextPartitionKey", Value: "1!4!cA--"}, batch.HeaderField{Name: "x-ms-continuation-NextRowKey", Value: ""}),
			"DataServiceVersion,Content-Type,X-Content-Type-Options,Cache-Control,x-ms-continuation-NextPartitionKey"},
		{"operation error", batch.OperationErrorHeader("7", "return-no-content", minimal),
			"Content-ID,X-Content-Type-Options,Cache-Control,Preference-Applied,DataServiceVersion,Content-Type"},
		{"changeset error", batch.ChangesetErrorHeader(minimal), "X-Content-Type-Options,DataServiceVersion,Content-Type"},
	} {
		if got := names(c.h); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	// DataServiceVersion: 3.0; with a Location (an insert), 1.0; without.
	if v := batch.NoContentHeader("", "", loc, etag).Get("dataserviceversion"); v != "3.0;" {
		t.Errorf("insert: DataServiceVersion %q", v)
	}
	if v := batch.NoContentHeader("", "", "", etag).Get("DataServiceVersion"); v != "1.0;" {
		t.Errorf("update: DataServiceVersion %q", v)
	}
}

// TestEncodeResponseBytes pins the bytes of each form of reply.
func TestEncodeResponseBytes(t *testing.T) {
	errBody := []byte(`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"1:The specified entity already exists."}}}`)
	for _, c := range []struct {
		name string
		rep  batch.Reply
		want string
	}{
		{"changeset", batch.Reply{Changeset: true, Responses: []batch.Response{
			{Status: 204, Header: batch.NoContentHeader("1", "return-no-content", loc, etag)},
			{Status: 201, Header: batch.ContentHeader(minimal, "", "", loc, etag), Body: []byte(`{"RowKey":"a"}`)},
		}},
			"--batchresponse_X\r\nContent-Type: multipart/mixed; boundary=changesetresponse_X\r\n\r\n" +
				"--changesetresponse_X\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"HTTP/1.1 204 No Content\r\nContent-ID: 1\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\n" +
				"DataServiceVersion: 3.0;\r\nLocation: " + loc + "\r\nDataServiceId: " + loc + "\r\nETag: " + etag + "\r\n\r\n\r\n" +
				"--changesetresponse_X\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"HTTP/1.1 201 Created\r\nDataServiceVersion: 3.0;\r\nContent-Type: " + minimal + "\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n" +
				"Location: " + loc + "\r\nETag: " + etag + "\r\n\r\n" + `{"RowKey":"a"}` + "\r\n" +
				"--changesetresponse_X--\r\n--batchresponse_X--\r\n"},
		{"failed changeset", batch.Reply{Changeset: true, Responses: []batch.Response{
			{Status: 409, Header: batch.OperationErrorHeader("", "", minimal), Body: errBody}}},
			"--batchresponse_X\r\nContent-Type: multipart/mixed; boundary=changesetresponse_X\r\n\r\n" +
				"--changesetresponse_X\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"HTTP/1.1 409 Conflict\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\nContent-Type: " + minimal + "\r\n\r\n" +
				string(errBody) + "\r\n--changesetresponse_X--\r\n--batchresponse_X--\r\n"},
		{"GET alone", batch.Reply{Responses: []batch.Response{{Status: 200, Header: batch.ContentHeader(minimal, "", "", "", etag), Body: []byte("{}")}}},
			"--batchresponse_X\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"HTTP/1.1 200 OK\r\nDataServiceVersion: 3.0;\r\nContent-Type: " + minimal + "\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nETag: " + etag + "\r\n\r\n" +
				"{}\r\n--batchresponse_X--\r\n"},
		{"rejected changesets", batch.Reply{Changeset: true,
			Responses: []batch.Response{{Status: 204, Header: batch.NoContentHeader("", "", "", "")}},
			Rejected:  []batch.Response{{Status: 400, Header: batch.ChangesetErrorHeader(minimal), Body: []byte("e")}, {Status: 400, Body: []byte("f")}}},
			"--batchresponse_X\r\nContent-Type: multipart/mixed; boundary=changesetresponse_X\r\n\r\n" +
				"--changesetresponse_X\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 1.0;\r\n\r\n\r\n" +
				"--changesetresponse_X--\r\n" +
				"--batchresponse_X\r\nContent-Type: multipart/mixed; boundary=changesetresponse_X_2\r\n\r\n" +
				"--changesetresponse_X_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"HTTP/1.1 400 Bad Request\r\nX-Content-Type-Options: nosniff\r\nDataServiceVersion: 3.0;\r\nContent-Type: " + minimal + "\r\n\r\ne\r\n" +
				"--changesetresponse_X_2--\r\n" +
				"--batchresponse_X\r\nContent-Type: multipart/mixed; boundary=changesetresponse_X_3\r\n\r\n" +
				"--changesetresponse_X_3\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
				"HTTP/1.1 400 Bad Request\r\n\r\nf\r\n--changesetresponse_X_3--\r\n--batchresponse_X--\r\n"},
	} {
		ct, body, err := batch.EncodeResponse(&c.rep, "X")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if ct != "multipart/mixed; boundary=batchresponse_X" || string(body) != c.want {
			t.Errorf("%s: %s\n got %q\nwant %q", c.name, ct, body, c.want)
		}
		got, err := batch.ParseResponse(body, ct)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else if d := cmp.Diff(&c.rep, got, cmpOpts); d != "" {
			t.Errorf("%s: round trip (-sent +read)\n%s", c.name, d)
		}
	}
}

// TestEncodeResponseRandomBoundaries: without an ID, each boundary ends
// with its own random UUID, as the service's do.
func TestEncodeResponseRandomBoundaries(t *testing.T) {
	rep := &batch.Reply{Changeset: true, Responses: []batch.Response{{Status: 204}}, Rejected: []batch.Response{{Status: 400}}}
	uuid := `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`
	re := regexp.MustCompile(`^--batchresponse_(` + uuid + `)\r\nContent-Type: multipart/mixed; boundary=changesetresponse_(` + uuid + `)\r\n(?s:.*)` +
		`boundary=changesetresponse_(` + uuid + `)\r\n`)
	ct, body, err := batch.EncodeResponse(rep, "")
	if err != nil {
		t.Fatal(err)
	}
	m := re.FindStringSubmatch(string(body))
	if m == nil || ct != "multipart/mixed; boundary=batchresponse_"+m[1] || m[1] == m[2] || m[2] == m[3] {
		t.Errorf("%s\n%q", ct, body)
	}
	_, body2, _ := batch.EncodeResponse(rep, "")
	if string(body) == string(body2) {
		t.Error("two replies share their boundaries")
	}
}

func TestEncodeResponseRejects(t *testing.T) {
	ok := batch.Response{Status: 204}
	for _, c := range []struct {
		name string
		rep  batch.Reply
		id   string
	}{
		{"no response", batch.Reply{Changeset: true}, ""},
		{"two responses alone", batch.Reply{Responses: []batch.Response{ok, ok}}, ""},
		{"rejected without a changeset", batch.Reply{Responses: []batch.Response{ok}, Rejected: []batch.Response{ok}}, ""},
		{"status of two digits", batch.Reply{Responses: []batch.Response{{Status: 99}}}, ""},
		{"status of four digits", batch.Reply{Responses: []batch.Response{{Status: 1000}}}, ""},
		{"bad rejected status", batch.Reply{Changeset: true, Responses: []batch.Response{ok}, Rejected: []batch.Response{{}}}, ""},
		{"header value with a line break", batch.Reply{Responses: []batch.Response{{Status: 200, Header: batch.Header{{Name: "ETag", Value: "a\r\nX: y"}}}}}, ""},
		{"header name with a space", batch.Reply{Responses: []batch.Response{{Status: 200, Header: batch.Header{{Name: "E Tag", Value: "a"}}}}}, ""},
		{"body holding the batch delimiter", batch.Reply{Responses: []batch.Response{{Status: 200, Body: []byte("x\r\n--batchresponse_X--")}}}, "X"},
		{"body holding the changeset delimiter", batch.Reply{Changeset: true, Responses: []batch.Response{{Status: 200, Body: []byte("--changesetresponse_X\n")}}}, "X"},
		{"bad boundary ID", batch.Reply{Responses: []batch.Response{ok}}, "x;y"},
	} {
		if _, body, err := batch.EncodeResponse(&c.rep, c.id); err == nil {
			t.Errorf("%s: encoded\n%q", c.name, body)
		}
	}
}

// TestParseResponse reads replies framed otherwise than EncodeResponse
// frames them: LF line endings, a preamble, blank lines, folded headers.
func TestParseResponse(t *testing.T) {
	body := "preamble\n--batchresponse_9\nContent-Type: multipart/mixed; boundary=cs9\n\n\n--cs9\ncontent-type: application/http\n\n" +
		"HTTP/1.1 201 Whatever\nETag:  " + etag + " \nX-Folded: a\n  b\n\n{\"a\":1}\n--cs9\nContent-Type: application/http\n\n" +
		"HTTP/1.0 204\n\n\n--cs9--\n\n--batchresponse_9--\nepilogue"
	got, err := batch.ParseResponse([]byte(body), `multipart/mixed; boundary="batchresponse_9"`)
	if err != nil {
		t.Fatal(err)
	}
	want := &batch.Reply{Changeset: true, Responses: []batch.Response{
		{Status: 201, Header: batch.Header{{Name: "ETag", Value: etag}, {Name: "X-Folded", Value: "a b"}}, Body: []byte(`{"a":1}`)},
		{Status: 204},
	}}
	if d := cmp.Diff(want, got, cmpOpts); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if got.Responses[0].Header.Get("etag") != etag || got.Responses[0].ContentID() != "" {
		t.Errorf("Header.Get: %q", got.Responses[0].Header.Get("etag"))
	}
}

func TestParseResponseErrors(t *testing.T) {
	part := "--cs\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n\r\n"
	cs := func(parts ...string) string {
		return "--b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n" + strings.Join(parts, "") + "--cs--\r\n"
	}
	for _, c := range []struct{ name, ct, body string }{
		{"not multipart", "application/json", cs(part) + "--b--"},
		{"no boundary", "multipart/mixed", cs(part) + "--b--"},
		{"empty", "multipart/mixed; boundary=b", ""},
		{"truncated", "multipart/mixed; boundary=b", cs(part)},
		{"empty changeset", "multipart/mixed; boundary=b", cs() + "--b--"},
		{"bad status line", "multipart/mixed; boundary=b", cs(strings.Replace(part, "HTTP/1.1 204", "HTTP/1.1 20x", 1)) + "--b--"},
		{"status line without protocol", "multipart/mixed; boundary=b", cs(strings.Replace(part, "HTTP/1.1 204", "204", 1)) + "--b--"},
		{"status 099", "multipart/mixed; boundary=b", cs(strings.Replace(part, "204", "099", 1)) + "--b--"},
		{"bad header", "multipart/mixed; boundary=b", cs(strings.Replace(part, "Content\r\n", "Content\r\nno colon\r\n", 1)) + "--b--"},
		{"header with a control character", "multipart/mixed; boundary=b", cs(strings.Replace(part, "Content\r\n", "Content\r\nA: \x7f\r\n", 1)) + "--b--"},
		{"part of another type", "multipart/mixed; boundary=b", cs(strings.Replace(part, "application/http", "text/plain", 1)) + "--b--"},
		{"lone response then a changeset", "multipart/mixed; boundary=b", strings.Replace(part, "--cs", "--b", 1) + cs(part) + "--b--"},
		{"changeset then a lone response", "multipart/mixed; boundary=b", cs(part) + strings.Replace(part, "--cs", "--b", 1) + "--b--"},
		{"rejected changeset of two", "multipart/mixed; boundary=b", cs(part) + cs(part, part) + "--b--"},
	} {
		if rep, err := batch.ParseResponse([]byte(c.body), c.ct); err == nil || !strings.HasPrefix(err.Error(), "batch: ") {
			t.Errorf("%s: %+v %v", c.name, rep, err)
		}
	}
}
