package server

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/batch"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/internal/odata"
	"github.com/localtable/localtable/internal/reqclass"
)

// This file serves entity group transactions, POST /{acct}/$batch
// (docs/protocol.md §6): a multipart/mixed body holding one changeset of
// writes, or one GET alone.
//
// Package batch owns the wire format: it reads the body into operations,
// enforcing the rules it can see (the body size, 100 operations, one
// changeset, a GET alone and writes in a changeset), and writes the
// reply with the service's framing, header spelling and order. This file
// adapts its operations to Table.Transact: it resolves each operation's
// URL, decodes its entity with the server's codec, authorizes it, applies
// the changeset (Transact enforces one partition and each entity once),
// and builds each operation's response.

// subRequest is one operation of a batch, its URL resolved.
type subRequest struct {
	op  *batch.Operation
	cls reqclass.Request // its operation and what it addresses; cls.Query is its query
}

func errBatch(msg string) *localtable.Error {
	return errInvalidInput("The batch request body is malformed: " + msg)
}

// fromBatchError is the wire error of a batch.Error.
func fromBatchError(be *batch.Error) *localtable.Error {
	return wireError(localtable.ErrorCode(be.Code), be.Message)
}

// resolve reads an operation's URL with reqclass.ClassifyBatchOp: the
// resource its last path segment addresses, leniently as the SDKs do not
// quote-double keys there, and its query.
func resolve(op *batch.Operation) (subRequest, error) {
	sr := subRequest{op: op}
	u, err := url.Parse(op.URL)
	if err != nil {
		return sr, errBatch("bad operation URL " + odata.Quote(op.URL))
	}
	sr.cls = reqclass.ClassifyBatchOp(op.Method, u, op.Header.Get("If-Match"))
	switch sr.cls.Problem {
	case reqclass.BadQuery:
		return sr, errBatch("bad operation query " + odata.Quote(u.RawQuery))
	case reqclass.BadURI:
		return sr, errBatch("bad operation URL " + odata.Quote(op.URL))
	case reqclass.BadResource:
		return sr, errInvalidURI("The requested URI does not represent any resource on the server.")
	case reqclass.BadKeys:
		return sr, (&reqCtx{cls: sr.cls}).problemError()
	}
	return sr, nil
}

// preference returns the Prefer value the service applies to an
// operation: only inserts honour it.
func preference(op *batch.Operation) string {
	if op.Method != http.MethodPost {
		return ""
	}
	return preferenceOf(op.Header.Values("Prefer"))
}

// action turns a changeset operation into a transaction action and the
// operation to authorize; keys in the body win over keys in the URL,
// which the SDKs do not quote-double.
func (sr *subRequest) action() (localtable.Action, reqclass.Op, error) {
	var act localtable.Action
	c := &sr.cls
	ifMatch := localtable.ETag(sr.op.Header.Get("If-Match"))
	switch c.Op {
	case reqclass.DeleteEntity:
		if ifMatch == "" {
			ifMatch = localtable.ETagAny
		}
		act = localtable.Action{Type: localtable.ActionDelete, IfMatch: ifMatch,
			Entity: localtable.Entity{PartitionKey: c.PartitionKey, RowKey: c.RowKey}}
		return act, c.Op, nil
	case reqclass.InsertEntity:
		act.Type = localtable.ActionInsert
	case reqclass.UpdateEntity:
		act.Type = localtable.ActionUpdateReplace
	case reqclass.MergeEntity:
		act.Type = localtable.ActionUpdateMerge
	case reqclass.InsertOrReplaceEntity:
		act.Type = localtable.ActionUpsertReplace
	case reqclass.InsertOrMergeEntity:
		act.Type = localtable.ActionUpsertMerge
	default:
		switch c.Method {
		case http.MethodDelete:
			return act, c.Op, errInvalidURI("A delete must address an entity.")
		case http.MethodPost:
			return act, c.Op, errInvalidURI("An insert must address a table.")
		case http.MethodPut, http.MethodPatch, "MERGE":
			return act, c.Op, errInvalidURI("An update must address an entity.")
		}
		return act, c.Op, wireError(codeMethodNotAllowed, "The method "+c.Method+" is not allowed in a batch.")
	}
	e, hasKeys, err := entityjson.DecodeRequest(bytes.TrimSpace(sr.op.Body), c.Resource != reqclass.Entity)
	if err != nil {
		return act, c.Op, err
	}
	if !hasKeys {
		e.PartitionKey, e.RowKey = c.PartitionKey, c.RowKey
	}
	act.Entity, act.IfMatch = e, ifMatch
	return act, c.Op, nil
}

// serveBatch serves Entity Group Transaction.
func (rc *reqCtx) serveBatch() {
	req, err := batch.ReadRequest(rc.r.Body, rc.r.Header.Get("Content-Type"))
	var be *batch.Error
	switch {
	case errors.As(err, &be) && be.Index >= 0:
		// A rule broken at an operation fails the changeset, within a 202.
		rc.sendBatch(&batch.Reply{Changeset: true, Responses: []batch.Response{
			rc.changesetFailure(be.Index, be.Operation, fromBatchError(be))}})
		return
	case be != nil:
		rc.fail(fromBatchError(be))
		return
	case err != nil:
		rc.fail(errInvalidInput("The request body could not be read: " + err.Error()))
		return
	}
	ops := make([]subRequest, len(req.Operations))
	for i := range req.Operations {
		if ops[i], err = resolve(&req.Operations[i]); err != nil {
			rc.fail(err)
			return
		}
	}
	rep := &batch.Reply{Changeset: req.Changeset}
	if !req.Changeset {
		rep.Responses = []batch.Response{rc.batchQuery(&ops[0])}
		rc.sendBatch(rep)
		return
	}
	if rep.Responses, err = rc.applyChangeset(ops); err != nil {
		rc.fail(err)
		return
	}
	for range req.ExtraChangesets {
		rep.Rejected = append(rep.Rejected, rc.changesetFailure(-1, nil, fromBatchError(batch.ErrExtraChangeset)))
	}
	rc.sendBatch(rep)
}

// applyChangeset applies ops as one transaction and returns their
// responses, or the failing operation's response alone. It returns the
// errors that fail the whole request instead: authorization and
// internal failures.
func (rc *reqCtx) applyChangeset(ops []subRequest) ([]batch.Response, error) {
	fail := func(i int, op *batch.Operation, err error) ([]batch.Response, error) {
		return []batch.Response{rc.changesetFailure(i, op, err)}, nil
	}
	table := ops[0].cls.Table
	actions := make([]localtable.Action, len(ops))
	for i := range ops {
		if !strings.EqualFold(ops[i].cls.Table, table) {
			return fail(i, ops[i].op, errInvalidInput("All operations of a batch must act on one table."))
		}
		act, o, err := ops[i].action()
		if err != nil {
			return fail(i, ops[i].op, err)
		}
		if err := rc.authorize(o, table, act.Entity.PartitionKey, act.Entity.RowKey); err != nil {
			return nil, err
		}
		actions[i] = act
	}
	tags, err := rc.acct.data.Table(table).Transact(rc.r.Context(), actions)
	if err != nil {
		var te *localtable.TransactionError
		switch {
		case errors.As(err, &te) && te.Err.Code == localtable.CodeTableNotFound:
			return fail(te.Index, nil, te.Err)
		case errors.As(err, &te):
			var op *batch.Operation
			if te.Index >= 0 && te.Index < len(ops) {
				op = ops[te.Index].op
			}
			return fail(te.Index, op, te.Err)
		case HTTPStatus(asWireError(err).Code) < 500:
			return fail(-1, nil, err)
		}
		return nil, err
	}
	resps := make([]batch.Response, len(ops))
	base := rc.baseURL()
	for i := range ops {
		op, act, tag := ops[i].op, &actions[i], string(tags[i])
		switch act.Type {
		case localtable.ActionDelete:
			resps[i] = batch.Response{Status: http.StatusNoContent, Header: batch.NoContentHeader(op.ContentID(), "", "", "")}
			continue
		case localtable.ActionInsert:
		default:
			resps[i] = batch.Response{Status: http.StatusNoContent, Header: batch.NoContentHeader(op.ContentID(), "", "", tag)}
			continue
		}
		var locBuf [256]byte
		loc := string(appendEntityPath(append(append(locBuf[:0], base...), '/'), table, act.Entity.PartitionKey, act.Entity.RowKey))
		pref := preference(op)
		if pref == "return-no-content" {
			resps[i] = batch.Response{Status: http.StatusNoContent, Header: batch.NoContentHeader(op.ContentID(), pref, loc, tag)}
			continue
		}
		level, err := parseFormat(firstNonEmpty(ops[i].cls.Query.Get("$format"), op.Header.Get("Accept")))
		if err != nil {
			level = metaMinimal
		}
		e := act.Entity
		e.ETag = tags[i]
		e.Timestamp, _ = tags[i].Time()
		resps[i] = batch.Response{Status: http.StatusCreated,
			Header: batch.ContentHeader(level.contentType(), op.ContentID(), pref, loc, tag),
			Body:   appendEntity(nil, &e, rc.encodeOpts(level, table, nil), true)}
	}
	return resps, nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// changesetFailure is a failed changeset's one response: the error of
// the operation at index, its message prefixed with "index:" as the
// service does ("2:The specified entity already exists."); no prefix
// for index -1. op is the failing operation, whose Content-ID and
// applied preference the response carries; nil for failures of the
// changeset as a whole (a missing table, too many operations), which the
// service answers with fewer headers.
func (rc *reqCtx) changesetFailure(index int, op *batch.Operation, err error) batch.Response {
	e := asWireError(err)
	prefix := ""
	if index >= 0 {
		prefix = strconv.Itoa(index) + ":"
	}
	h := batch.ChangesetErrorHeader(metaMinimal.contentType())
	if op != nil {
		h = batch.OperationErrorHeader(op.ContentID(), preference(op), metaMinimal.contentType())
	}
	return batch.Response{Status: HTTPStatus(e.Code), Header: h, Body: errorBody(e, prefix, rc.id, rc.start)}
}

// batchQuery answers a GET sent alone in a batch (retrieve an entity, or
// query) as the same GET outside a batch would be answered.
func (rc *reqCtx) batchQuery(sr *subRequest) batch.Response {
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	inner := &reqCtx{s: rc.s, w: rec, id: rc.id, start: rc.start, version: rc.version, acct: rc.acct, acctName: rc.acctName, grant: rc.grant,
		query: sr.cls.Query, method: http.MethodGet, cls: sr.cls,
		// The service answers the batch's only operation failing with
		// the index prefix of a changeset's failures:
		// "0:The specified resource does not exist."
		errPrefix: "0:"}
	inner.r = (&http.Request{Method: http.MethodGet, Header: sr.op.Header.HTTPHeader(), Host: rc.r.Host, TLS: rc.r.TLS,
		URL: &url.URL{Path: "/", RawQuery: sr.cls.Query.Encode()}, Body: http.NoBody}).WithContext(rc.r.Context())
	inner.dispatch()
	got := rec.Header()
	if rec.code >= 400 {
		return batch.Response{Status: rec.code, Header: batch.OperationErrorHeader(sr.op.ContentID(), "", metaMinimal.contentType()), Body: rec.body.Bytes()}
	}
	var cont []batch.HeaderField
	for _, n := range []string{"x-ms-continuation-NextPartitionKey", "x-ms-continuation-NextRowKey", "x-ms-continuation-NextTableName"} {
		if v := got.Get(n); v != "" {
			cont = append(cont, batch.HeaderField{Name: n, Value: v})
		}
	}
	return batch.Response{Status: rec.code, Body: rec.body.Bytes(),
		Header: batch.ContentHeader(got.Get("Content-Type"), sr.op.ContentID(), "", "", got.Get("ETag"), cont...)}
}

// recorder is the http.ResponseWriter of an operation answered inside a
// batch: it keeps the status, headers and body for the batch response.
type recorder struct {
	header http.Header
	code   int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// sendBatch answers 202 Accepted with rep.
func (rc *reqCtx) sendBatch(rep *batch.Reply) {
	ct, b, err := batch.EncodeResponse(rep, "")
	if err != nil {
		rc.fail(errInternal("The batch response could not be written: " + err.Error()))
		return
	}
	h := rc.w.Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	rc.writeHeader(http.StatusAccepted)
	rc.w.Write(b)
}
