package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/localtable/localtable"
)

// The helpers of localtable's own JSON extensions (indexes.go, expiry.go,
// testcontrols.go).

// accountKeyOnly fails the request, and returns false, unless it is
// authorized with the account key (or the server checks no
// authorization): for the extensions that only the account's owner uses
// (indexes, expiry). what says what they are, as the error's subject.
func (rc *reqCtx) accountKeyOnly(what string) bool {
	switch {
	case rc.grant != nil:
		rc.fail(rc.authorize(rc.cls.Op, rc.cls.Table, "", ""))
		return false
	case !rc.s.opts.DisableAuth && strings.HasPrefix(rc.r.Header.Get("Authorization"), "Bearer "):
		rc.fail(wireError(codeAuthorizationFailure, what+" with the account key (Shared Key or Shared Key Lite), not with a bearer token."))
		return false
	}
	return true
}

// answerJSON answers 200 with v as a JSON line.
func (rc *reqCtx) answerJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		rc.fail(err)
		return
	}
	rc.w.Header().Set("Content-Type", "application/json")
	rc.writeHeader(http.StatusOK)
	rc.w.Write(append(b, '\n'))
}

// readJSON reads a body of at most limit bytes into v, and reports
// whether it did; else it failed the request, an InvalidInput that says
// the body is not want.
func (rc *reqCtx) readJSON(limit int64, v any, want string) bool {
	body, err := rc.readBody(limit)
	if err != nil {
		rc.fail(err)
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		rc.fail(wireError(localtable.CodeInvalidInput, "The body is not "+want+": "+err.Error()))
		return false
	}
	return true
}
