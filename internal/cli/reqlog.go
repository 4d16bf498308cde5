package cli

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/localtable/localtable/internal/reqclass"
	"github.com/localtable/localtable/server"
)

// maxLoggedBody bounds the bytes of a body logged at debug.
const maxLoggedBody = 16 << 10

// logRequests logs one line per request at info: method, path, the Table
// service operation, table, status, error code, for a query its plan
// (plan=index index=NAME, or plan=scan, and scanned=N, from the server's
// X-Localtable-Index and X-Localtable-Scanned headers), duration and
// request id.
// At debug it also logs the request and response bodies (the first
// maxLoggedBody bytes of each). Health checks are logged at debug.
func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx := r.Context()
		// Bodies at debug, but never the explorer's or the admin
		// endpoints': a login form holds an account key.
		p := r.URL.EscapedPath()
		debug := log.Enabled(ctx, slog.LevelDebug) && p != "/" && !strings.HasPrefix(p, explorerPrefix) && !strings.HasPrefix(p, adminPrefix)
		var reqBody *bytes.Buffer
		if debug && r.Body != nil && r.Body != http.NoBody {
			reqBody = &bytes.Buffer{}
			r.Body = &teeBody{ReadCloser: r.Body, buf: reqBody}
		}
		rw := &recordingWriter{ResponseWriter: w, debug: debug}
		next.ServeHTTP(rw, r)
		if rw.status == 0 {
			rw.status = http.StatusOK
		}
		op, table := classify(r)
		level := slog.LevelInfo
		switch {
		case op == "Health":
			level = slog.LevelDebug
		case rw.status >= 500:
			level = slog.LevelError
		}
		if !log.Enabled(ctx, level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.EscapedPath()),
			slog.String("op", op),
		}
		if table != "" {
			attrs = append(attrs, slog.String("table", table))
		}
		attrs = append(attrs, slog.Int("status", rw.status))
		if code := rw.Header().Get("X-Ms-Error-Code"); code != "" {
			attrs = append(attrs, slog.String("error", code))
		}
		if scanned := rw.Header().Get(server.ScannedHeader); scanned != "" {
			// A query's plan, from the server's extension headers.
			if ix := rw.Header().Get(server.IndexHeader); ix != "" {
				attrs = append(attrs, slog.String("plan", "index"), slog.String("index", ix))
			} else {
				attrs = append(attrs, slog.String("plan", "scan"))
			}
			if n, err := strconv.Atoi(scanned); err == nil {
				attrs = append(attrs, slog.Int("scanned", n))
			}
		}
		attrs = append(attrs, slog.Duration("dur", time.Since(start)))
		if id := rw.Header().Get("X-Ms-Request-Id"); id != "" {
			attrs = append(attrs, slog.String("request_id", id))
		}
		if debug {
			if reqBody != nil && reqBody.Len() > 0 {
				attrs = append(attrs, slog.String("request_body", clip(reqBody)))
			}
			if rw.body.Len() > 0 {
				attrs = append(attrs, slog.String("response_body", clip(&rw.body)))
			}
		}
		log.LogAttrs(ctx, level, "request", attrs...)
	})
}

func clip(b *bytes.Buffer) string {
	if b.Len() > maxLoggedBody {
		return string(b.Bytes()[:maxLoggedBody]) + "…"
	}
	return b.String()
}

// teeBody copies what the handler reads of a request body, up to a bound.
type teeBody struct {
	io.ReadCloser
	buf *bytes.Buffer
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if room := maxLoggedBody + 1 - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(n, room)])
	}
	return n, err
}

// recordingWriter notes the status and, at debug, the start of the body.
type recordingWriter struct {
	http.ResponseWriter
	status int
	debug  bool
	body   bytes.Buffer
}

func (w *recordingWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.debug {
		if room := maxLoggedBody + 1 - w.body.Len(); room > 0 {
			w.body.Write(b[:min(len(b), room)])
		}
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes a flush on.
func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// classify names a request's operation as the Table service's REST
// reference names them, and its table, with package reqclass, as the
// server routes them; the CLI's own endpoints (health, explorer, admin)
// first. The log keeps its names of a preflight ("Preflight") and of what
// the server refuses ("Unknown").
func classify(r *http.Request) (op, table string) {
	p := r.URL.EscapedPath()
	switch {
	case p == server.HealthPath:
		return "Health", ""
	case p == "/" || strings.HasPrefix(p, explorerPrefix):
		return "Explorer", ""
	case strings.HasPrefix(p, adminPrefix):
		return "Admin:" + strings.TrimPrefix(p, adminPrefix), ""
	}
	c := reqclass.Classify(r)
	if c.Op == reqclass.Preflight {
		return "Preflight", ""
	}
	return c.Op.String(), c.Table
}
