package batch

import (
	"bytes"
	"strings"
)

// This file reads the MIME framing of a body: its parts, and a part's
// header lines. It is shared by requests and responses.

// part is one body part of a multipart body.
type part struct {
	header Header
	body   []byte // refers to the bytes split
}

// frameError is a fault in a body's framing. ParseRequest reports it as
// the service does, an *Error; ParseResponse as a malformed response.
type frameError string

func (e frameError) Error() string { return string(e) }

// splitMultipart splits a multipart body at its boundary's delimiter
// lines. Like the service's reader it takes CRLF or LF line endings,
// trailing white space after a delimiter, and ignores the preamble and
// epilogue; it also takes a body ending with an opening delimiter and
// nothing after it, as @azure/data-tables 12 sent. A body with no
// delimiter, or whose last part is cut off before the closing delimiter,
// is malformed.
//
// It reads at most limit parts: once it holds that many it returns them
// without reading further, so that a caller can tell "too many" from
// the count.
func splitMultipart(body []byte, boundary string, limit int) ([]part, error) {
	open := "--" + boundary
	var parts []part
	start := -1 // where the current part's content starts; -1 before the first delimiter
	for off := 0; off < len(body); {
		next := len(body)
		if i := bytes.IndexByte(body[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		line := bytes.TrimRight(body[off:next], " \t\r\n")
		isOpen := string(line) == open
		isClosing := !isOpen && len(line) == len(open)+2 && string(line[:len(open)]) == open && string(line[len(open):]) == "--"
		if isOpen || isClosing {
			if start >= 0 {
				p, err := readPart(trimLineEnd(body[start:off]))
				if err != nil {
					return nil, err
				}
				parts = append(parts, p)
				if len(parts) >= limit {
					return parts, nil
				}
			}
			if isClosing {
				if start < 0 {
					return nil, frameError("it closes before its first part")
				}
				return parts, nil
			}
			start = next
		}
		off = next
	}
	if start < 0 {
		return nil, frameError("no delimiter of boundary " + quote(boundary))
	}
	if len(bytes.TrimSpace(body[start:])) > 0 {
		return nil, frameError("it ends without the closing delimiter of boundary " + quote(boundary))
	}
	return parts, nil
}

// splitParts splits a body at the top level (or a changeset response)
// into its parts, of which more than maxParts are a fault.
func splitParts(body []byte, boundary string) ([]part, error) {
	parts, err := splitMultipart(body, boundary, maxParts+1)
	if err != nil {
		return nil, err
	}
	if len(parts) > maxParts {
		return nil, frameError("too many parts")
	}
	return parts, nil
}

// cutFirstLine skips the white space and blank lines that begin an
// application/http part and cuts its first line (a request or status
// line, trimmed) from the lines after it.
func cutFirstLine(b []byte) (line string, rest []byte) {
	b = bytes.TrimLeft(b, " \t\r\n")
	next := len(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		next = i + 1
	}
	return strings.TrimSpace(string(b[:next])), b[next:]
}

// trimLineEnd drops one trailing CRLF or LF: the line end before a
// delimiter belongs to the delimiter.
func trimLineEnd(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// cutHead splits b at its first blank line into header lines and
// content. Header lines running to the end leave no content (nil).
func cutHead(b []byte) (head, content []byte) {
	for off := 0; off < len(b); {
		next := len(b)
		if i := bytes.IndexByte(b[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		if len(bytes.TrimRight(b[off:next], "\r\n")) == 0 {
			return b[:off], b[next:]
		}
		off = next
	}
	return b, nil
}

// readPart reads a body part: MIME headers, a blank line, the content.
func readPart(b []byte) (part, error) {
	head, content := cutHead(b)
	hdr, err := readHeader(head)
	if err != nil {
		return part{}, err
	}
	return part{header: hdr, body: content}, nil
}

// readHeader reads header lines in order, names as spelled. A line
// starting with white space continues the one before (obs-fold), joined
// with a space.
func readHeader(headBytes []byte) (Header, error) {
	if len(headBytes) == 0 {
		return nil, nil
	}
	// One copy of the header block holds every name and value.
	head := string(headBytes)
	h := make(Header, 0, strings.Count(head, "\n")+1)
	for len(head) > 0 {
		line := head
		if i := strings.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = ""
		}
		line = strings.TrimSuffix(line, "\r")
		if len(line) > 0 && isBlank(line[0]) {
			if len(h) == 0 {
				return nil, frameError("a header starts with white space")
			}
			last := &h[len(h)-1]
			last.Value = strings.Trim(last.Value+" "+strings.Trim(line, " \t"), " \t")
			if !validFieldValue(last.Value) {
				return nil, frameError("bad header line " + quote(line))
			}
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		value = strings.Trim(value, " \t")
		if !ok || !validFieldName(name) || !validFieldValue(value) {
			return nil, frameError("bad header line " + quote(line))
		}
		h = append(h, HeaderField{name, value})
	}
	return h, nil
}

// isTokenByte reports whether c may appear in a header name (RFC 7230's
// tchar).
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// validFieldName reports whether s is a header name: a token.
func validFieldName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return s != ""
}

// validFieldValue reports whether v is a header value that reads back
// as itself: visible characters, spaces and tabs (and bytes from 0x80),
// not starting or ending with a space or tab.
func validFieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return v == "" || !isBlank(v[0]) && !isBlank(v[len(v)-1])
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// hasDelimiter reports whether b holds a line that reads as a delimiter
// of boundary: such content cannot be framed with it.
func hasDelimiter(b []byte, boundary string) bool {
	if len(b) == 0 {
		return false
	}
	var buf [80]byte // most boundaries fit: no allocation
	open := append(append(buf[:0], "--"...), boundary...)
	for len(b) > 0 {
		i := bytes.Index(b, open)
		if i < 0 {
			return false
		}
		if i == 0 || b[i-1] == '\n' {
			rest := b[i+len(open):]
			rest = bytes.TrimPrefix(rest, []byte("--"))
			end := bytes.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			if len(bytes.TrimRight(rest[:end], " \t\r")) == 0 {
				return true
			}
		}
		b = b[i+1:]
	}
	return false
}
