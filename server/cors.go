package server

import "net/http"

// This file connects requests to the account's CORS rules (package cors).

// servePreflight answers an OPTIONS request, a CORS preflight of any
// resource of the account. It is anonymous: credentials, path and query
// play no part.
func (rc *reqCtx) servePreflight() {
	if err := rc.acct.corsRules(rc.r.Context(), rc.s.log).Preflight(rc.r.Header, rc.w.Header()); err != nil {
		rc.fail(err)
		return
	}
	rc.writeHeader(http.StatusOK)
}

// addCORSHeaders adds the Access-Control headers of an actual request to
// the response, just before its status is sent. The responses inside a
// batch's body get none.
func (rc *reqCtx) addCORSHeaders() {
	if !rc.outer || rc.acct == nil || rc.r.Method == http.MethodOptions {
		return
	}
	rc.acct.corsRules(rc.r.Context(), rc.s.log).AddHeaders(rc.r.Method, rc.r.Header, rc.w.Header())
}
