package server

import (
	"net/http"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/reqclass"
)

// WriteError answers r with e as the server answers its own failures:
// status (0: the status of e's code, HTTPStatus); the x-ms-request-id, Date and x-ms-version headers; the
// x-ms-error-code header (from version 2017-07-29); CORS headers for the
// account's rules; and a body in the operation's error format: odata.error
// JSON for table and entity operations, OData XML for the ACL and service
// operations and for versions before 2013-08-15. Its message gets the
// request id and time appended, as the service's do.
//
// It is for harnesses that put service failures on the wire in front of
// the server, as package localtabletest's fault rules do, with any status
// and code. A nil e answers 500 InternalError.
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, status int, e *localtable.Error) {
	rc := s.startRequest(w, r)
	h := w.Header()
	v, err := s.requestVersion(r)
	if err != nil {
		v = LatestVersion
	}
	rc.setVersion(v)
	if c := reqclass.Classify(r); c.Account != "" {
		rc.acct, rc.secondary = s.lookupAccount(c.Account)
		rc.acctName = c.Account
		if c.Query != nil {
			rc.query = c.Query
			rc.xmlAPI = c.XML
		}
	}
	if rc.xmlAPI {
		h.Del("X-Content-Type-Options")
		h.Del("Cache-Control")
	}
	if e == nil {
		e, status = errInternal("The server encountered an internal error. Please retry the request."), 0
	}
	if status == 0 {
		status = HTTPStatus(e.Code)
	}
	rc.writeError(status, e, e) // an injected failure: not logged as the server's
}
