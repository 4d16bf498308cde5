package localtabletest

import (
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/testkit"
)

// Rule is a declarative fault: which requests it matches, what happens to
// them, and how often. Add one with Server.Inject.
//
// A request matches when every matcher that is set matches: one of Ops,
// Table (case-insensitive, as table names are), PartitionKey, Method and
// When. The empty PartitionKey is "any": to match the empty key itself,
// use When. Rules are tried in the order they were added; the first that
// matches and fires acts, the others let the request by. Skip lets the
// first Skip matching requests through; Times is how many requests the
// rule acts on (0: until it is removed); Probability, in (0, 1), makes it
// act with that probability, drawn from the server's seeded source
// (WithSeed). AfterApply serves the request first and then acts on the
// answer, as when the service commits a write and the response is lost.
type Rule = testkit.Rule

// Fault is a rule in force. It is safe for concurrent use.
type Fault = testkit.Fault

// Action is what a fault rule does to a request: answer with a service
// error, delay it, drop the connection, never answer, or cut the
// response body short. Make one with Fail (or ServerBusy and the other
// service errors), Delay, DropConnection, Timeout or TruncateBody.
type Action = testkit.Action

// Fail answers with a service error: the status, the error code (in the
// x-ms-error-code header and the body) and the message, in the body
// format of the operation (JSON for tables and entities, XML for ACLs and
// service properties), with the request id and time the service appends.
// A status of 0 is the one the service answers code with
// (server.HTTPStatus).
func Fail(status int, code localtable.ErrorCode, message string) Action {
	return testkit.Fail(status, code, message)
}

// ServerBusy is the service's 503 ServerBusy, as it answers when a
// partition or the account is over its scalability targets.
func ServerBusy() Action { return testkit.ServerBusy() }

// InternalError is the service's 500 InternalError.
func InternalError() Action { return testkit.InternalError() }

// OperationTimedOut is the service's 500 OperationTimedOut, which it also
// answers under load; a write so answered may have been applied.
func OperationTimedOut() Action { return testkit.OperationTimedOut() }

// TableBeingDeleted is the service's 409 TableBeingDeleted.
func TableBeingDeleted() Action { return testkit.TableBeingDeleted() }

// ConditionNotMet is the service's 412 UpdateConditionNotSatisfied, as
// when another writer changed the entity first.
func ConditionNotMet() Action { return testkit.ConditionNotMet() }

// Delay holds the request for d of the server's Clock before serving it
// (with AfterApply: before sending the response). On the default clock
// that is a real sleep; on a manual clock (WithTime), the request waits
// until the test advances the clock past it.
func Delay(d time.Duration) Action { return testkit.Delay(d) }

// DelayBy is Delay with a delay drawn from a distribution.
func DelayBy(l Latency) Action { return testkit.DelayBy(l) }

// DropConnection closes the connection without a response: the client
// sees a transport error (io.EOF or a reset), which the SDKs retry, a
// POST included.
func DropConnection() Action { return testkit.DropConnection() }

// Timeout never answers: the request hangs until the client gives up
// (its context ends, or the SDK's per-try timeout,
// ClientOptions.Retry.TryTimeout) or the server closes. Give the client a
// deadline, or the test waits for it.
func Timeout() Action { return testkit.Timeout() }

// TruncateBody serves the request and sends its status, headers and the
// first n bytes of its body (at most all but the last byte), then closes
// the connection: reading the body fails with io.ErrUnexpectedEOF. The
// request is always applied.
func TruncateBody(n int) Action { return testkit.TruncateBody(n) }

// Inject puts a fault rule in force until it is removed (or, with Times,
// used up) and returns it. Requests that match it, through any client,
// get its action; the request log shows which.
func (s *Server) Inject(r Rule) *Fault { return s.kit.Inject(r) }

// ClearFaults removes every fault rule.
func (s *Server) ClearFaults() { s.kit.ClearFaults() }
