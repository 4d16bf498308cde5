package testkit

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// Kit is the test harness in front of a server: it logs every request,
// adds latency, plays the service's quirks and injects faults. It is the
// one engine of localtabletest's fakes and of the command's test controls
// (serve --test-controls). It is safe for concurrent use.
type Kit struct {
	srv   *server.Server
	next  http.Handler
	clock *Clock
	log   requestLog

	mu        sync.Mutex
	rng       *rand.Rand
	faults    []*Fault
	nextFault int                   // the id of the last fault added
	latency   map[Operation]Latency // "" key: every operation
	quirks    quirks

	closed chan struct{} // closed when the server closes: ends Timeouts

	ctl controls // the test controls' state (controls.go)
}

// New returns a harness in front of srv, timed by clock, whose random
// source (fault probabilities, latency distributions) is seeded by seed.
// srv may be nil, for a server made after the harness (which it serves
// the test controls of): then SetServer before serving.
func New(srv *server.Server, clock *Clock, seed uint64) *Kit {
	return &Kit{
		srv:     srv,
		next:    srv,
		clock:   clock,
		rng:     rand.New(rand.NewPCG(seed, seed^0x6c6f63616c746162)),
		latency: make(map[Operation]Latency),
		closed:  make(chan struct{}),
	}
}

func (k *Kit) removeFault(f *Fault) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, g := range k.faults {
		if g == f {
			k.faults = append(k.faults[:i:i], k.faults[i+1:]...)
			break
		}
	}
	f.mu.Lock()
	f.removed = true
	f.mu.Unlock()
}

// pick returns the fault that acts on req, if any, counting it. Matchers
// run without the harness's lock, so that a When may call the Server.
func (k *Kit) pick(req *Request) *Fault {
	k.mu.Lock()
	faults := slices.Clone(k.faults)
	k.mu.Unlock()
	for _, f := range faults {
		if f.rule.matches(req) && k.fire(f) {
			return f
		}
	}
	return nil
}

// fire decides whether a matching rule acts, by its Skip, Times and
// Probability, and counts it.
func (k *Kit) fire(f *Fault) bool {
	k.mu.Lock() // for k.rng
	defer k.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	r := &f.rule
	switch {
	case f.removed:
		return false
	case f.seen < r.Skip:
		f.seen++
		return false
	case r.Times > 0 && f.hits >= r.Times:
		return false
	case r.Probability > 0 && r.Probability < 1 && k.rng.Float64() >= r.Probability:
		return false
	}
	f.hits++
	return true
}

// delayFor draws the latency of an operation, 0 if none is set.
func (k *Kit) delayFor(op Operation) time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.latency[op]
	if l == nil {
		l = k.latency[""]
	}
	if l == nil {
		return 0
	}
	return l(k.rng)
}

func (k *Kit) sample(l Latency) time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return l(k.rng)
}

// SetServer sets the server the harness is in front of.
func (k *Kit) SetServer(srv *server.Server) { k.srv, k.next = srv, srv }

// Close ends the requests that a Timeout holds: call it when the server
// closes.
func (k *Kit) Close() { close(k.closed) }

// ServeHTTP serves one request through the harness.
func (k *Kit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, op := describe(r)
	if op.IsTestControl() {
		// The test controls are neither logged nor faulted: a suite's
		// reset must not be what its fault rule hits.
		k.next.ServeHTTP(w, r)
		return
	}
	req.Time = k.clock.Now()
	k.log.add(req)
	note := func(s string) {
		k.log.update(func() {
			if req.Fault != "" {
				req.Fault += "; "
			}
			req.Fault += s
		})
	}
	cw := &captureWriter{ResponseWriter: w, req: req, log: &k.log}

	if d := k.delayFor(req.Op); d > 0 {
		k.log.update(func() { req.Delay += d })
		note("latency " + d.String())
		if k.clock.Sleep(r.Context(), d) != nil {
			return // the client gave up
		}
	}
	if status, e := k.quirk(req); e != nil {
		note("quirk: " + string(e.Code))
		k.srv.WriteError(cw, r, status, e)
		return
	}
	f := k.pick(req)
	if f == nil {
		k.serve(cw, r, req)
		return
	}
	note(f.name())
	a := f.rule.Action
	if a.kind == actDelay {
		d := k.sample(a.delay)
		k.log.update(func() { req.Delay += d })
		if !f.rule.AfterApply {
			if k.clock.Sleep(r.Context(), d) != nil {
				return
			}
			k.serve(cw, r, req)
			return
		}
		rec := k.record(r, req)
		if k.clock.Sleep(r.Context(), d) != nil {
			return
		}
		copyResponse(cw, rec)
		return
	}
	var rec *recorder
	if f.rule.AfterApply || a.kind == actTruncate {
		rec = k.record(r, req)
	}
	switch a.kind {
	case actFail:
		k.srv.WriteError(cw, r, a.status, a.err)
	case actDrop:
		panic(http.ErrAbortHandler)
	case actTimeout:
		select {
		case <-r.Context().Done():
		case <-k.closed:
		}
		panic(http.ErrAbortHandler)
	case actTruncate:
		body := rec.Body.Bytes()
		n := min(a.n, len(body)-1)
		rec.Body = bytes.NewBuffer(body[:max(n, 0)])
		copyResponse(cw, rec)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
}

// serve passes the request to the server, noting that it was applied
// and, for a table deletion, when.
func (k *Kit) serve(w *captureWriter, r *http.Request, req *Request) {
	k.log.update(func() { req.Applied = true })
	k.next.ServeHTTP(w, r)
	k.afterServe(req, w.status)
}

// record serves the request into a recorder.
func (k *Kit) record(r *http.Request, req *Request) *recorder {
	rec := &recorder{header: make(http.Header), Code: http.StatusOK, Body: new(bytes.Buffer)}
	k.log.update(func() { req.Applied = true })
	k.next.ServeHTTP(rec, r)
	k.afterServe(req, rec.Code)
	return rec
}

// copyResponse sends a recorded response, keeping its Content-Length.
func copyResponse(w http.ResponseWriter, rec *recorder) {
	h := w.Header()
	for name, v := range rec.Header() {
		h[name] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// recorder is a ResponseWriter that keeps the response, to send it
// later (net/http/httptest's recorder is for tests: the command links
// this package).
type recorder struct {
	header      http.Header
	Code        int
	Body        *bytes.Buffer
	wroteHeader bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.wroteHeader, r.Code = true, status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.Body.Write(b)
}

// Flush implements http.Flusher: the response is sent when it is copied.
func (r *recorder) Flush() {}

// captureWriter notes the status and error code the client receives.
type captureWriter struct {
	http.ResponseWriter
	req    *Request
	log    *requestLog
	status int
}

func (w *captureWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
		code := w.Header().Get("X-Ms-Error-Code")
		w.log.update(func() { w.req.Status, w.req.ErrorCode = status, code })
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *captureWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (w *captureWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// serviceError is the status and *localtable.Error of a quirk.
func serviceError(status int, code localtable.ErrorCode, msg string) (int, *localtable.Error) {
	return status, &localtable.Error{Code: code, Message: msg}
}
