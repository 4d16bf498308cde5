package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/localtable/localtable/batch"
	"github.com/localtable/localtable/internal/reqclass"
)

// Operation is a Table service operation, named as the REST API
// reference names it.
type Operation string

// The operations of the Table service.
const (
	OpCreateTable          Operation = "CreateTable"
	OpDeleteTable          Operation = "DeleteTable"
	OpListTables           Operation = "QueryTables" // and GET Tables('name')
	OpGetACL               Operation = "GetTableACL"
	OpSetACL               Operation = "SetTableACL"
	OpGetServiceProperties Operation = "GetTableServiceProperties"
	OpSetServiceProperties Operation = "SetTableServiceProperties"
	OpGetServiceStats      Operation = "GetTableServiceStats"
	OpInsert               Operation = "InsertEntity"
	OpUpdate               Operation = "UpdateEntity"          // PUT with If-Match
	OpMerge                Operation = "MergeEntity"           // MERGE or PATCH with If-Match
	OpUpsertReplace        Operation = "InsertOrReplaceEntity" // PUT without If-Match
	OpUpsertMerge          Operation = "InsertOrMergeEntity"   // MERGE or PATCH without If-Match
	OpDelete               Operation = "DeleteEntity"
	OpGet                  Operation = "GetEntity" // a GET of one entity by its keys
	OpQuery                Operation = "QueryEntities"
	OpBatch                Operation = "EntityGroupTransaction" // $batch
	OpPreflight            Operation = "PreflightTableRequest"  // CORS OPTIONS
	OpWatchChanges         Operation = "WatchChanges"           // GET $changes, localtable's change feed
	OpOther                Operation = "Other"                  // anything else; the server refuses it
)

// operationOf names a classified operation as the kit names it: by its
// name in package reqclass's table of operations, but for the names the
// kit has always used (OpGet, OpOther).
func operationOf(o reqclass.Op) Operation {
	switch o {
	case reqclass.QueryEntity:
		return OpGet
	case reqclass.Unknown:
		return OpOther
	}
	return Operation(o.String())
}

// IsWrite reports whether the operation changes data: a table, an
// entity, a batch, an ACL or the service properties.
func (o Operation) IsWrite() bool {
	for _, op := range reqclass.Ops() {
		if operationOf(op) == o {
			return op.IsWrite()
		}
	}
	return false
}

// maxPeek bounds the request body read to classify a request; the
// server's own limit (4 MiB) is lower.
const maxPeek = 8 << 20

// describe classifies a request: its operation, table and keys, and for
// a batch its operations. It reads the body when it must (an insert, a
// table creation, a batch) and puts it back for the server. It returns
// the operation as package reqclass names it too.
func describe(r *http.Request) (*Request, reqclass.Op) {
	d := &Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone()}
	var body []byte
	peek := func() []byte {
		if body == nil && r.Body != nil && r.Body != http.NoBody {
			b, _ := io.ReadAll(io.LimitReader(r.Body, maxPeek))
			r.Body = readCloser{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
			body = b
		}
		return body
	}
	c := reqclass.Classify(r)
	if c.Op.IsTestControl() {
		d.Op = operationOf(c.Op)
		return d, c.Op
	}
	classify(d, c, r.Header.Get("Content-Type"), peek)
	return d, c.Op
}

type readCloser struct {
	io.Reader
	io.Closer
}

// classify fills in d's operation, table and keys from a request's
// classification, and from its body (peek) what only the body names: the
// table a CreateTable creates, the keys of an InsertEntity, the
// operations of a batch.
func classify(d *Request, c reqclass.Request, contentType string, peek func() []byte) {
	d.Op = operationOf(c.Op)
	d.Table, d.PartitionKey, d.RowKey = c.Table, c.PartitionKey, c.RowKey
	switch c.Op {
	case reqclass.CreateTable:
		var t struct{ TableName string }
		if json.Unmarshal(peek(), &t) == nil {
			d.Table = t.TableName
		}
	case reqclass.InsertEntity:
		var k struct{ PartitionKey, RowKey string }
		if json.Unmarshal(peek(), &k) == nil {
			d.PartitionKey, d.RowKey = k.PartitionKey, k.RowKey
		}
	case reqclass.EntityGroupTransaction:
		d.Batch = batchOps(contentType, peek())
		if len(d.Batch) > 0 {
			d.Table, d.PartitionKey, d.RowKey = d.Batch[0].Table, d.Batch[0].PartitionKey, d.Batch[0].RowKey
		}
	}
}

// batchOps reads the operations of a $batch body with package batch, the
// server's own reader. It returns nothing for a malformed body, which the
// server refuses.
func batchOps(contentType string, body []byte) []Request {
	req, err := batch.ParseRequest(body, contentType)
	if err != nil {
		return nil
	}
	ops := make([]Request, 0, len(req.Operations))
	for _, op := range req.Operations {
		d := Request{Method: op.Method}
		if u, err := url.Parse(op.URL); err == nil {
			d.Path = u.RequestURI()
			classify(&d, reqclass.ClassifyBatchOp(op.Method, u, op.Header.Get("If-Match")), "", func() []byte { return op.Body })
		} else {
			d.Op = OpOther
		}
		ops = append(ops, d)
	}
	return ops
}
