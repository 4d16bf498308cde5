package server

import (
	"bufio"
	"bytes"
	"errors"
	"mime"
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
// writes, or one query alone, applied through Table.Transact.
//
// The wire format lives in a few functions: splitMultipart and
// readSubRequest read a request body; batchWriter and the *Headers
// functions write the response, with the service's exact header spelling
// and order (the JS SDK matches "ETag: " case-sensitively).

// subRequest is one operation of a batch.
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

// maxBatchParts bounds the operations read, before the limit of 100.
const maxBatchParts = 1000

func errBatch(msg string) *localtable.Error {
	return errInvalidInput("The batch request body is malformed: " + msg)
}

// parseBatch reads a $batch body sent with contentType.
func parseBatch(body []byte, contentType string) (*batchRequest, error) {
	if strings.TrimSpace(contentType) == "" {
		return nil, wireError(codeMissingRequiredHeader, http.StatusBadRequest, "An HTTP header that's mandatory for this request is not specified.")
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return nil, wireError(codeInvalidHeaderValue, http.StatusBadRequest, "The value for one of the HTTP headers is not in the correct format.")
	}
	parts, err := splitMultipart(body, params["boundary"])
	if err != nil {
		return nil, err
	}
	b := &batchRequest{}
	for _, p := range parts {
		pmt, pparams, err := mime.ParseMediaType(p.header.Get("Content-Type"))
		if err != nil {
			return nil, errBatch("a part has no valid Content-Type")
		}
		switch pmt {
		case "multipart/mixed":
			if len(b.ops) > 0 && !b.changeset {
				return nil, errBatch("a query can only be alone in a batch, outside a changeset")
			}
			if b.changeset {
				b.extra++
				continue
			}
			if pparams["boundary"] == "" {
				return nil, errBatch("a changeset has no boundary")
			}
			b.changeset = true
			ops, err := splitMultipart(p.body, pparams["boundary"])
			if err != nil {
				return nil, err
			}
			for _, op := range ops {
				omt, _, err := mime.ParseMediaType(op.header.Get("Content-Type"))
				switch {
				case err != nil:
					return nil, errBatch("an operation has no valid Content-Type")
				case strings.HasPrefix(omt, "multipart/"):
					return nil, errBatch("a changeset cannot hold another changeset")
				case omt != "application/http":
					return nil, errBatch("unexpected operation type " + quoteOData(omt))
				case len(b.ops) >= maxBatchParts:
					return nil, errBatch("too many operations")
				}
				sr, err := readSubRequest(op.body)
				if err != nil {
					return nil, err
				}
				b.ops = append(b.ops, sr)
			}
			if len(b.ops) == 0 {
				return nil, errBatch("a changeset holds no operation")
			}
		case "application/http":
			if len(b.ops) > 0 {
				return nil, errBatch("a query can only be alone in a batch, outside a changeset")
			}
			sr, err := readSubRequest(p.body)
			if err != nil {
				return nil, err
			}
			b.ops = append(b.ops, sr)
		default:
			return nil, errBatch("unexpected part type " + quoteOData(pmt))
		}
	}
	if len(b.ops) == 0 {
		return nil, errBatch("it holds no operation")
	}
	return b, nil
}

// mimePart is one body part of a multipart body.
type mimePart struct {
	header textproto.MIMEHeader
	body   []byte
}

// splitMultipart splits a multipart body at its boundary's delimiter
// lines. Like the service's reader it takes CRLF or LF line endings and
// ignores the preamble and epilogue; it also takes a body ending with an
// opening delimiter and nothing after it, as @azure/data-tables 12 sent.
// A body with no delimiter, or whose last part is cut off before the
// closing delimiter, is malformed.
func splitMultipart(body []byte, boundary string) ([]mimePart, error) {
	open := "--" + boundary
	closing := open + "--"
	var parts []mimePart
	start := -1 // where the current part's content starts; -1 before the first delimiter
	for off := 0; off < len(body); {
		next := len(body)
		if i := bytes.IndexByte(body[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		line := string(bytes.TrimRight(body[off:next], " \t\r\n"))
		if line == open || line == closing {
			if start >= 0 {
				if len(parts) >= maxBatchParts {
					return nil, errBatch("too many parts")
				}
				p, err := readPart(trimLineEnd(body[start:off]))
				if err != nil {
					return nil, err
				}
				parts = append(parts, p)
			}
			if line == closing {
				if start < 0 {
					return nil, errBatch("it closes before its first part")
				}
				return parts, nil
			}
			start = next
		}
		off = next
	}
	if start < 0 {
		return nil, errBatch("no delimiter of boundary " + quoteOData(boundary))
	}
	if len(bytes.TrimSpace(body[start:])) > 0 {
		return nil, errBatch("it ends without the closing delimiter of boundary " + quoteOData(boundary))
	}
	return parts, nil
}

// trimLineEnd drops one trailing CRLF or LF: the line end before a
// delimiter belongs to the delimiter.
func trimLineEnd(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// readPart reads a body part: MIME headers, a blank line, the content.
// Headers running to the end make a part with no content.
func readPart(b []byte) (mimePart, error) {
	head, content := b, []byte(nil)
	for off := 0; off < len(b); {
		next := len(b)
		if i := bytes.IndexByte(b[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		if len(bytes.TrimRight(b[off:next], "\r\n")) == 0 {
			head, content = b[:off], b[next:]
			break
		}
		off = next
	}
	hdr, err := readHeaders(head)
	if err != nil {
		return mimePart{}, err
	}
	return mimePart{header: hdr, body: content}, nil
}

// readHeaders parses header lines, with or without their last line end.
func readHeaders(head []byte) (textproto.MIMEHeader, error) {
	buf := make([]byte, 0, len(head)+4)
	buf = append(buf, head...)
	if len(buf) > 0 && buf[len(buf)-1] != '\n' {
		buf = append(buf, "\r\n"...)
	}
	buf = append(buf, "\r\n"...)
	hdr, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(buf))).ReadMIMEHeader()
	if err != nil {
		return nil, errBatch("bad part headers: " + err.Error())
	}
	return hdr, nil
}

// readSubRequest reads an application/http part: a request line, headers
// and a body (to the end of the part: the SDKs send no Content-Length).
func readSubRequest(b []byte) (subRequest, error) {
	var sr subRequest
	b = bytes.TrimLeft(b, " \t\r\n")
	next := len(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		next = i + 1
	}
	line := strings.TrimSpace(string(b[:next]))
	f := strings.Fields(line)
	if len(f) < 2 || len(f) > 3 || !isToken(f[0]) || (len(f) == 3 && !strings.HasPrefix(f[2], "HTTP/")) {
		return sr, errBatch("bad request line " + quoteOData(line))
	}
	p, err := readPart(b[next:])
	if err != nil {
		return sr, err
	}
	sr.header = http.Header(p.header)
	sr.body = bytes.TrimSpace(p.body)
	sr.contentID = strings.TrimSpace(sr.header.Get("Content-ID"))
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
	path := u.EscapedPath()
	seg, err := url.PathUnescape(path[strings.LastIndexByte(path, '/')+1:])
	if err != nil {
		return sr, errBatch("bad operation URL " + quoteOData(f[1]))
	}
	if sr.res, err = parseResource(seg, true); err != nil {
		return sr, err
	}
	return sr, nil
}

// isToken reports whether s is a plain method name.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return s != ""
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
	bw := newBatchWriter()
	if !b.changeset {
		if err := rc.batchQuery(bw, &b.ops[0]); err != nil {
			rc.fail(err)
			return
		}
		rc.sendBatch(bw)
		return
	}
	bw.openChangeset()
	if err := rc.applyChangeset(bw, b.ops); err != nil {
		rc.fail(err)
		return
	}
	bw.closeChangeset()
	for i := 0; i < b.extra; i++ {
		bw.openChangeset()
		bw.response(http.StatusBadRequest, batchErrorHeaders(),
			errorBody(errInvalidInput("One of the request inputs is not valid. A batch holds one changeset: this one was not processed."), "", rc.id, rc.start))
		bw.closeChangeset()
	}
	rc.sendBatch(bw)
}

// applyChangeset applies ops as one transaction and writes their
// responses into bw, or the failing operation's response alone. It
// returns the errors that fail the whole request instead: authorization
// and internal failures.
func (rc *reqCtx) applyChangeset(bw *batchWriter, ops []subRequest) error {
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
			bw.response(http.StatusNoContent, noContentHeaders(sr.contentID, "", "", ""), nil)
			continue
		case localtable.ActionInsert:
		default:
			bw.response(http.StatusNoContent, noContentHeaders(sr.contentID, "", "", tags[i]), nil)
			continue
		}
		loc := rc.baseURL() + "/" + entityPath(table, act.Entity.PartitionKey, act.Entity.RowKey)
		pref := sr.preference()
		if pref == "return-no-content" {
			bw.response(http.StatusNoContent, noContentHeaders(sr.contentID, pref, loc, tags[i]), nil)
			continue
		}
		level, err := parseFormat(firstNonEmpty(sr.query.Get("$format"), sr.header.Get("Accept")))
		if err != nil {
			level = metaMinimal
		}
		e := act.Entity
		e.ETag = tags[i]
		e.Timestamp, _ = tags[i].Time()
		bw.response(http.StatusCreated, contentHeaders(level.contentType(), sr.contentID, pref, loc, tags[i], nil),
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
func (rc *reqCtx) changesetFailed(bw *batchWriter, ops []subRequest, index int, whole bool, err error) {
	e := asWireError(err)
	prefix := ""
	if index >= 0 {
		prefix = strconv.Itoa(index) + ":"
	}
	h := batchErrorHeaders()
	if !whole && index >= 0 && index < len(ops) {
		h = opErrorHeaders(ops[index].contentID, ops[index].preference())
	}
	bw.response(e.StatusCode, h, errorBody(e, prefix, rc.id, rc.start))
}

// batchQuery writes into bw the answer to a batch holding one operation
// outside a changeset, a GET (retrieve an entity, or query). It returns
// an error for a write, which must be inside a changeset.
func (rc *reqCtx) batchQuery(bw *batchWriter, sr *subRequest) error {
	if sr.method != http.MethodGet {
		return errBatch("a write must be inside a changeset")
	}
	rec := httptest.NewRecorder()
	inner := &reqCtx{s: rc.s, w: rec, id: rc.id, start: rc.start, version: rc.version, acct: rc.acct, acctName: rc.acctName, grant: rc.grant,
		query: sr.query, method: http.MethodGet}
	inner.r = (&http.Request{Method: http.MethodGet, Header: sr.header, Host: rc.r.Host, TLS: rc.r.TLS,
		URL: &url.URL{Path: "/", RawQuery: sr.query.Encode()}, Body: http.NoBody}).WithContext(rc.r.Context())
	inner.serveResource(sr.res)
	got := rec.Header()
	if rec.Code >= 400 {
		bw.response(rec.Code, opErrorHeaders(sr.contentID, ""), rec.Body.Bytes())
		return nil
	}
	var cont []subHeader
	for _, n := range []string{"x-ms-continuation-NextPartitionKey", "x-ms-continuation-NextRowKey", "x-ms-continuation-NextTableName"} {
		if v := got.Get(n); v != "" {
			cont = append(cont, subHeader{n, v})
		}
	}
	bw.response(rec.Code, contentHeaders(got.Get("Content-Type"), sr.contentID, "", "", localtable.ETag(got.Get("ETag")), cont), rec.Body.Bytes())
	return nil
}

func (rc *reqCtx) sendBatch(bw *batchWriter) {
	b := bw.end()
	h := rc.w.Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Type", "multipart/mixed; boundary="+bw.batch)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	rc.writeHeader(http.StatusAccepted)
	rc.w.Write(b)
}

// subHeader is one header line of a sub-response, written as spelled.
type subHeader struct{ name, value string }

// subHeaders are a sub-response's headers, in order.
type subHeaders []subHeader

// add appends a header unless value is empty.
func (h *subHeaders) add(name, value string) {
	if value != "" {
		*h = append(*h, subHeader{name, value})
	}
}

// The service writes a sub-response's headers in one of four orders,
// which these functions reproduce.

// noContentHeaders are those of a changeset operation answered 204: an
// update, upsert or delete (loc empty; etag empty for a delete), or an
// insert with Prefer: return-no-content (loc its entity's URL).
func noContentHeaders(contentID, applied, loc string, etag localtable.ETag) subHeaders {
	var h subHeaders
	h.add("Content-ID", contentID)
	h.add("X-Content-Type-Options", "nosniff")
	h.add("Cache-Control", "no-cache")
	h.add("Preference-Applied", applied)
	if loc != "" {
		h.add("DataServiceVersion", "3.0;")
	} else {
		h.add("DataServiceVersion", "1.0;")
	}
	h.add("Location", loc)
	h.add("DataServiceId", loc)
	h.add("ETag", string(etag))
	return h
}

// contentHeaders are those of a response with a body: an insert answered
// 201 with its entity, or a retrieve or query outside a changeset (extra
// holds a query's continuation headers).
func contentHeaders(contentType, contentID, applied, loc string, etag localtable.ETag, extra []subHeader) subHeaders {
	var h subHeaders
	h.add("DataServiceVersion", "3.0;")
	h.add("Content-Type", contentType)
	h.add("Content-ID", contentID)
	h.add("X-Content-Type-Options", "nosniff")
	h.add("Cache-Control", "no-cache")
	h.add("Preference-Applied", applied)
	h.add("Location", loc)
	for _, x := range extra {
		h.add(x.name, x.value)
	}
	h.add("ETag", string(etag))
	return h
}

// opErrorHeaders are those of an operation's error.
func opErrorHeaders(contentID, applied string) subHeaders {
	var h subHeaders
	h.add("Content-ID", contentID)
	h.add("X-Content-Type-Options", "nosniff")
	h.add("Cache-Control", "no-cache")
	h.add("Preference-Applied", applied)
	h.add("DataServiceVersion", "3.0;")
	h.add("Content-Type", metaMinimal.contentType())
	return h
}

// batchErrorHeaders are those of an error of the changeset as a whole.
func batchErrorHeaders() subHeaders {
	var h subHeaders
	h.add("X-Content-Type-Options", "nosniff")
	h.add("DataServiceVersion", "3.0;")
	h.add("Content-Type", metaMinimal.contentType())
	return h
}

// batchWriter writes a batch response as the service does and aztables
// requires: the body starts with "--batchresponse_…", and each inner
// response ends with a line end before the next delimiter (a blank line
// after a response with no body).
type batchWriter struct {
	buf       bytes.Buffer
	batch     string // the batch boundary
	changeset string // the open changeset's boundary, if any
}

func newBatchWriter() *batchWriter {
	return &batchWriter{batch: "batchresponse_" + newRequestID()}
}

// openChangeset starts a changeset part; responses go into it until
// closeChangeset.
func (bw *batchWriter) openChangeset() {
	bw.changeset = "changesetresponse_" + newRequestID()
	bw.buf.WriteString("--" + bw.batch + "\r\nContent-Type: multipart/mixed; boundary=" + bw.changeset + "\r\n\r\n")
}

func (bw *batchWriter) closeChangeset() {
	bw.buf.WriteString("--" + bw.changeset + "--\r\n")
	bw.changeset = ""
}

// response writes one application/http part. Header values holding a
// line break are dropped.
func (bw *batchWriter) response(status int, h subHeaders, body []byte) {
	boundary := bw.batch
	if bw.changeset != "" {
		boundary = bw.changeset
	}
	bw.buf.WriteString("--" + boundary + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
	bw.buf.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	for _, x := range h {
		if strings.ContainsAny(x.value, "\r\n") {
			continue
		}
		bw.buf.WriteString(x.name + ": " + x.value + "\r\n")
	}
	bw.buf.WriteString("\r\n")
	bw.buf.Write(body)
	bw.buf.WriteString("\r\n")
}

// end closes the body and returns it.
func (bw *batchWriter) end() []byte {
	if bw.changeset != "" {
		bw.closeChangeset()
	}
	bw.buf.WriteString("--" + bw.batch + "--\r\n")
	return bw.buf.Bytes()
}
