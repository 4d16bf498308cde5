package batch_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/localtable/localtable/batch"
)

// The seed corpora in testdata/fuzz hold hostile bodies: missing and
// duplicate boundaries, nested changesets, huge parts, CRLF and LF, wrong
// content types, truncated bodies.

// collides reports whether an encoding with boundary ID id may have
// failed because content holds one of its delimiters.
func collides(content [][]byte, id string) bool {
	if id == "" {
		return false // random boundaries
	}
	for _, b := range content {
		for _, d := range []string{"--batch_" + id, "--changeset_" + id, "--batchresponse_" + id, "--changesetresponse_" + id} {
			if bytes.Contains(b, []byte(d)) {
				return true
			}
		}
	}
	return false
}

// FuzzParseRequest: no panic on any body; a refusal is an *Error as the
// service answers; what is accepted keeps the rules, and encodes and
// parses back to the same request.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(csBody(csPart("", insert))), ctB)
	f.Add([]byte(lone("GET http://h/acct/t1() HTTP/1.1\r\n\r\n")), ctB)
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		req, err := batch.ParseRequest(body, ct)
		if err != nil {
			var be *batch.Error
			if !errors.As(err, &be) || be.Code == "" || (be.Status != 400 && be.Status != 413) || be.Index < -1 || be.Index >= batch.MaxOperations {
				t.Fatalf("refusal %#v", err)
			}
			if be.Operation != nil && (be.Index < 0 || be.Operation.Method != "GET") {
				t.Fatalf("refusal names operation %+v at %d", be.Operation, be.Index)
			}
			return
		}
		n := len(req.Operations)
		if n == 0 || n > batch.MaxOperations || !req.Changeset && (n != 1 || req.Operations[0].Method != "GET" || req.ExtraChangesets != 0) {
			t.Fatalf("accepted %+v", req)
		}
		ct2, body2, err := batch.EncodeRequest(req, "fz")
		if err != nil {
			var content [][]byte
			for _, op := range req.Operations {
				content = append(content, op.Body)
			}
			var be *batch.Error
			if collides(content, "fz") || errors.As(err, &be) && be.Status == 413 {
				return
			}
			t.Fatalf("accepted %+v but EncodeRequest: %v", req, err)
		}
		again, err := batch.ParseRequest(body2, ct2)
		if err != nil {
			t.Fatalf("re-encoded request does not parse: %v\n%q", err, body2)
		}
		if !sameRequest(req, again) {
			t.Fatalf("round trip (-parsed +reparsed)\n%s\n%q", cmp.Diff(req, again, cmpOpts), body2)
		}
	})
}

// FuzzParseResponse: no panic on any body; what is accepted encodes and
// parses back to the same reply.
func FuzzParseResponse(f *testing.F) {
	f.Add([]byte("--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 204 No Content\r\nETag: x\r\n\r\n\r\n--c--\r\n--b--\r\n"), "multipart/mixed; boundary=b")
	f.Add([]byte("--b\nContent-Type: application/http\n\nHTTP/1.1 200 OK\nContent-Type: application/json\n\n{}\n--b--"), "multipart/mixed; boundary=b")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		rep, err := batch.ParseResponse(body, ct)
		if err != nil {
			return
		}
		ct2, body2, err := batch.EncodeResponse(rep, "fz")
		if err != nil {
			var content [][]byte
			for _, r := range append(rep.Responses, rep.Rejected...) {
				content = append(content, r.Body)
			}
			if collides(content, "fz") {
				return
			}
			t.Fatalf("accepted %+v but EncodeResponse: %v", rep, err)
		}
		again, err := batch.ParseResponse(body2, ct2)
		if err != nil {
			t.Fatalf("re-encoded reply does not parse: %v\n%q", err, body2)
		}
		if !sameReply(rep, again) {
			t.Fatalf("round trip (-parsed +reparsed)\n%s\n%q", cmp.Diff(rep, again, cmpOpts), body2)
		}
	})
}

// FuzzRoundTrip: requests and replies generated from the input encode,
// and parse back to themselves.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("\x01\x02POST\x00/t1\x02\x05Prefer\x11return-no-content\x04{}\r\n"), "")
	f.Add([]byte("\x00\x00\x03\x00\xff\xfe--batch_\n\r\x7f\x00"), "0d4f7c1e-1f6a-4b8e-9c1d-2e3f4a5b6c7d")
	f.Fuzz(func(t *testing.T, data []byte, id string) {
		if id != "" && !validID(id) {
			id = ""
		}
		g := &gen{b: data}
		req := g.request()
		ct, body, err := batch.EncodeRequest(req, id)
		if err != nil {
			var content [][]byte
			for _, op := range req.Operations {
				content = append(content, op.Body)
			}
			if !collides(content, id) {
				t.Fatalf("%+v: %v", req, err)
			}
		} else {
			got, err := batch.ParseRequest(body, ct)
			if err != nil {
				t.Fatalf("%+v: %v\n%q", req, err, body)
			}
			if !sameRequest(req, got) {
				t.Fatalf("request round trip (-sent +read)\n%s\n%q", cmp.Diff(req, got, cmpOpts), body)
			}
		}
		rep := g.reply()
		ct, body, err = batch.EncodeResponse(rep, id)
		if err != nil {
			var content [][]byte
			for _, r := range append(rep.Responses, rep.Rejected...) {
				content = append(content, r.Body)
			}
			if !collides(content, id) {
				t.Fatalf("%+v: %v", rep, err)
			}
			return
		}
		got, err := batch.ParseResponse(body, ct)
		if err != nil {
			t.Fatalf("%+v: %v\n%q", rep, err, body)
		}
		if !sameReply(rep, got) {
			t.Fatalf("reply round trip (-sent +read)\n%s\n%q", cmp.Diff(rep, got, cmpOpts), body)
		}
	})
}

// sameRequest is cmp.Equal(a, b, cmpOpts), fast enough to fuzz with.
func sameRequest(a, b *batch.Request) bool {
	if a.Changeset != b.Changeset || a.ExtraChangesets != b.ExtraChangesets || len(a.Operations) != len(b.Operations) {
		return false
	}
	for i := range a.Operations {
		x, y := &a.Operations[i], &b.Operations[i]
		if x.Method != y.Method || x.URL != y.URL || !bytes.Equal(x.Body, y.Body) || !slices.Equal(x.Header, y.Header) {
			return false
		}
	}
	return true
}

// sameReply is cmp.Equal(a, b, cmpOpts), fast enough to fuzz with.
func sameReply(a, b *batch.Reply) bool {
	same := func(x, y []batch.Response) bool {
		return slices.EqualFunc(x, y, func(r, s batch.Response) bool {
			return r.Status == s.Status && bytes.Equal(r.Body, s.Body) && slices.Equal(r.Header, s.Header)
		})
	}
	return a.Changeset == b.Changeset && same(a.Responses, b.Responses) && same(a.Rejected, b.Rejected)
}

// validID is the fuzz test's own statement of the boundary IDs
// EncodeRequest and EncodeResponse take.
func validID(id string) bool {
	if len(id) > 40 {
		return false
	}
	for _, c := range id {
		if !(c < 0x80 && (unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("-_.", c))) {
			return false
		}
	}
	return true
}

// gen draws requests and replies from fuzz input, each of a form the
// encoders take (so that they must take it).
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

// take returns up to the next byte's worth of bytes.
func (g *gen) take() []byte {
	n := min(int(g.byte()), len(g.b))
	out := g.b[:n]
	g.b = g.b[n:]
	return out
}

const tchars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// name is a header name: token characters.
func (g *gen) name() string {
	b := g.take()
	if len(b) == 0 {
		return "X"
	}
	s := make([]byte, len(b))
	for i, c := range b {
		s[i] = tchars[int(c)%len(tchars)]
	}
	return string(s)
}

// value is a header value: no control character but tab, trimmed.
func (g *gen) value() string {
	var s []byte
	for _, c := range g.take() {
		if c >= 0x20 && c != 0x7f || c == '\t' {
			s = append(s, c)
		}
	}
	return strings.Trim(string(s), " \t")
}

func (g *gen) body() []byte {
	if b := g.take(); len(b) > 0 {
		return bytes.Clone(b)
	}
	return nil
}

func (g *gen) header() batch.Header {
	var h batch.Header
	for range int(g.byte() % 4) {
		if n := g.name(); !strings.EqualFold(n, "X-HTTP-Method") {
			h = append(h, batch.HeaderField{Name: n, Value: g.value()})
		}
	}
	return h
}

var methods = []string{"GET", "POST", "PUT", "PATCH", "MERGE", "DELETE"}

func (g *gen) operation(get bool) batch.Operation {
	m := methods[int(g.byte())%len(methods)]
	if c := g.byte(); c >= 0xf0 {
		m = strings.ToUpper(strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) && r < 0x80 {
				return r
			}
			return -1
		}, g.name()))
		if m == "" {
			m = "PUT"
		}
	}
	switch {
	case get:
		m = "GET"
	case m == "GET":
		m = "PUT"
	}
	url := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, string(g.take()))
	if url == "" {
		url = "/"
	}
	op := batch.Operation{Method: m, URL: url, Header: g.header(), Body: g.body()}
	if g.byte()%3 == 0 { // tunnelled through POST
		op.Header = append(op.Header, batch.HeaderField{Name: "X-HTTP-Method", Value: strings.ToLower(m)})
	}
	return op
}

func (g *gen) request() *batch.Request {
	req := &batch.Request{Changeset: g.byte()%4 != 0}
	if !req.Changeset {
		req.Operations = []batch.Operation{g.operation(true)}
		return req
	}
	for range 1 + int(g.byte()%4) {
		req.Operations = append(req.Operations, g.operation(false))
	}
	req.ExtraChangesets = int(g.byte() % 3)
	return req
}

func (g *gen) response() batch.Response {
	return batch.Response{Status: 100 + (int(g.byte())<<8|int(g.byte()))%900, Header: g.header(), Body: g.body()}
}

func (g *gen) reply() *batch.Reply {
	rep := &batch.Reply{Changeset: g.byte()%4 != 0}
	if !rep.Changeset {
		rep.Responses = []batch.Response{g.response()}
		return rep
	}
	for range 1 + int(g.byte()%4) {
		rep.Responses = append(rep.Responses, g.response())
	}
	for range int(g.byte() % 3) {
		rep.Rejected = append(rep.Rejected, g.response())
	}
	return rep
}
