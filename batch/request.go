package batch

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Operation is one operation of a batch: an HTTP request inside the
// body. Its fields are as sent; nothing is interpreted but the method.
type Operation struct {
	// Method is the request line's method, upper-cased; for a POST with
	// an X-HTTP-Method header, that header's value, upper-cased.
	Method string
	// URL is the request line's URL, as sent: the SDKs send an absolute
	// URL whose keys are not quote-doubled.
	URL string
	// Header holds the operation's own headers (not its MIME part's),
	// in order, as spelled.
	Header Header
	// Body is the request body, exactly: from the blank line after the
	// headers to the line end before the next delimiter. It is nil when
	// empty. From ParseRequest it refers to the parsed bytes.
	Body []byte
}

// ContentID returns the operation's Content-ID header, which the service
// echoes in the operation's response.
func (op *Operation) ContentID() string {
	return op.Header.Get("Content-ID")
}

// Request is a $batch request body: one changeset of writes, or one GET
// alone.
type Request struct {
	// Changeset reports whether Operations came in a changeset; if not,
	// Operations holds one GET, sent alone outside a changeset.
	Changeset bool
	// Operations are the changeset's operations in order, or the GET.
	Operations []Operation
	// ExtraChangesets counts the changesets after the first: the service
	// processes the first and rejects each other one (ErrExtraChangeset)
	// without reading it. EncodeRequest writes them empty.
	ExtraChangesets int
}

// ReadRequest reads a request body of at most MaxBodySize bytes from r
// and parses it as ParseRequest does. A longer body is an *Error, 413
// RequestBodyTooLarge; r's own errors are returned wrapped.
func ReadRequest(r io.Reader, contentType string) (*Request, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxBodySize+1))
	if err != nil {
		return nil, fmt.Errorf("batch: reading the request body: %w", err)
	}
	return ParseRequest(body, contentType)
}

// ParseRequest parses a $batch request body sent with contentType. It
// takes what the SDKs send: CRLF or LF line endings, blank lines around
// parts, the part headers in any order and case.
//
// It enforces the batch rules that need no entity (MaxBodySize,
// MaxOperations, one GET alone, writes in a changeset, one changeset
// processed) and reports their violations, and any malformed body, as
// an *Error with the service's code: a server answers with it as it
// stands. The rules on the entities (one partition, each entity once)
// are left to localtable.Table.Transact.
//
// The operations' bodies refer to body, which must not change while
// they are in use.
func ParseRequest(body []byte, contentType string) (*Request, error) {
	if err := checkBodySize(len(body)); err != nil {
		return nil, err
	}
	if strings.TrimSpace(contentType) == "" {
		return nil, &Error{Code: CodeMissingRequiredHeader, Status: http.StatusBadRequest, Index: -1,
			Message: "An HTTP header that's mandatory for this request is not specified."}
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return nil, &Error{Code: CodeInvalidHeaderValue, Status: http.StatusBadRequest, Index: -1,
			Message: "The value for one of the HTTP headers is not in the correct format."}
	}
	req, err := parseRequest(body, params["boundary"])
	if err != nil {
		var fe frameError
		if errors.As(err, &fe) {
			return nil, errMalformed(string(fe))
		}
		return nil, err
	}
	if err := req.checkShape(); err != nil {
		return nil, err
	}
	return req, nil
}

// parseRequest reads the parts of a body: the first changeset's
// operations, or one operation alone.
func parseRequest(body []byte, boundary string) (*Request, error) {
	parts, err := splitParts(body, boundary)
	if err != nil {
		return nil, err
	}
	req := &Request{}
	lone := false
	for _, p := range parts {
		mt, params, err := mime.ParseMediaType(p.header.Get("Content-Type"))
		if err != nil {
			return nil, frameError("a part has no valid Content-Type")
		}
		switch {
		case lone:
			return nil, frameError("a query can only be alone in a batch, outside a changeset")
		case mt == "multipart/mixed" && req.Changeset:
			req.ExtraChangesets++
		case mt == "multipart/mixed":
			if params["boundary"] == "" {
				return nil, frameError("a changeset has no boundary")
			}
			req.Changeset = true
			// One more than the limit, for checkShape to see.
			ops, err := splitMultipart(p.body, params["boundary"], MaxOperations+1)
			if err != nil {
				return nil, err
			}
			req.Operations = make([]Operation, 0, len(ops))
			for _, op := range ops {
				omt, _, err := mime.ParseMediaType(op.header.Get("Content-Type"))
				switch {
				case err != nil:
					return nil, frameError("an operation has no valid Content-Type")
				case strings.HasPrefix(omt, "multipart/"):
					return nil, frameError("a changeset cannot hold another changeset")
				case omt != "application/http":
					return nil, frameError("unexpected operation type " + quote(omt))
				}
				o, err := readOperation(op.body)
				if err != nil {
					return nil, err
				}
				req.Operations = append(req.Operations, o)
			}
		case mt == "application/http":
			if req.Changeset {
				return nil, frameError("a query can only be alone in a batch, outside a changeset")
			}
			o, err := readOperation(p.body)
			if err != nil {
				return nil, err
			}
			req.Operations, lone = []Operation{o}, true
		default:
			return nil, frameError("unexpected part type " + quote(mt))
		}
	}
	return req, nil
}

// readOperation reads an application/http part: a request line, headers
// and a body (to the end of the part: the SDKs send no Content-Length).
func readOperation(b []byte) (Operation, error) {
	var op Operation
	line, rest := cutFirstLine(b)
	f := strings.Fields(line)
	if len(f) < 2 || len(f) > 3 || !isMethod(f[0]) || (len(f) == 3 && !strings.HasPrefix(f[2], "HTTP/")) {
		return op, frameError("bad request line " + quote(line))
	}
	head, body := cutHead(rest)
	hdr, err := readHeader(head)
	if err != nil {
		return op, err
	}
	op.Header = hdr
	if len(body) > 0 {
		op.Body = body
	}
	op.Method = strings.ToUpper(f[0])
	if x := op.Header.Get("X-HTTP-Method"); x != "" && op.Method == http.MethodPost {
		op.Method = tunnelled(x)
	}
	op.URL = f[1]
	return op, nil
}

// tunnelled is the method an X-HTTP-Method header names.
func tunnelled(x string) string {
	return strings.ToUpper(strings.TrimSpace(x))
}

// isMethod reports whether s is a plain method name: ASCII letters.
func isMethod(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return s != ""
}
