package server

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/localtable/localtable"
)

// TestControlPath is the path segment, after the account, of localtable's
// test controls: /ACCOUNT/$test?comp=…, a localtable extension outside
// the Azure API, served only by a server given Options.TestControls (the
// command's serve --test-controls).
const TestControlPath = "$test"

// MaxTestControlBody is the largest body of a test control request.
const MaxTestControlBody = 64 << 10

// TestControls serves localtable's test controls (TestControlPath): reset,
// snapshots, fault rules, latency, the clock and the request log, for test
// suites in any language that drive a running server. The server
// authenticates each request, with the account key alone (Shared Key or
// Shared Key Lite; not a SAS, not a bearer token; anything with
// DisableAuth), and hands it on.
type TestControls interface {
	// TestControl carries out one control and returns what to answer: a
	// value sent as JSON with 200 OK, or nil for 204 No Content. An error
	// is answered as the server answers errors: a *localtable.Error with
	// its code's status (HTTPStatus), in the service's JSON error format.
	TestControl(ctx context.Context, c *TestControl) (any, error)
}

// TestControl is one request to the test controls.
type TestControl struct {
	// Name is the control, the request's comp=: reset, snapshot,
	// restore, faults, latency, clock or log.
	Name string
	// Method is the request's verb: GET reads, the others change.
	Method string
	// Account is the account's name, and Data its data.
	Account string
	Data    *localtable.Account
	// Query is the request's query string.
	Query url.Values
	// Body is the request's body, at most MaxTestControlBody bytes.
	Body []byte
}

// serveTestControl serves a test control through Options.TestControls.
func (rc *reqCtx) serveTestControl() {
	tc := rc.s.opts.TestControls
	switch {
	case tc == nil:
		rc.fail(wireError(localtable.CodeResourceNotFound, fixedMessages[localtable.CodeResourceNotFound]+" The test controls ($test, a localtable extension) are off: start the server with --test-controls (localtable serve --test-controls)."))
		return
	case rc.secondary:
		rc.fail(errSecondaryWrite())
		return
	case rc.grant != nil:
		rc.fail(wireError(codeAuthorizationFailure, "The test controls are authorized with the account key (Shared Key or Shared Key Lite), not with a shared access signature."))
		return
	case !rc.s.opts.DisableAuth && strings.HasPrefix(rc.r.Header.Get("Authorization"), "Bearer "):
		rc.fail(wireError(codeAuthorizationFailure, "The test controls are authorized with the account key (Shared Key or Shared Key Lite), not with a bearer token."))
		return
	}
	rc.limitBody(MaxTestControlBody)
	body, err := io.ReadAll(rc.r.Body)
	if err != nil {
		rc.fail(err)
		return
	}
	out, err := tc.TestControl(rc.r.Context(), &TestControl{
		Name: rc.cls.Op.Comp(), Method: rc.method, Account: rc.acct.name, Data: rc.acct.data, Query: rc.query, Body: body,
	})
	if err != nil {
		rc.fail(err)
		return
	}
	if out == nil {
		rc.writeHeader(http.StatusNoContent)
		return
	}
	rc.answerJSON(out)
}
