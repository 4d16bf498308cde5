package batch_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/localtable/localtable/batch"
)

// A server reads a $batch body into its operations.
func ExampleParseRequest() {
	body := "--batch_B\r\n" +
		"Content-Type: multipart/mixed; boundary=changeset_C\r\n" +
		"\r\n" +
		"--changeset_C\r\n" +
		"Content-Transfer-Encoding: binary\r\n" +
		"Content-Type: application/http\r\n" +
		"\r\n" +
		"POST http://127.0.0.1:10002/devstoreaccount1/t1 HTTP/1.1\r\n" +
		"Content-ID: 1\r\n" +
		"Content-Type: application/json\r\n" +
		"Prefer: return-no-content\r\n" +
		"\r\n" +
		`{"PartitionKey":"p","RowKey":"a"}` + "\r\n" +
		"--changeset_C\r\n" +
		"Content-Transfer-Encoding: binary\r\n" +
		"Content-Type: application/http\r\n" +
		"\r\n" +
		"DELETE http://127.0.0.1:10002/devstoreaccount1/t1(PartitionKey='p',RowKey='b') HTTP/1.1\r\n" +
		"If-Match: *\r\n" +
		"\r\n" +
		"\r\n" +
		"--changeset_C--\r\n" +
		"\r\n" +
		"--batch_B--\r\n"
	req, err := batch.ParseRequest([]byte(body), "multipart/mixed; boundary=batch_B")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("changeset:", req.Changeset)
	for _, op := range req.Operations {
		fmt.Printf("%s %s Content-ID=%q If-Match=%q body=%s\n", op.Method, op.URL, op.ContentID(), op.Header.Get("If-Match"), op.Body)
	}
	// Output:
	// changeset: true
	// POST http://127.0.0.1:10002/devstoreaccount1/t1 Content-ID="1" If-Match="" body={"PartitionKey":"p","RowKey":"a"}
	// DELETE http://127.0.0.1:10002/devstoreaccount1/t1(PartitionKey='p',RowKey='b') Content-ID="" If-Match="*" body=
}

// A rule broken at an operation fails the changeset, not the request:
// the server answers 202 with one response, its message prefixed with
// the index.
func ExampleError() {
	req := &batch.Request{Changeset: true}
	for i := range 101 {
		req.Operations = append(req.Operations, batch.Operation{Method: "DELETE", URL: fmt.Sprintf("/t1(PartitionKey='p',RowKey='%d')", i)})
	}
	_, _, err := batch.EncodeRequest(req, "")
	var be *batch.Error
	if errors.As(err, &be) {
		fmt.Printf("%d %s %d:%s\n", be.Status, be.Code, be.Index, be.Message)
	}
	// Output:
	// 400 InvalidInput 99:The batch request operation exceeds the maximum 100 changes per change set.
}

// A server writes the reply to a changeset of an insert and a delete,
// with the service's headers.
func ExampleEncodeResponse() {
	loc := "http://127.0.0.1:10002/devstoreaccount1/t1(PartitionKey='p',RowKey='a')"
	etag := `W/"datetime'2024-05-01T12%3A00%3A00.1234567Z'"`
	rep := &batch.Reply{Changeset: true, Responses: []batch.Response{
		{Status: 204, Header: batch.NoContentHeader("1", "return-no-content", loc, etag)},
		{Status: 204, Header: batch.NoContentHeader("", "", "", "")},
	}}
	ct, body, err := batch.EncodeResponse(rep, "9a1f")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Content-Type:", ct)
	fmt.Print(strings.ReplaceAll(string(body), "\r\n", `\r\n`+"\n"))
	// Output:
	// Content-Type: multipart/mixed; boundary=batchresponse_9a1f
	// --batchresponse_9a1f\r\n
	// Content-Type: multipart/mixed; boundary=changesetresponse_9a1f\r\n
	// \r\n
	// --changesetresponse_9a1f\r\n
	// Content-Type: application/http\r\n
	// Content-Transfer-Encoding: binary\r\n
	// \r\n
	// HTTP/1.1 204 No Content\r\n
	// Content-ID: 1\r\n
	// X-Content-Type-Options: nosniff\r\n
	// Cache-Control: no-cache\r\n
	// Preference-Applied: return-no-content\r\n
	// DataServiceVersion: 3.0;\r\n
	// Location: http://127.0.0.1:10002/devstoreaccount1/t1(PartitionKey='p',RowKey='a')\r\n
	// DataServiceId: http://127.0.0.1:10002/devstoreaccount1/t1(PartitionKey='p',RowKey='a')\r\n
	// ETag: W/"datetime'2024-05-01T12%3A00%3A00.1234567Z'"\r\n
	// \r\n
	// \r\n
	// --changesetresponse_9a1f\r\n
	// Content-Type: application/http\r\n
	// Content-Transfer-Encoding: binary\r\n
	// \r\n
	// HTTP/1.1 204 No Content\r\n
	// X-Content-Type-Options: nosniff\r\n
	// Cache-Control: no-cache\r\n
	// DataServiceVersion: 1.0;\r\n
	// \r\n
	// \r\n
	// --changesetresponse_9a1f--\r\n
	// --batchresponse_9a1f--\r\n
}

// A client encodes a changeset as the SDKs do, sends it, and reads the
// reply: here, one the service sent when the second insert failed.
func ExampleEncodeRequest() {
	insert := func(rk string) batch.Operation {
		return batch.Operation{Method: "POST", URL: "http://127.0.0.1:10002/devstoreaccount1/t1",
			Header: batch.Header{{Name: "Content-Type", Value: "application/json"}, {Name: "Prefer", Value: "return-no-content"}},
			Body:   []byte(`{"PartitionKey":"p","RowKey":"` + rk + `"}`)}
	}
	ct, body, err := batch.EncodeRequest(&batch.Request{Changeset: true, Operations: []batch.Operation{insert("a"), insert("b")}}, "c0de")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("POST /devstoreaccount1/$batch")
	fmt.Println("Content-Type:", ct)
	fmt.Print(strings.ReplaceAll(string(body), "\r\n", `\r\n`+"\n"))

	reply := "--batchresponse_66f7\r\n" +
		"Content-Type: multipart/mixed; boundary=changesetresponse_8a3c\r\n" +
		"\r\n" +
		"--changesetresponse_8a3c\r\n" +
		"Content-Type: application/http\r\n" +
		"Content-Transfer-Encoding: binary\r\n" +
		"\r\n" +
		"HTTP/1.1 409 Conflict\r\n" +
		"X-Content-Type-Options: nosniff\r\n" +
		"Cache-Control: no-cache\r\n" +
		"Preference-Applied: return-no-content\r\n" +
		"DataServiceVersion: 3.0;\r\n" +
		"Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n" +
		"\r\n" +
		`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"1:The specified entity already exists."}}}` + "\r\n" +
		"--changesetresponse_8a3c--\r\n" +
		"--batchresponse_66f7--\r\n"
	rep, err := batch.ParseResponse([]byte(reply), "multipart/mixed; boundary=batchresponse_66f7")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rep.Responses {
		fmt.Println(r.Status, r.Header.Get("Content-Type"))
		fmt.Println(string(r.Body))
	}
	// Output:
	// POST /devstoreaccount1/$batch
	// Content-Type: multipart/mixed; boundary=batch_c0de
	// --batch_c0de\r\n
	// Content-Type: multipart/mixed; boundary=changeset_c0de\r\n
	// \r\n
	// --changeset_c0de\r\n
	// Content-Transfer-Encoding: binary\r\n
	// Content-Type: application/http\r\n
	// \r\n
	// POST http://127.0.0.1:10002/devstoreaccount1/t1 HTTP/1.1\r\n
	// Content-Type: application/json\r\n
	// Prefer: return-no-content\r\n
	// \r\n
	// {"PartitionKey":"p","RowKey":"a"}\r\n
	// --changeset_c0de\r\n
	// Content-Transfer-Encoding: binary\r\n
	// Content-Type: application/http\r\n
	// \r\n
	// POST http://127.0.0.1:10002/devstoreaccount1/t1 HTTP/1.1\r\n
	// Content-Type: application/json\r\n
	// Prefer: return-no-content\r\n
	// \r\n
	// {"PartitionKey":"p","RowKey":"b"}\r\n
	// --changeset_c0de--\r\n
	// \r\n
	// --batch_c0de--\r\n
	// 409 application/json;odata=minimalmetadata;streaming=true;charset=utf-8
	// {"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"1:The specified entity already exists."}}}
}
