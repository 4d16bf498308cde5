package localtabletest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/localtable/localtable/batch"
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
	OpOther                Operation = "Other"                  // anything else; the server refuses it
)

// IsWrite reports whether the operation changes data: a table, an
// entity, a batch, an ACL or the service properties.
func (o Operation) IsWrite() bool {
	switch o {
	case OpCreateTable, OpDeleteTable, OpSetACL, OpSetServiceProperties, OpInsert, OpUpdate, OpMerge,
		OpUpsertReplace, OpUpsertMerge, OpDelete, OpBatch:
		return true
	}
	return false
}

// maxPeek bounds the request body read to classify a request; the
// server's own limit (4 MiB) is lower.
const maxPeek = 8 << 20

// describe classifies a request: its operation, table and keys, and for
// a batch its operations. It reads the body when it must (an insert, a
// table creation, a batch) and puts it back for the server.
func describe(r *http.Request) *Request {
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
	classify(d, r.Method, r.Header, r.URL, peek)
	return d
}

type readCloser struct {
	io.Reader
	io.Closer
}

// classify fills in d's operation, table and keys from a request's
// method, headers and URL; peek returns its body.
func classify(d *Request, method string, h http.Header, u *url.URL, peek func() []byte) {
	d.Op = OpOther
	if method == http.MethodOptions {
		d.Op = OpPreflight
		return
	}
	if x := h.Get("X-HTTP-Method"); x != "" && method == http.MethodPost {
		method = strings.ToUpper(strings.TrimSpace(x))
	}
	p := strings.TrimPrefix(u.EscapedPath(), "/")
	_, rest, _ := strings.Cut(p, "/")
	esc := strings.TrimSuffix(rest, "/")
	seg, err := url.PathUnescape(esc) // a %2F in a key stays inside the segment
	if err != nil || strings.Contains(esc, "/") {
		return
	}
	q := u.Query()
	lower := strings.ToLower(seg)
	switch {
	case seg == "":
		switch {
		case q.Get("comp") == "properties" && method == http.MethodGet:
			d.Op = OpGetServiceProperties
		case q.Get("comp") == "properties" && method == http.MethodPut:
			d.Op = OpSetServiceProperties
		case q.Get("comp") == "stats" && method == http.MethodGet:
			d.Op = OpGetServiceStats
		}
	case lower == "tables" || lower == "tables()":
		switch method {
		case http.MethodPost:
			d.Op = OpCreateTable
			var t struct{ TableName string }
			if json.Unmarshal(peek(), &t) == nil {
				d.Table = t.TableName
			}
		case http.MethodGet:
			d.Op = OpListTables
		}
	case strings.HasPrefix(lower, "tables(") && strings.HasSuffix(seg, ")"):
		name, _, _ := readQuoted(seg[len("tables(") : len(seg)-1])
		d.Table = name
		switch method {
		case http.MethodDelete:
			d.Op = OpDeleteTable
		case http.MethodGet:
			d.Op = OpListTables
		}
	case seg == "$batch":
		if method == http.MethodPost {
			d.Op = OpBatch
			d.Batch = batchOps(h.Get("Content-Type"), peek())
			if len(d.Batch) > 0 {
				d.Table, d.PartitionKey, d.RowKey = d.Batch[0].Table, d.Batch[0].PartitionKey, d.Batch[0].RowKey
			}
		}
	default:
		nameEsc, keysEsc, hasParens := strings.Cut(esc, "(")
		d.Table, _ = url.PathUnescape(nameEsc)
		keys, _ := url.PathUnescape(strings.TrimSuffix(keysEsc, ")"))
		ifMatch := h.Get("If-Match") != ""
		switch {
		case q.Get("comp") == "acl" && !hasParens:
			switch method {
			case http.MethodGet:
				d.Op = OpGetACL
			case http.MethodPut:
				d.Op = OpSetACL
			}
		case keys == "":
			switch method {
			case http.MethodGet:
				d.Op = OpQuery
			case http.MethodPost:
				d.Op = OpInsert
				var k struct{ PartitionKey, RowKey string }
				if json.Unmarshal(peek(), &k) == nil {
					d.PartitionKey, d.RowKey = k.PartitionKey, k.RowKey
				}
			}
		default:
			d.PartitionKey, d.RowKey = parseKeys(keys)
			switch method {
			case http.MethodGet:
				d.Op = OpGet
			case http.MethodPut:
				d.Op = pick(ifMatch, OpUpdate, OpUpsertReplace)
			case http.MethodPatch, "MERGE":
				d.Op = pick(ifMatch, OpMerge, OpUpsertMerge)
			case http.MethodDelete:
				d.Op = OpDelete
			}
		}
	}
}

func pick(cond bool, a, b Operation) Operation {
	if cond {
		return a
	}
	return b
}

// parseKeys reads "PartitionKey='a',RowKey='b'" (unescaped), either order.
func parseKeys(s string) (pk, rk string) {
	for s != "" {
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			return
		}
		v, rest, ok := readQuoted(rest)
		if !ok {
			return
		}
		switch strings.TrimSpace(name) {
		case "PartitionKey":
			pk = v
		case "RowKey":
			rk = v
		}
		s = strings.TrimPrefix(strings.TrimSpace(rest), ",")
	}
	return
}

// readQuoted reads an OData string literal ('it”s') from the start of
// s, returning its value and what follows.
func readQuoted(s string) (string, string, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "'") {
		return "", s, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", s, false
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
			classify(&d, op.Method, op.Header.HTTPHeader(), u, func() []byte { return op.Body })
		} else {
			d.Op = OpOther
		}
		ops = append(ops, d)
	}
	return ops
}
