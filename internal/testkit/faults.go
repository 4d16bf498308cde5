package testkit

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// Rule is a declarative fault: which requests it matches, what happens to
// them, and how often. Add one with Server.Inject.
//
// A request matches when every matcher that is set matches: one of Ops,
// Table (case-insensitive, as table names are), PartitionKey, Method and
// When. The empty PartitionKey is "any": to match the empty key itself,
// use When. Rules are tried in the order they were added; the first that
// matches and fires acts, the others let the request by.
type Rule struct {
	// Name labels the rule in the request log; empty: its action.
	Name string

	Ops          []Operation
	Table        string
	PartitionKey string
	Method       string
	// When matches on anything else the request carries: its RowKey,
	// the operations of a batch, a header. It runs on the request's
	// goroutine, for each request the other matchers accept, and must not
	// change r.
	When func(r *Request) bool

	// Action is what happens to a matched request.
	Action Action
	// AfterApply serves the request first and then acts on the answer:
	// the write is applied, and the client sees the failure instead of
	// the response, as when the service commits a write and the response
	// is lost. It is what finds retry code that is not idempotent.
	AfterApply bool

	// Skip lets the first Skip matching requests through.
	Skip int
	// Times is how many requests the rule acts on; 0 means until it is
	// removed.
	Times int
	// Probability, in (0, 1), makes the rule act on a matching request
	// with that probability, drawn from the server's seeded source
	// (WithSeed); 0 (unset) or 1 acts on every one.
	Probability float64
}

// Fault is a rule in force. It is safe for concurrent use.
type Fault struct {
	rule Rule
	k    *Kit
	id   int // 1, 2, … in the order rules were added: the test controls' handle

	mu      sync.Mutex
	seen    int // matching requests, for Skip
	hits    int // requests acted on
	removed bool
}

// Remove takes the rule out of force. Requests already acted on are not
// affected.
func (f *Fault) Remove() { f.k.removeFault(f) }

// Hits returns how many requests the rule has acted on.
func (f *Fault) Hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

func (f *Fault) name() string {
	if f.rule.Name != "" {
		return f.rule.Name
	}
	s := f.rule.Action.String()
	if f.rule.AfterApply {
		s += " after apply"
	}
	return s
}

// matches reports whether the rule's matchers accept r.
func (r *Rule) matches(req *Request) bool {
	if len(r.Ops) > 0 {
		found := false
		for _, o := range r.Ops {
			found = found || o == req.Op
		}
		if !found {
			return false
		}
	}
	switch {
	case r.Table != "" && !strings.EqualFold(r.Table, req.Table):
		return false
	case r.PartitionKey != "" && r.PartitionKey != req.PartitionKey:
		return false
	case r.Method != "" && !strings.EqualFold(r.Method, req.Method):
		return false
	case r.When != nil && !r.When(req):
		return false
	}
	return true
}

// actionKind is what an Action does.
type actionKind int

const (
	actFail actionKind = iota + 1
	actDelay
	actDrop
	actTimeout
	actTruncate
)

// Action is what a fault rule does to a request: answer with a service
// error, delay it, drop the connection, never answer, or cut the
// response body short. Make one with Fail (or ServerBusy and the other
// service errors), Delay, DropConnection, Timeout or TruncateBody.
type Action struct {
	kind   actionKind
	status int // of a Fail
	err    *localtable.Error
	delay  Latency
	label  string
	n      int
}

// Fail answers with a service error: the status, the error code (in the
// x-ms-error-code header and the body) and the message, in the body
// format of the operation (JSON for tables and entities, XML for ACLs and
// service properties), with the request id and time the service appends.
// A status of 0 is the one the service answers code with
// (server.HTTPStatus).
func Fail(status int, code localtable.ErrorCode, message string) Action {
	if status == 0 {
		status = server.HTTPStatus(code)
	}
	return Action{kind: actFail, status: status, err: &localtable.Error{Code: code, Message: message}}
}

// ServerBusy is the service's 503 ServerBusy, as it answers when a
// partition or the account is over its scalability targets.
func ServerBusy() Action {
	return Fail(http.StatusServiceUnavailable, "ServerBusy", "The server is currently unable to receive requests. Please retry your request.")
}

// InternalError is the service's 500 InternalError.
func InternalError() Action {
	return Fail(http.StatusInternalServerError, localtable.CodeInternalError, "The server encountered an internal error. Please retry the request.")
}

// OperationTimedOut is the service's 500 OperationTimedOut, which it also
// answers under load; a write so answered may have been applied.
func OperationTimedOut() Action {
	return Fail(http.StatusInternalServerError, "OperationTimedOut", "The operation could not be completed within the permitted time.")
}

// TableBeingDeleted is the service's 409 TableBeingDeleted.
func TableBeingDeleted() Action {
	return Fail(http.StatusConflict, "TableBeingDeleted", "The specified table is being deleted.")
}

// ConditionNotMet is the service's 412 UpdateConditionNotSatisfied, as
// when another writer changed the entity first.
func ConditionNotMet() Action {
	return Fail(http.StatusPreconditionFailed, localtable.CodeUpdateConditionNotSatisfied, "The update condition specified in the request was not satisfied.")
}

// Delay holds the request for d of the server's Clock before serving it
// (with AfterApply: before sending the response). On the default clock
// that is a real sleep; on a manual clock (WithTime), the request waits
// until the test advances the clock past it.
func Delay(d time.Duration) Action {
	return Action{kind: actDelay, delay: Fixed(d), label: "delay " + d.String()}
}

// DelayBy is Delay with a delay drawn from a distribution.
func DelayBy(l Latency) Action {
	return Action{kind: actDelay, delay: l, label: "delay"}
}

// DropConnection closes the connection without a response: the client
// sees a transport error (io.EOF or a reset), which the SDKs retry, a
// POST included.
func DropConnection() Action { return Action{kind: actDrop} }

// Timeout never answers: the request hangs until the client gives up
// (its context ends, or the SDK's per-try timeout,
// ClientOptions.Retry.TryTimeout) or the server closes. Give the client a
// deadline, or the test waits for it.
func Timeout() Action { return Action{kind: actTimeout} }

// TruncateBody serves the request and sends its status, headers and the
// first n bytes of its body (at most all but the last byte), then closes
// the connection: reading the body fails with io.ErrUnexpectedEOF. The
// request is always applied.
func TruncateBody(n int) Action { return Action{kind: actTruncate, n: n} }

// String describes the action.
func (a Action) String() string {
	switch a.kind {
	case actFail:
		return fmt.Sprintf("%d %s", a.status, a.err.Code)
	case actDelay:
		return a.label
	case actDrop:
		return "drop connection"
	case actTimeout:
		return "timeout"
	case actTruncate:
		return fmt.Sprintf("truncate body at %d bytes", a.n)
	}
	return "no action"
}

// Inject puts a fault rule in force until it is removed (or, with Times,
// used up) and returns it. Requests that match it, through any client,
// get its action; the request log shows which.
func (k *Kit) Inject(r Rule) *Fault {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nextFault++
	f := &Fault{rule: r, k: k, id: k.nextFault}
	k.faults = append(k.faults, f)
	return f
}

// ClearFaults removes every fault rule.
func (k *Kit) ClearFaults() {
	k.mu.Lock()
	faults := k.faults
	k.faults = nil
	k.mu.Unlock()
	for _, f := range faults {
		f.mu.Lock()
		f.removed = true
		f.mu.Unlock()
	}
}
