package batch

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
)

// Response is the response to one operation, inside a batch response.
type Response struct {
	Status int    // the HTTP status, e.g. 204
	Header Header // in the order written
	// Body is the response body, exactly. It is nil when empty. From
	// ParseResponse it refers to the parsed bytes.
	Body []byte
}

// ContentID returns the response's Content-ID header: the Content-ID of
// the operation it answers.
func (r *Response) ContentID() string {
	return r.Header.Get("Content-ID")
}

// Reply is a $batch response body, mirroring its request.
type Reply struct {
	// Changeset reports whether Responses come in a changeset response;
	// if not, Responses holds the answer to a GET sent alone.
	Changeset bool
	// Responses answer the changeset's operations, one each in order;
	// or, when the changeset failed, the failing operation alone (its
	// error message prefixed "N:" with its index); or the GET.
	Responses []Response
	// Rejected answer the changesets after the first, one each, every
	// one in its own changeset response (see ErrExtraChangeset).
	Rejected []Response
}

// The service writes a response's headers in one of four orders, which
// the *Header functions reproduce; each leaves out the fields whose value
// is empty.

// NoContentHeader returns the header of a changeset operation answered
// 204 No Content: an update, upsert or delete (location empty; etag
// empty for a delete), or an insert with Prefer: return-no-content
// (location its entity's URL, applied "return-no-content").
func NoContentHeader(contentID, applied, location, etag string) Header {
	h := make(Header, 0, 8)
	h.add("Content-ID", contentID)
	h.add("X-Content-Type-Options", "nosniff")
	h.add("Cache-Control", "no-cache")
	h.add("Preference-Applied", applied)
	if location != "" {
		h.add("DataServiceVersion", "3.0;")
	} else {
		h.add("DataServiceVersion", "1.0;")
	}
	h.add("Location", location)
	h.add("DataServiceId", location)
	h.add("ETag", etag)
	return h
}

// ContentHeader returns the header of a response with a body: an insert
// answered 201 Created with its entity, or a GET's answer (extra holds
// a query's continuation headers, written before the ETag).
func ContentHeader(contentType, contentID, applied, location, etag string, extra ...HeaderField) Header {
	h := make(Header, 0, 8+len(extra))
	h.add("DataServiceVersion", "3.0;")
	h.add("Content-Type", contentType)
	h.add("Content-ID", contentID)
	h.add("X-Content-Type-Options", "nosniff")
	h.add("Cache-Control", "no-cache")
	h.add("Preference-Applied", applied)
	h.add("Location", location)
	for _, x := range extra {
		h.add(x.Name, x.Value)
	}
	h.add("ETag", etag)
	return h
}

// OperationErrorHeader returns the header of an operation's error: the
// failing operation of a changeset, or a failed GET.
func OperationErrorHeader(contentID, applied, contentType string) Header {
	h := make(Header, 0, 6)
	h.add("Content-ID", contentID)
	h.add("X-Content-Type-Options", "nosniff")
	h.add("Cache-Control", "no-cache")
	h.add("Preference-Applied", applied)
	h.add("DataServiceVersion", "3.0;")
	h.add("Content-Type", contentType)
	return h
}

// ChangesetErrorHeader returns the header of an error of a changeset as
// a whole (a missing table, too many operations, an extra changeset).
func ChangesetErrorHeader(contentType string) Header {
	h := make(Header, 0, 3)
	h.add("X-Content-Type-Options", "nosniff")
	h.add("DataServiceVersion", "3.0;")
	h.add("Content-Type", contentType)
	return h
}

// EncodeResponse writes rep as the service does, returning the body and
// its Content-Type. Its boundaries are "batchresponse_" and, for each
// changeset, "changesetresponse_" followed by a new random UUID; or, if
// id is not empty, by id (and "_2", "_3"… for the later changesets).
//
// The body starts with the batch delimiter (aztables requires it), and
// each response ends with a line end before the next delimiter: a blank
// line after a response with no body.
//
// It fails if rep is not of a form ParseResponse returns: a changeset
// of one or more responses, or one response alone; statuses of three
// digits; header names of RFC 7230 token characters and values with no
// control character (tab aside) nor leading or trailing white space; no
// body holding a line that reads as a delimiter.
func EncodeResponse(rep *Reply, id string) (contentType string, body []byte, err error) {
	if err := rep.check(); err != nil {
		return "", nil, err
	}
	if id != "" && !checkID(id) {
		return "", nil, errors.New("batch: bad boundary ID " + strconv.Quote(id))
	}
	w := newWriter("batchresponse_", "changesetresponse_", id)
	if rep.Changeset {
		w.openChangeset()
	}
	for i := range rep.Responses {
		w.response(&rep.Responses[i])
	}
	for i := range rep.Rejected {
		w.openChangeset()
		w.response(&rep.Rejected[i])
	}
	b, err := w.end()
	if err != nil {
		return "", nil, err
	}
	return "multipart/mixed; boundary=" + w.batch, b, nil
}

// check reports whether rep can be written and read back as itself.
func (rep *Reply) check() error {
	switch {
	case len(rep.Responses) == 0:
		return errors.New("batch: a reply needs a response")
	case !rep.Changeset && (len(rep.Responses) > 1 || len(rep.Rejected) > 0):
		return errors.New("batch: a response outside a changeset must be alone")
	}
	for _, rs := range [][]Response{rep.Responses, rep.Rejected} {
		for i := range rs {
			r := &rs[i]
			if r.Status < 100 || r.Status > 999 {
				return errors.New("batch: bad status " + strconv.Itoa(r.Status))
			}
			for _, f := range r.Header {
				if !validFieldName(f.Name) || !validFieldValue(f.Value) {
					return errors.New("batch: bad header field " + strconv.Quote(f.Name+": "+f.Value))
				}
			}
		}
	}
	return nil
}

// writer writes a multipart body of application/http parts, perhaps in
// changesets, with the service's framing.
type writer struct {
	buf       bytes.Buffer
	batch     string // the batch boundary
	csPrefix  string // "changeset_" or "changesetresponse_"
	id        string // the caller's boundary ID, or "" for random ones
	changeset string // the open changeset's boundary, if any
	n         int    // changesets opened
	err       error  // the first content that cannot be framed
}

func newWriter(batchPrefix, csPrefix, id string) *writer {
	w := &writer{csPrefix: csPrefix, id: id}
	w.batch = batchPrefix + w.newID()
	w.buf.Grow(4096)
	return w
}

// newID returns the caller's ID or, without one, a random UUID.
func (w *writer) newID() string {
	if w.id == "" {
		return newID()
	}
	return w.id
}

// openChangeset starts a changeset part, closing any open one; parts go
// into it until closeChangeset.
func (w *writer) openChangeset() {
	w.closeChangeset()
	w.n++
	w.changeset = w.csPrefix + w.newID()
	if w.id != "" && w.n > 1 {
		w.changeset += "_" + strconv.Itoa(w.n)
	}
	w.buf.WriteString("--")
	w.buf.WriteString(w.batch)
	w.buf.WriteString("\r\nContent-Type: multipart/mixed; boundary=")
	w.buf.WriteString(w.changeset)
	w.buf.WriteString("\r\n\r\n")
}

// closeChangeset ends the open changeset, if any.
func (w *writer) closeChangeset() {
	if w.changeset == "" {
		return
	}
	w.buf.WriteString("--")
	w.buf.WriteString(w.changeset)
	w.buf.WriteString("--\r\n")
	w.changeset = ""
}

// delimiter writes the delimiter line of the part about to be written.
func (w *writer) delimiter() {
	w.buf.WriteString("--")
	if w.changeset != "" {
		w.buf.WriteString(w.changeset)
	} else {
		w.buf.WriteString(w.batch)
	}
}

// response writes one application/http part holding r.
func (w *writer) response(r *Response) {
	w.delimiter()
	w.buf.WriteString("\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 ")
	w.buf.WriteString(strconv.Itoa(r.Status))
	w.buf.WriteByte(' ')
	w.buf.WriteString(http.StatusText(r.Status))
	w.buf.WriteString("\r\n")
	for _, f := range r.Header {
		w.buf.WriteString(f.Name)
		w.buf.WriteString(": ")
		w.buf.WriteString(f.Value)
		w.buf.WriteString("\r\n")
	}
	w.buf.WriteString("\r\n")
	w.body(r.Body)
}

// body writes a part's content and the line end that ends it. Content
// holding a line that reads as a delimiter in effect fails the body.
func (w *writer) body(b []byte) {
	if w.err == nil && (hasDelimiter(b, w.batch) || w.changeset != "" && hasDelimiter(b, w.changeset)) {
		w.err = errors.New("batch: a body holds a line that reads as a delimiter")
	}
	w.buf.Write(b)
	w.buf.WriteString("\r\n")
}

// end closes the body and returns it, or the first error.
func (w *writer) end() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	w.closeChangeset()
	w.buf.WriteString("--")
	w.buf.WriteString(w.batch)
	w.buf.WriteString("--\r\n")
	return w.buf.Bytes(), nil
}
