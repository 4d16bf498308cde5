package testkit

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Request is one request the server received, as the request log and
// fault rules see it: what it asked for, and, once answered, what the
// client got.
type Request struct {
	Seq    int       // 1, 2, … in order of arrival
	Time   time.Time // arrival, by the server's Clock
	Method string    // the HTTP method, before X-HTTP-Method tunnelling
	Path   string    // the escaped path and query

	// Op is the operation, and Table, PartitionKey and RowKey what it
	// addresses, as far as the request names them: a query names only its
	// table, a list of tables nothing, an insert its keys (in its body).
	// A batch is OpBatch with the table and keys of its first operation,
	// and its operations in Batch.
	Op           Operation
	Table        string
	PartitionKey string
	RowKey       string
	Batch        []Request
	Header       http.Header // the request's headers

	// Status is the status the client received, 0 if none (a dropped
	// connection or a timeout), and ErrorCode the x-ms-error-code it
	// carried.
	Status    int
	ErrorCode string
	// Fault describes what was injected ("" if nothing): a fault rule's
	// action, a quirk, or a latency.
	Fault string
	// Applied reports whether the server handled the request: a write
	// that was applied took effect even if the client saw a failure.
	Applied bool
	// Delay is the latency added to the request.
	Delay time.Duration
}

// String is a one-line summary:
//
//	#3 InsertEntity orders (p1, r1) → 409 EntityAlreadyExists
func (r Request) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", r.Seq, r.Op)
	if r.Table != "" {
		b.WriteString(" " + r.Table)
	}
	if r.PartitionKey != "" || r.RowKey != "" {
		fmt.Fprintf(&b, " (%s, %s)", r.PartitionKey, r.RowKey)
	}
	if len(r.Batch) > 0 {
		ops := make([]string, len(r.Batch))
		for i, o := range r.Batch {
			ops[i] = string(o.Op)
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(ops, " "))
	}
	b.WriteString(" → ")
	if r.Status == 0 {
		b.WriteString("no response")
	} else {
		b.WriteString(strconv.Itoa(r.Status))
	}
	if r.ErrorCode != "" {
		b.WriteString(" " + r.ErrorCode)
	}
	if r.Fault != "" {
		b.WriteString(" [" + r.Fault)
		if r.Applied {
			b.WriteString(", applied")
		}
		b.WriteString("]")
	}
	return b.String()
}

// RequestLog is a list of requests, oldest first.
type RequestLog []Request

// String lists the requests one per line, for failure messages.
func (l RequestLog) String() string {
	var b strings.Builder
	for _, r := range l {
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Filter returns the requests for which keep returns true.
func (l RequestLog) Filter(keep func(Request) bool) RequestLog {
	var out RequestLog
	for _, r := range l {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// Op returns the requests of the given operations.
func (l RequestLog) Op(ops ...Operation) RequestLog {
	return l.Filter(func(r Request) bool {
		for _, o := range ops {
			if r.Op == o {
				return true
			}
		}
		return false
	})
}

// Faulted returns the requests that had a fault injected.
func (l RequestLog) Faulted() RequestLog {
	return l.Filter(func(r Request) bool { return r.Fault != "" })
}

// Ops returns each request's operation, in order.
func (l RequestLog) Ops() []Operation {
	ops := make([]Operation, len(l))
	for i, r := range l {
		ops[i] = r.Op
	}
	return ops
}

// requestLog records requests as they arrive and are answered.
type requestLog struct {
	mu   sync.Mutex
	n    int // requests received, for Seq
	reqs []*Request
}

func (l *requestLog) add(r *Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	r.Seq = l.n
	l.reqs = append(l.reqs, r)
}

// update changes a logged request under the lock.
func (l *requestLog) update(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

func (l *requestLog) snapshot() RequestLog {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(RequestLog, len(l.reqs))
	for i, r := range l.reqs {
		out[i] = *r
	}
	return out
}

func (l *requestLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n, l.reqs = 0, nil
}

// Log returns the requests the server has received so far, oldest first:
// every request, faulted or not, with what the client got.
func (k *Kit) Log() RequestLog { return k.log.snapshot() }

// ResetLog empties the request log; the next request is #1 again.
func (k *Kit) ResetLog() { k.log.reset() }
