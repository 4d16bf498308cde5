package batch

import (
	"bytes"
	"mime"
	"net/http"
	"strings"
)

// Operation is one operation of a batch.
type Operation struct {
	Method    string
	URL       string // as sent
	Header    http.Header
	Body      []byte
	ContentID string // a Content-ID among the operation's own headers, echoed back
}

// Request is a parsed $batch body.
type Request struct {
	Operations []Operation // the changeset's operations, or the one query
	Changeset  bool
	// Extra counts the changesets after the first: the service processes
	// the first one and rejects the others with 400.
	Extra int
}

// Parse reads a $batch body sent with contentType.
func Parse(body []byte, contentType string) (*Request, error) {
	if strings.TrimSpace(contentType) == "" {
		return nil, &Error{Code: CodeMissingRequiredHeader, Status: http.StatusBadRequest, Message: "An HTTP header that's mandatory for this request is not specified."}
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return nil, &Error{Code: CodeInvalidHeaderValue, Status: http.StatusBadRequest, Message: "The value for one of the HTTP headers is not in the correct format."}
	}
	parts, err := splitMultipart(body, params["boundary"])
	if err != nil {
		return nil, err
	}
	b := &Request{}
	for _, p := range parts {
		pmt, pparams, err := mime.ParseMediaType(p.header.Get("Content-Type"))
		if err != nil {
			return nil, errBatch("a part has no valid Content-Type")
		}
		switch pmt {
		case "multipart/mixed":
			if len(b.Operations) > 0 && !b.Changeset {
				return nil, errBatch("a query can only be alone in a batch, outside a changeset")
			}
			if b.Changeset {
				b.Extra++
				continue
			}
			if pparams["boundary"] == "" {
				return nil, errBatch("a changeset has no boundary")
			}
			b.Changeset = true
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
					return nil, errBatch("unexpected operation type " + quote(omt))
				case len(b.Operations) >= maxParts:
					return nil, errBatch("too many operations")
				}
				sr, err := readOperation(op.body)
				if err != nil {
					return nil, err
				}
				b.Operations = append(b.Operations, sr)
			}
			if len(b.Operations) == 0 {
				return nil, errBatch("a changeset holds no operation")
			}
		case "application/http":
			if len(b.Operations) > 0 {
				return nil, errBatch("a query can only be alone in a batch, outside a changeset")
			}
			sr, err := readOperation(p.body)
			if err != nil {
				return nil, err
			}
			b.Operations = append(b.Operations, sr)
		default:
			return nil, errBatch("unexpected part type " + quote(pmt))
		}
	}
	if len(b.Operations) == 0 {
		return nil, errBatch("it holds no operation")
	}
	return b, nil
}

// readOperation reads an application/http part: a request line, headers
// and a body (to the end of the part: the SDKs send no Content-Length).
func readOperation(b []byte) (Operation, error) {
	var sr Operation
	b = bytes.TrimLeft(b, " \t\r\n")
	next := len(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		next = i + 1
	}
	line := strings.TrimSpace(string(b[:next]))
	f := strings.Fields(line)
	if len(f) < 2 || len(f) > 3 || !isToken(f[0]) || (len(f) == 3 && !strings.HasPrefix(f[2], "HTTP/")) {
		return sr, errBatch("bad request line " + quote(line))
	}
	p, err := readPart(b[next:])
	if err != nil {
		return sr, err
	}
	sr.Header = http.Header(p.header)
	sr.Body = bytes.TrimSpace(p.body)
	sr.ContentID = strings.TrimSpace(sr.Header.Get("Content-ID"))
	sr.Method = strings.ToUpper(f[0])
	if m := sr.Header.Get("X-HTTP-Method"); m != "" && sr.Method == http.MethodPost {
		sr.Method = strings.ToUpper(strings.TrimSpace(m))
	}
	sr.URL = f[1]
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
