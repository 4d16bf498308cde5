package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/batch"
)

// This file serves entity group transactions, POST /{acct}/$batch
// (PROTOCOL.md §6): a multipart/mixed body holding one changeset of
// writes, or one query alone, applied through Table.Transact.
//
// The wire format lives in package batch: batch.Parse reads a request
// body; batch.Writer and the *Header functions write the response, with
// the service's exact header spelling and order (the JS SDK matches
// "ETag: " case-sensitively).

// subRequest is one operation of a batch, its URL resolved.
type subRequest struct {
	method    string
	res       resource
	query     url.Values
	header    http.Header
	body      []byte
	contentID string // a Content-ID among the operation's own headers, echoed back
}

// batchRequest is a parsed $batch body.
type batchRequest struct {
	ops       []subRequest // the changeset's operations, or the one query
	changeset bool
	// extra counts the changesets after the first: the service processes
	// the first one and rejects the others with 400.
	extra int
}

// parseBatch reads a $batch body sent with contentType.
func parseBatch(body []byte, contentType string) (*batchRequest, error) {
	req, err := batch.Parse(body, contentType)
	if err != nil {
		var be *batch.Error
		if errors.As(err, &be) {
			return nil, wireError(localtable.ErrorCode(be.Code), be.Status, be.Message)
		}
		return nil, err
	}
	b := &batchRequest{changeset: req.Changeset, extra: req.Extra}
	for _, op := range req.Operations {
		sr, err := resolveOperation(op)
		if err != nil {
			return nil, err
		}
		b.ops = append(b.ops, sr)
	}
	return b, nil
}

func errBatch(msg string) *localtable.Error {
	return errInvalidInput("The batch request body is malformed: " + msg)
}

// resolveOperation reads an operation's URL.
func resolveOperation(op batch.Operation) (subRequest, error) {
	sr := subRequest{method: op.Method, header: op.Header, body: op.Body, contentID: op.ContentID}
	u, err := url.Parse(op.URL)
	if err != nil {
		return sr, errBatch("bad operation URL " + quoteOData(op.URL))
	}
	if sr.query, err = parseQuery(u.RawQuery); err != nil {
		return sr, errBatch("bad operation query " + quoteOData(u.RawQuery))
	}
	path := u.EscapedPath()
	seg, err := url.PathUnescape(path[strings.LastIndexByte(path, '/')+1:])
	if err != nil {
		return sr, errBatch("bad operation URL " + quoteOData(op.URL))
	}
	if sr.res, err = parseResource(seg, true); err != nil {
		return sr, err
	}
	return sr, nil
}

// preference returns the Prefer value the service applies to the
// operation: only inserts honour it.
func (sr *subRequest) preference() string {
	if sr.method != http.MethodPost {
		return ""
	}
	return (&reqCtx{r: &http.Request{Header: sr.header}}).preference()
}

// action turns a changeset operation into a transaction action; keys in
// the body win over keys in the URL, which the SDKs do not quote-double.
func (sr *subRequest) action() (localtable.Action, op, error) {
	var act localtable.Action
	ifMatch := localtable.ETag(sr.header.Get("If-Match"))
	if sr.method == http.MethodDelete {
		if sr.res.kind != resEntity {
			return act, 0, errInvalidURI("A delete must address an entity.")
		}
		if ifMatch == "" {
			ifMatch = localtable.ETagAny
		}
		act = localtable.Action{Type: localtable.ActionDelete, IfMatch: ifMatch,
			Entity: localtable.Entity{PartitionKey: sr.res.pk, RowKey: sr.res.rk}}
		return act, opDelete, nil
	}
	var o op
	switch sr.method {
	case http.MethodPost:
		if sr.res.kind != resTable {
			return act, 0, errInvalidURI("An insert must address a table.")
		}
		act.Type, o = localtable.ActionInsert, opAdd
	case http.MethodPut, http.MethodPatch, "MERGE":
		if sr.res.kind != resEntity {
			return act, 0, errInvalidURI("An update must address an entity.")
		}
		merge := sr.method != http.MethodPut
		switch {
		case ifMatch != "" && merge:
			act.Type, o = localtable.ActionUpdateMerge, opUpdate
		case ifMatch != "":
			act.Type, o = localtable.ActionUpdateReplace, opUpdate
		case merge:
			act.Type, o = localtable.ActionUpsertMerge, opUpsert
		default:
			act.Type, o = localtable.ActionUpsertReplace, opUpsert
		}
	case http.MethodGet:
		return act, 0, errInvalidInput("A query can only be alone in a batch, outside a changeset.")
	default:
		return act, 0, wireError(localtable.CodeMethodNotAllowed, http.StatusMethodNotAllowed, "The method "+sr.method+" is not allowed in a batch.")
	}
	e, hasKeys, err := decodeEntityKeys(sr.body, sr.res.kind != resEntity)
	if err != nil {
		return act, 0, err
	}
	if !hasKeys {
		e.PartitionKey, e.RowKey = sr.res.pk, sr.res.rk
	}
	act.Entity, act.IfMatch = e, ifMatch
	return act, o, nil
}

func (rc *reqCtx) serveBatch() {
	if rc.method != http.MethodPost {
		rc.fail(errMethod(rc.r))
		return
	}
	body, err := rc.readBody(MaxBatchBody)
	if err != nil {
		rc.fail(err)
		return
	}
	b, err := parseBatch(body, rc.r.Header.Get("Content-Type"))
	if err != nil {
		rc.fail(err)
		return
	}
	bw := batch.NewWriter(newRequestID)
	if !b.changeset {
		if err := rc.batchQuery(bw, &b.ops[0]); err != nil {
			rc.fail(err)
			return
		}
		rc.sendBatch(bw)
		return
	}
	bw.OpenChangeset()
	if err := rc.applyChangeset(bw, b.ops); err != nil {
		rc.fail(err)
		return
	}
	bw.CloseChangeset()
	for i := 0; i < b.extra; i++ {
		bw.OpenChangeset()
		bw.Response(http.StatusBadRequest, batch.ChangesetErrorHeader(metaMinimal.contentType()),
			errorBody(errInvalidInput("One of the request inputs is not valid. A batch holds one changeset: this one was not processed."), "", rc.id, rc.start))
		bw.CloseChangeset()
	}
	rc.sendBatch(bw)
}

// applyChangeset applies ops as one transaction and writes their
// responses into bw, or the failing operation's response alone. It
// returns the errors that fail the whole request instead: authorization
// and internal failures.
func (rc *reqCtx) applyChangeset(bw *batch.Writer, ops []subRequest) error {
	if len(ops) > localtable.MaxTransactionActions {
		// The service answers at the index of the 100th operation.
		rc.changesetFailed(bw, ops, localtable.MaxTransactionActions-1, true,
			errInvalidInput("The batch request operation exceeds the maximum 100 changes per change set."))
		return nil
	}
	table := ops[0].res.table
	actions := make([]localtable.Action, len(ops))
	for i := range ops {
		if !strings.EqualFold(ops[i].res.table, table) {
			rc.changesetFailed(bw, ops, i, false, errInvalidInput("All operations of a batch must act on one table."))
			return nil
		}
		act, o, err := ops[i].action()
		if err != nil {
			rc.changesetFailed(bw, ops, i, false, err)
			return nil
		}
		if err := rc.authorize(o, table, act.Entity.PartitionKey, act.Entity.RowKey); err != nil {
			return err
		}
		actions[i] = act
	}
	tags, err := rc.acct.data.Table(table).Transact(rc.r.Context(), actions)
	if err != nil {
		var te *localtable.TransactionError
		switch {
		case errors.As(err, &te):
			rc.changesetFailed(bw, ops, te.Index, te.Err.Code == localtable.CodeTableNotFound, te.Err)
		case asWireError(err).StatusCode < 500:
			rc.changesetFailed(bw, ops, -1, true, err)
		default:
			return err
		}
		return nil
	}
	for i := range ops {
		sr, act := &ops[i], &actions[i]
		switch act.Type {
		case localtable.ActionDelete:
			bw.Response(http.StatusNoContent, batch.NoContentHeader(sr.contentID, "", "", ""), nil)
			continue
		case localtable.ActionInsert:
		default:
			bw.Response(http.StatusNoContent, batch.NoContentHeader(sr.contentID, "", "", string(tags[i])), nil)
			continue
		}
		loc := rc.baseURL() + "/" + entityPath(table, act.Entity.PartitionKey, act.Entity.RowKey)
		pref := sr.preference()
		if pref == "return-no-content" {
			bw.Response(http.StatusNoContent, batch.NoContentHeader(sr.contentID, pref, loc, string(tags[i])), nil)
			continue
		}
		level, err := parseFormat(firstNonEmpty(sr.query.Get("$format"), sr.header.Get("Accept")))
		if err != nil {
			level = metaMinimal
		}
		e := act.Entity
		e.ETag = tags[i]
		e.Timestamp, _ = tags[i].Time()
		bw.Response(http.StatusCreated, batch.ContentHeader(level.contentType(), sr.contentID, pref, loc, string(tags[i]), nil),
			appendEntity(nil, &e, rc.encodeOpts(level, table, nil), true))
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// changesetFailed writes a failed changeset's one response: the error of
// the operation at index, its message prefixed with "index:" as the
// service does ("2:The specified entity already exists."). whole marks
// failures of the request as a whole (a missing table, too many
// operations), which the service answers with fewer headers.
func (rc *reqCtx) changesetFailed(bw *batch.Writer, ops []subRequest, index int, whole bool, err error) {
	e := asWireError(err)
	prefix := ""
	if index >= 0 {
		prefix = strconv.Itoa(index) + ":"
	}
	h := batch.ChangesetErrorHeader(metaMinimal.contentType())
	if !whole && index >= 0 && index < len(ops) {
		h = batch.OperationErrorHeader(ops[index].contentID, ops[index].preference(), metaMinimal.contentType())
	}
	bw.Response(e.StatusCode, h, errorBody(e, prefix, rc.id, rc.start))
}

// batchQuery writes into bw the answer to a batch holding one operation
// outside a changeset, a GET (retrieve an entity, or query). It returns
// an error for a write, which must be inside a changeset.
func (rc *reqCtx) batchQuery(bw *batch.Writer, sr *subRequest) error {
	if sr.method != http.MethodGet {
		return errBatch("a write must be inside a changeset")
	}
	rec := httptest.NewRecorder()
	inner := &reqCtx{s: rc.s, w: rec, id: rc.id, start: rc.start, acct: rc.acct, grant: rc.grant,
		query: sr.query, method: http.MethodGet}
	inner.r = (&http.Request{Method: http.MethodGet, Header: sr.header, Host: rc.r.Host, TLS: rc.r.TLS,
		URL: &url.URL{Path: "/", RawQuery: sr.query.Encode()}, Body: http.NoBody}).WithContext(rc.r.Context())
	inner.serveResource(sr.res)
	got := rec.Header()
	if rec.Code >= 400 {
		bw.Response(rec.Code, batch.OperationErrorHeader(sr.contentID, "", metaMinimal.contentType()), rec.Body.Bytes())
		return nil
	}
	var cont []batch.HeaderField
	for _, n := range []string{"x-ms-continuation-NextPartitionKey", "x-ms-continuation-NextRowKey", "x-ms-continuation-NextTableName"} {
		if v := got.Get(n); v != "" {
			cont = append(cont, batch.HeaderField{Name: n, Value: v})
		}
	}
	bw.Response(rec.Code, batch.ContentHeader(got.Get("Content-Type"), sr.contentID, "", "", got.Get("ETag"), cont), rec.Body.Bytes())
	return nil
}

func (rc *reqCtx) sendBatch(bw *batch.Writer) {
	b := bw.End()
	h := rc.w.Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Type", "multipart/mixed; boundary="+bw.Batch)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	rc.writeHeader(http.StatusAccepted)
	rc.w.Write(b)
}
