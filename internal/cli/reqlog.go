package cli

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
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
		// A transaction's table and failure are in its bodies, kept (the
		// first maxLoggedBody bytes) whatever the level.
		op, table := classify(r)
		batch := op == reqclass.EntityGroupTransaction.String()
		var reqBody *bytes.Buffer
		if (debug || batch) && r.Body != nil && r.Body != http.NoBody {
			reqBody = &bytes.Buffer{}
			r.Body = &teeBody{ReadCloser: r.Body, buf: reqBody}
		}
		rw := &recordingWriter{ResponseWriter: w, debug: debug || batch}
		next.ServeHTTP(rw, r)
		if rw.status == 0 {
			rw.status = http.StatusOK
		}
		var failed *batchFailure
		if batch {
			if reqBody != nil {
				table = batchTable(reqBody.Bytes())
			}
			failed = batchFailed(rw.body.Bytes())
		}
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
		if failed != nil {
			// The transaction's 202 holds the failure of one action.
			attrs = append(attrs, slog.String("error", failed.code), slog.Int("failed_status", failed.status))
			if failed.action >= 0 {
				attrs = append(attrs, slog.Int("failed_action", failed.action))
			}
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

// batchRequestLine is an inner request's line in a transaction's body.
var batchRequestLine = regexp.MustCompile(`(?m)^(?:POST|PUT|MERGE|PATCH|DELETE|GET) (\S+) HTTP/1\.1\r?$`)

// batchTable returns the table a transaction's body names in its first
// inner request (all of them name the same one), or "".
func batchTable(body []byte) string {
	m := batchRequestLine.FindSubmatch(body)
	if m == nil {
		return ""
	}
	u, err := url.Parse(string(m[1]))
	if err != nil {
		return ""
	}
	p := strings.TrimSuffix(u.Path, "/")
	name := p[strings.LastIndexByte(p, '/')+1:]
	name, _, _ = strings.Cut(name, "(")
	return name
}

// batchFailure is the failure a transaction's response reports: the
// status and error code of its failed action, and that action's index
// (-1 if the message does not give it).
type batchFailure struct {
	status int
	code   string
	action int
}

var (
	batchStatusLine = regexp.MustCompile(`(?m)^HTTP/1\.1 (\d{3}) `)
	batchErrorCode  = regexp.MustCompile(`"code"\s*:\s*"([^"]*)"`)
	// The service prefixes the message with the failed action's index.
	batchErrorIndex = regexp.MustCompile(`"value"\s*:\s*"(\d+):`)
)

// batchFailed reads a transaction's response body: nil if its inner
// responses succeeded (or the body is not a transaction's).
func batchFailed(body []byte) *batchFailure {
	m := batchStatusLine.FindSubmatch(body)
	if m == nil {
		return nil
	}
	status, _ := strconv.Atoi(string(m[1]))
	if status < 400 {
		return nil
	}
	f := &batchFailure{status: status, action: -1}
	if c := batchErrorCode.FindSubmatch(body); c != nil {
		f.code = string(c[1])
	}
	if i := batchErrorIndex.FindSubmatch(body); i != nil {
		f.action, _ = strconv.Atoi(string(i[1]))
	}
	return f
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
