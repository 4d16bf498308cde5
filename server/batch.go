package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/localtable/localtable"
)

// This file serves entity group transactions, POST /{acct}/$batch
// (PROTOCOL.md §6): a multipart/mixed body holding one changeset of
// writes, or one query alone. It is parsed leniently, since the SDKs frame
// it differently, and applied through Table.Transact.

// subRequest is one operation of a batch.
type subRequest struct {
	method string
	res    resource
	query  url.Values
	header http.Header
	body   []byte
}

// maxBatchParts bounds the parts read, before Transact's own limit of 100.
const maxBatchParts = 1000

func errBatch(msg string) *localtable.Error {
	return errInvalidInput("The batch request body is malformed: " + msg)
}

// parseBatch reads a $batch body: its requests, and whether they came in
// a changeset.
func parseBatch(body []byte, contentType string) ([]subRequest, bool, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return nil, false, errBatch("the Content-Type must be multipart/mixed with a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var reqs []subRequest
	changeset := false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, errBatch(err.Error())
		}
		pmt, pparams, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil {
			return nil, false, errBatch("a part has no valid Content-Type")
		}
		switch {
		case strings.HasPrefix(pmt, "multipart/"):
			if changeset || len(reqs) > 0 || pparams["boundary"] == "" {
				return nil, false, errBatch("a batch holds one changeset")
			}
			changeset = true
			cr := multipart.NewReader(part, pparams["boundary"])
			for {
				p, err := cr.NextPart()
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, false, errBatch(err.Error())
				}
				if len(reqs) >= maxBatchParts {
					return nil, false, errBatch("too many operations")
				}
				req, err := readSubRequest(p)
				if err != nil {
					return nil, false, err
				}
				reqs = append(reqs, req)
			}
		case pmt == "application/http":
			if changeset || len(reqs) > 0 {
				return nil, false, errBatch("a query can only be alone in a batch, outside a changeset")
			}
			req, err := readSubRequest(part)
			if err != nil {
				return nil, false, err
			}
			reqs = append(reqs, req)
		default:
			return nil, false, errBatch("unexpected part type " + quoteOData(pmt))
		}
	}
	if len(reqs) == 0 {
		return nil, false, errBatch("it holds no operation")
	}
	return reqs, changeset, nil
}

// readSubRequest reads an application/http part: a request line, headers
// and a body (to the end of the part: the SDKs send no Content-Length).
func readSubRequest(r io.Reader) (subRequest, error) {
	var sr subRequest
	br := bufio.NewReader(r)
	tp := textproto.NewReader(br)
	var line string
	for {
		l, err := tp.ReadLine()
		if err != nil {
			return sr, errBatch("an operation has no request line")
		}
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	f := strings.Fields(line)
	if len(f) < 2 || len(f) > 3 {
		return sr, errBatch("bad request line " + quoteOData(line))
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil && !(err == io.EOF && hdr != nil) {
		return sr, errBatch("bad operation headers: " + err.Error())
	}
	body, err := io.ReadAll(br)
	if err != nil {
		return sr, errBatch(err.Error())
	}
	sr.header = http.Header(hdr)
	sr.body = bytes.TrimSpace(body)
	sr.method = strings.ToUpper(f[0])
	if m := sr.header.Get("X-HTTP-Method"); m != "" && sr.method == http.MethodPost {
		sr.method = strings.ToUpper(strings.TrimSpace(m))
	}
	u, err := url.Parse(f[1])
	if err != nil {
		return sr, errBatch("bad operation URL " + quoteOData(f[1]))
	}
	if sr.query, err = parseQuery(u.RawQuery); err != nil {
		return sr, errBatch("bad operation query " + quoteOData(u.RawQuery))
	}
	p := u.EscapedPath()
	seg, err := url.PathUnescape(p[strings.LastIndexByte(p, '/')+1:])
	if err != nil {
		return sr, errBatch("bad operation URL " + quoteOData(f[1]))
	}
	if sr.res, err = parseResource(seg, true); err != nil {
		return sr, err
	}
	return sr, nil
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
	reqs, changeset, err := parseBatch(body, rc.r.Header.Get("Content-Type"))
	if err != nil {
		rc.fail(err)
		return
	}
	if !changeset {
		rc.batchQuery(reqs[0])
		return
	}
	if len(reqs) > localtable.MaxTransactionActions {
		// The service answers at the index of the 100th operation.
		rc.batchFailed(localtable.MaxTransactionActions-1, errInvalidInput("The batch request operation exceeds the maximum 100 changes per change set."))
		return
	}
	table := reqs[0].res.table
	actions := make([]localtable.Action, len(reqs))
	for i := range reqs {
		if !strings.EqualFold(reqs[i].res.table, table) {
			rc.batchFailed(i, errInvalidInput("All operations of a batch must act on one table."))
			return
		}
		act, o, err := reqs[i].action()
		if err != nil {
			rc.batchFailed(i, err)
			return
		}
		if err := rc.authorize(o, table, act.Entity.PartitionKey, act.Entity.RowKey); err != nil {
			rc.fail(err)
			return
		}
		actions[i] = act
	}
	tags, err := rc.acct.data.Table(table).Transact(rc.r.Context(), actions)
	if err != nil {
		var te *localtable.TransactionError
		if errors.As(err, &te) {
			rc.batchFailed(te.Index, te.Err)
		} else if e := asWireError(err); e.StatusCode < 500 {
			rc.batchFailed(-1, e)
		} else {
			rc.fail(err)
		}
		return
	}
	var bw batchWriter
	bw.begin(true)
	for i, sr := range reqs {
		act := &actions[i]
		h := http.Header{}
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		h.Set("DataServiceVersion", "3.0;")
		if act.Type == localtable.ActionDelete {
			bw.response(http.StatusNoContent, h, nil)
			continue
		}
		h.Set("ETag", string(tags[i]))
		if act.Type != localtable.ActionInsert {
			bw.response(http.StatusNoContent, h, nil)
			continue
		}
		loc := rc.baseURL() + "/" + entityPath(table, act.Entity.PartitionKey, act.Entity.RowKey)
		h.Set("Location", loc)
		if pref := (&reqCtx{r: &http.Request{Header: sr.header}}).preference(); pref == "return-no-content" {
			h.Set("Preference-Applied", pref)
			h.Set("DataServiceId", loc)
			bw.response(http.StatusNoContent, h, nil)
			continue
		}
		level, err := parseFormat(firstNonEmpty(sr.query.Get("$format"), sr.header.Get("Accept")))
		if err != nil {
			level = metaMinimal
		}
		e := act.Entity
		e.ETag = tags[i]
		e.Timestamp, _ = tags[i].Time()
		h.Set("Content-Type", level.contentType())
		bw.response(http.StatusCreated, h, appendEntity(nil, &e, rc.encodeOpts(level, table, nil), true))
	}
	rc.sendBatch(&bw)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// batchFailed answers a failed changeset: 202, holding only the failing
// operation's response, its message prefixed with "index:".
func (rc *reqCtx) batchFailed(index int, err error) {
	e := asWireError(err)
	prefix := ""
	if index >= 0 {
		prefix = strconv.Itoa(index) + ":"
	}
	h := http.Header{}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("DataServiceVersion", "3.0;")
	h.Set("Content-Type", metaMinimal.contentType())
	var bw batchWriter
	bw.begin(true)
	bw.response(e.StatusCode, h, errorBody(e, prefix, rc.id, rc.start))
	rc.sendBatch(&bw)
}

// batchQuery answers a batch holding one GET, outside a changeset.
func (rc *reqCtx) batchQuery(sr subRequest) {
	if sr.method != http.MethodGet {
		rc.fail(errBatch("a write must be inside a changeset"))
		return
	}
	rec := httptest.NewRecorder()
	inner := &reqCtx{s: rc.s, w: rec, id: rc.id, start: rc.start, acct: rc.acct, grant: rc.grant,
		query: sr.query, method: http.MethodGet}
	inner.r = (&http.Request{Method: http.MethodGet, Header: sr.header, Host: rc.r.Host, TLS: rc.r.TLS,
		URL: &url.URL{Path: "/", RawQuery: sr.query.Encode()}, Body: http.NoBody}).WithContext(rc.r.Context())
	inner.serveResource(sr.res)
	var bw batchWriter
	bw.begin(false)
	h := rec.Header().Clone()
	h.Del("Date")
	h.Del("x-ms-request-id")
	h.Del("x-ms-version")
	bw.response(rec.Code, h, rec.Body.Bytes())
	rc.sendBatch(&bw)
}

func (rc *reqCtx) sendBatch(bw *batchWriter) {
	b := bw.end()
	h := rc.w.Header()
	h.Set("Content-Type", "multipart/mixed; boundary="+bw.batch)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("DataServiceVersion", "3.0;")
	rc.writeHeader(http.StatusAccepted)
	rc.w.Write(b)
}

// batchWriter writes a batch response as aztables requires: the body
// starts with "--batchresponse_…", and each inner response ends with a
// blank line and one more CRLF before the next boundary.
type batchWriter struct {
	buf       bytes.Buffer
	batch     string
	changeset string
}

func (bw *batchWriter) begin(changeset bool) {
	bw.batch = "batchresponse_" + newRequestID()
	bw.buf.WriteString("--" + bw.batch + "\r\n")
	if changeset {
		bw.changeset = "changesetresponse_" + newRequestID()
		bw.buf.WriteString("Content-Type: multipart/mixed; boundary=" + bw.changeset + "\r\n\r\n")
	}
}

func (bw *batchWriter) response(status int, h http.Header, body []byte) {
	if bw.changeset != "" {
		bw.buf.WriteString("--" + bw.changeset + "\r\n")
	}
	bw.buf.WriteString("Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
	bw.buf.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	if body != nil {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	h.Write(&bw.buf)
	bw.buf.WriteString("\r\n")
	bw.buf.Write(body)
	bw.buf.WriteString("\r\n")
}

func (bw *batchWriter) end() []byte {
	if bw.changeset != "" {
		bw.buf.WriteString("--" + bw.changeset + "--\r\n")
	}
	bw.buf.WriteString("--" + bw.batch + "--\r\n")
	return bw.buf.Bytes()
}
