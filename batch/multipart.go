package batch

import (
	"bufio"
	"bytes"
	"net/textproto"
)

// maxParts bounds the operations read, before the limit of 100.
const maxParts = 1000

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
				if len(parts) >= maxParts {
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
		return nil, errBatch("no delimiter of boundary " + quote(boundary))
	}
	if len(bytes.TrimSpace(body[start:])) > 0 {
		return nil, errBatch("it ends without the closing delimiter of boundary " + quote(boundary))
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
