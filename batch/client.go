package batch

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// This file is the client's side: encoding a request, parsing the reply.

// EncodeRequest writes req as a $batch request body framed as the Azure
// SDK for Go frames it, returning the body and its Content-Type. Its
// boundaries are "batch_" and, for each changeset, "changeset_" followed
// by a new random UUID; or, if id is not empty, by id (and "_2", "_3"…
// for the later changesets, written empty).
//
// Each operation's headers are written in order (aztables sorts them by
// name); an operation whose method its X-HTTP-Method header names (as
// ParseRequest reads it) is written as a POST with that header.
// ParseRequest reads what EncodeRequest writes back as req.
//
// It fails with the *Error ParseRequest would return if req breaks a
// batch rule (MaxOperations, MaxBodySize, a GET in a changeset…), and
// with another error if req is not of a form ParseRequest returns: a
// method of ASCII letters, upper case; a URL with no white space; header
// names of RFC 7230 token characters and values with no control
// character (tab aside) nor leading or trailing white space; no body
// holding a line that reads as a delimiter.
func EncodeRequest(req *Request, id string) (contentType string, body []byte, err error) {
	if err := req.checkShape(); err != nil {
		return "", nil, err
	}
	if id != "" && !checkID(id) {
		return "", nil, errors.New("batch: bad boundary ID " + strconv.Quote(id))
	}
	if req.ExtraChangesets < 0 {
		return "", nil, errors.New("batch: negative ExtraChangesets")
	}
	lines := make([]string, len(req.Operations))
	for i := range req.Operations {
		if lines[i], err = requestLine(&req.Operations[i]); err != nil {
			return "", nil, fmt.Errorf("batch: operation %d: %w", i, err)
		}
	}
	w := newWriter("batch_", "changeset_", id)
	b := &w.buf
	if !req.Changeset {
		b.WriteString("--" + w.batch + "\r\n")
		w.operation(lines[0], &req.Operations[0])
		b.WriteString("\r\n--" + w.batch + "--\r\n")
	} else {
		w.n++
		w.changeset = w.csPrefix + w.newID()
		b.WriteString("--" + w.batch + "\r\nContent-Type: multipart/mixed; boundary=" + w.changeset + "\r\n\r\n")
		for i := range req.Operations {
			if i > 0 {
				b.WriteString("\r\n")
			}
			b.WriteString("--" + w.changeset + "\r\n")
			w.operation(lines[i], &req.Operations[i])
		}
		b.WriteString("\r\n--" + w.changeset + "--\r\n")
		for range req.ExtraChangesets {
			w.n++
			cs := w.csPrefix + w.newID()
			if w.id != "" {
				cs += "_" + strconv.Itoa(w.n)
			}
			b.WriteString("\r\n--" + w.batch + "\r\nContent-Type: multipart/mixed; boundary=" + cs + "\r\n\r\n--" + cs + "--\r\n")
		}
		b.WriteString("\r\n--" + w.batch + "--\r\n")
	}
	if w.err != nil {
		return "", nil, w.err
	}
	if err := checkBodySize(b.Len()); err != nil {
		return "", nil, err
	}
	return "multipart/mixed; boundary=" + w.batch, b.Bytes(), nil
}

// operation writes an application/http part's headers and content, not
// the line end before the next delimiter.
func (w *writer) operation(line string, op *Operation) {
	b := &w.buf
	b.WriteString("Content-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n")
	b.WriteString(line)
	b.WriteString("\r\n")
	for _, f := range op.Header {
		b.WriteString(f.Name)
		b.WriteString(": ")
		b.WriteString(f.Value)
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	if w.err == nil && (hasDelimiter(op.Body, w.batch) || w.changeset != "" && hasDelimiter(op.Body, w.changeset)) {
		w.err = errors.New("batch: a body holds a line that reads as a delimiter")
	}
	b.Write(op.Body)
}

// requestLine checks that op reads back as itself and returns its
// request line.
func requestLine(op *Operation) (string, error) {
	method := op.Method
	if x := op.Header.Get("X-HTTP-Method"); x != "" {
		switch {
		case tunnelled(x) == op.Method:
			method = http.MethodPost
		case op.Method == http.MethodPost:
			return "", errors.New("a POST whose X-HTTP-Method header names " + strconv.Quote(x))
		}
	}
	if !isMethod(method) || strings.ToUpper(method) != method {
		return "", errors.New("bad method " + strconv.Quote(op.Method))
	}
	if f := strings.Fields(op.URL); len(f) != 1 || f[0] != op.URL {
		return "", errors.New("bad URL " + strconv.Quote(op.URL))
	}
	for _, f := range op.Header {
		if !validFieldName(f.Name) || !validFieldValue(f.Value) {
			return "", errors.New("bad header field " + strconv.Quote(f.Name+": "+f.Value))
		}
	}
	return method + " " + op.URL + " HTTP/1.1", nil
}

// ParseResponse parses a $batch response body received with
// contentType: a changeset response (and one per rejected changeset
// after it), or one response alone. It takes CRLF or LF line endings.
// The responses' bodies refer to body, which must not change while they
// are in use.
func ParseResponse(body []byte, contentType string) (*Reply, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return nil, errors.New("batch: the response's Content-Type " + strconv.Quote(contentType) + " is not multipart/mixed with a boundary")
	}
	rep, err := parseReply(body, params["boundary"])
	if err != nil {
		return nil, errors.New("batch: malformed response: " + err.Error())
	}
	return rep, nil
}

func parseReply(body []byte, boundary string) (*Reply, error) {
	parts, err := splitParts(body, boundary)
	if err != nil {
		return nil, err
	}
	rep := &Reply{}
	lone := false
	for _, p := range parts {
		mt, params, err := mime.ParseMediaType(p.header.Get("Content-Type"))
		if err != nil {
			return nil, frameError("a part has no valid Content-Type")
		}
		switch {
		case lone:
			return nil, frameError("a response outside a changeset is not alone")
		case mt == "multipart/mixed":
			if params["boundary"] == "" {
				return nil, frameError("a changeset has no boundary")
			}
			rs, err := readResponses(p.body, params["boundary"])
			if err != nil {
				return nil, err
			}
			if rep.Changeset {
				if len(rs) != 1 {
					return nil, frameError("a rejected changeset holds " + strconv.Itoa(len(rs)) + " responses")
				}
				rep.Rejected = append(rep.Rejected, rs[0])
			} else {
				rep.Changeset, rep.Responses = true, rs
			}
		case mt == "application/http":
			if rep.Changeset {
				return nil, frameError("a response outside a changeset is not alone")
			}
			r, err := readResponse(p.body)
			if err != nil {
				return nil, err
			}
			rep.Responses, lone = []Response{r}, true
		default:
			return nil, frameError("unexpected part type " + quote(mt))
		}
	}
	if len(rep.Responses) == 0 {
		return nil, frameError("it holds no response")
	}
	return rep, nil
}

// readResponses reads a changeset response's parts.
func readResponses(body []byte, boundary string) ([]Response, error) {
	parts, err := splitParts(body, boundary)
	if err != nil {
		return nil, err
	}
	rs := make([]Response, 0, len(parts))
	for _, p := range parts {
		mt, _, err := mime.ParseMediaType(p.header.Get("Content-Type"))
		if err != nil || mt != "application/http" {
			return nil, frameError("a changeset part is not application/http")
		}
		r, err := readResponse(p.body)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return nil, frameError("a changeset holds no response")
	}
	return rs, nil
}

// readResponse reads an application/http part: a status line, header
// lines and a body (to the end of the part).
func readResponse(b []byte) (Response, error) {
	var r Response
	line, rest := cutFirstLine(b)
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") || len(f[1]) != 3 || f[1][0] < '1' || f[1][0] > '9' {
		return r, frameError("bad status line " + quote(line))
	}
	status, err := strconv.Atoi(f[1])
	if err != nil {
		return r, frameError("bad status line " + quote(line))
	}
	r.Status = status
	head, body := cutHead(rest)
	if r.Header, err = readHeader(head); err != nil {
		return r, err
	}
	if len(body) > 0 {
		r.Body = body
	}
	return r, nil
}
