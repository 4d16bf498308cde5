package localtabletest

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// FakeHost is the host of the servers New makes. It is under .test, a
// name reserved for testing that no real host has.
const FakeHost = "localtable.test"

// Transport serves requests in-process: each request goes straight to
// the server's handler, in a goroutine of its own, with the same wire
// behaviour as over a network (status, headers, body, TLS as the server
// sees it) but no listener, no port and no network. It is an
// http.RoundTripper and an azcore policy.Transporter (Do), so it fits an
// http.Client and aztables.ClientOptions.Transport alike, and can be
// wrapped.
//
// It serves https://localtable.test (FakeHost) and, for New, the host of
// its ConnectionString (http://127.0.0.1:PORT, served in-process all the
// same, and seen by the server as HTTPS as well); other URLs fail.
// A fault that drops the connection fails the request with an error
// wrapping io.EOF; a truncated body fails its read with
// io.ErrUnexpectedEOF; when the request's context ends first, RoundTrip
// returns its error, as net/http does. A Transport is safe for concurrent
// use.
type Transport struct {
	h    http.Handler
	host string
	alt  string // the host:port of New's loopback server; "": none
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if (req.URL.Host != t.host || req.URL.Scheme != "https") && (t.alt == "" || req.URL.Host != t.alt) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("localtabletest: the in-process transport serves https://%s, not %s://%s", t.host, req.URL.Scheme, req.URL.Host)
	}
	ctx := req.Context()
	r := req.Clone(ctx)
	// As the header arrives over a network: keys canonical (the SDKs set
	// some, such as x-ms-version, into the map as they spell them).
	r.Header = make(http.Header, len(req.Header))
	for name, vs := range req.Header {
		key := textproto.CanonicalMIMEHeaderKey(name)
		r.Header[key] = append(r.Header[key], vs...)
	}
	r.RequestURI = req.URL.RequestURI()
	r.Host = req.URL.Host
	r.RemoteAddr = "127.0.0.1:49152" // as a loopback client (SAS sip ranges)
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	r.TLS = &tls.ConnectionState{Version: tls.VersionTLS13, HandshakeComplete: true, ServerName: t.host}
	if r.Body == nil {
		r.Body = http.NoBody
	}
	w := &memWriter{header: make(http.Header)}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					done <- errDropped
				} else {
					done <- fmt.Errorf("localtabletest: the handler panicked: %v", v)
				}
			}
		}()
		t.h.ServeHTTP(w, r)
		done <- nil
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case err := <-done:
		if req.Body != nil {
			req.Body.Close()
		}
		return w.response(req, err)
	}
}

// Do implements azcore's policy.Transporter.
func (t *Transport) Do(req *http.Request) (*http.Response, error) { return t.RoundTrip(req) }

// errDropped is a connection closed without a response.
var errDropped = fmt.Errorf("localtabletest: the server closed the connection: %w", io.EOF)

// memWriter is the ResponseWriter of an in-process request.
type memWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *memWriter) Header() http.Header { return w.header }

func (w *memWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *memWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.body.Write(b)
}

// Flush implements http.Flusher; the body is sent when the handler ends.
func (w *memWriter) Flush() {}

// response turns what the handler wrote into the client's response. A
// handler that aborted (err) before writing a status dropped the
// connection; one that aborted after sent a body cut short.
func (w *memWriter) response(req *http.Request, err error) (*http.Response, error) {
	if err != nil && w.status == 0 {
		return nil, err
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	resp := &http.Response{
		Status:     strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode: w.status,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     w.header,
		Request:    req,
		TLS:        &tls.ConnectionState{Version: tls.VersionTLS13, HandshakeComplete: true, ServerName: req.URL.Host},
	}
	body := w.body.Bytes()
	resp.ContentLength = int64(len(body))
	if cl, e := strconv.ParseInt(w.header.Get("Content-Length"), 10, 64); e == nil {
		resp.ContentLength = cl
	}
	var rd io.Reader = bytes.NewReader(body)
	if err != nil {
		rd = io.MultiReader(rd, errReader{io.ErrUnexpectedEOF})
		resp.Close = true
	}
	if req.Method == http.MethodHead || w.status == http.StatusNoContent || w.status == http.StatusNotModified {
		rd = strings.NewReader("")
	}
	resp.Body = io.NopCloser(rd)
	return resp, nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
