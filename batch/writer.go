package batch

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
)

// HeaderField is one header line of a sub-response, written as spelled.
type HeaderField struct{ Name, Value string }

// Header are a sub-response's headers, in order.
type Header []HeaderField

// add appends a header unless value is empty.
func (h *Header) add(name, value string) {
	if value != "" {
		*h = append(*h, HeaderField{name, value})
	}
}

// The service writes a sub-response's headers in one of four orders,
// which these functions reproduce.

// NoContentHeader are those of a changeset operation answered 204: an
// update, upsert or delete (loc empty; etag empty for a delete), or an
// insert with Prefer: return-no-content (loc its entity's URL).
func NoContentHeader(contentID, applied, loc, etag string) Header {
	var h Header
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
	h.add("ETag", etag)
	return h
}

// ContentHeader are those of a response with a body: an insert answered
// 201 with its entity, or a retrieve or query outside a changeset (extra
// holds a query's continuation headers).
func ContentHeader(contentType, contentID, applied, loc, etag string, extra []HeaderField) Header {
	var h Header
	h.add("DataServiceVersion", "3.0;")
	h.add("Content-Type", contentType)
	h.add("Content-ID", contentID)
	h.add("X-Content-Type-Options", "nosniff")
	h.add("Cache-Control", "no-cache")
	h.add("Preference-Applied", applied)
	h.add("Location", loc)
	for _, x := range extra {
		h.add(x.Name, x.Value)
	}
	h.add("ETag", etag)
	return h
}

// OperationErrorHeader are those of an operation's error.
func OperationErrorHeader(contentID, applied, contentType string) Header {
	var h Header
	h.add("Content-ID", contentID)
	h.add("X-Content-Type-Options", "nosniff")
	h.add("Cache-Control", "no-cache")
	h.add("Preference-Applied", applied)
	h.add("DataServiceVersion", "3.0;")
	h.add("Content-Type", contentType)
	return h
}

// ChangesetErrorHeader are those of an error of the changeset as a whole.
func ChangesetErrorHeader(contentType string) Header {
	var h Header
	h.add("X-Content-Type-Options", "nosniff")
	h.add("DataServiceVersion", "3.0;")
	h.add("Content-Type", contentType)
	return h
}

// Writer writes a batch response as the service does and aztables
// requires: the body starts with "--batchresponse_…", and each inner
// response ends with a line end before the next delimiter (a blank line
// after a response with no body).
type Writer struct {
	buf       bytes.Buffer
	Batch     string // the batch boundary
	changeset string // the open changeset's boundary, if any
	newID     func() string
}

// NewWriter returns a Writer whose boundaries end with IDs from newID.
func NewWriter(newID func() string) *Writer {
	return &Writer{Batch: "batchresponse_" + newID(), newID: newID}
}

// OpenChangeset starts a changeset part; responses go into it until
// CloseChangeset.
func (bw *Writer) OpenChangeset() {
	bw.changeset = "changesetresponse_" + bw.newID()
	bw.buf.WriteString("--" + bw.Batch + "\r\nContent-Type: multipart/mixed; boundary=" + bw.changeset + "\r\n\r\n")
}

// CloseChangeset ends the changeset part.
func (bw *Writer) CloseChangeset() {
	bw.buf.WriteString("--" + bw.changeset + "--\r\n")
	bw.changeset = ""
}

// Response writes one application/http part. Header values holding a
// line break are dropped.
func (bw *Writer) Response(status int, h Header, body []byte) {
	boundary := bw.Batch
	if bw.changeset != "" {
		boundary = bw.changeset
	}
	bw.buf.WriteString("--" + boundary + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
	bw.buf.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	for _, x := range h {
		if strings.ContainsAny(x.Value, "\r\n") {
			continue
		}
		bw.buf.WriteString(x.Name + ": " + x.Value + "\r\n")
	}
	bw.buf.WriteString("\r\n")
	bw.buf.Write(body)
	bw.buf.WriteString("\r\n")
}

// End closes the body and returns it.
func (bw *Writer) End() []byte {
	if bw.changeset != "" {
		bw.CloseChangeset()
	}
	bw.buf.WriteString("--" + bw.Batch + "--\r\n")
	return bw.buf.Bytes()
}
