package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/odata"
	"github.com/localtable/localtable/internal/reqclass"
)

// This file serves the read-access secondary endpoint. The service
// replicates a read-access geo-redundant account to a second region,
// reachable as <account>-secondary; here every served account has one,
// at http://host:port/<account>-secondary/…, over the same data (so it is
// never behind). It serves reads; every write is 403
// InsufficientAccountPermissions. Get Table Service Stats is answered
// there only.

// SecondarySuffix turns an account name into its read-only secondary
// endpoint's name: devstoreaccount1-secondary.
const SecondarySuffix = reqclass.SecondarySuffix

// Error codes of the secondary endpoint and of account lookup.
const (
	codeInsufficientAccountPermissions localtable.ErrorCode = "InsufficientAccountPermissions"
	codeAccountNotFound                localtable.ErrorCode = "AccountNotFound"
)

// lookupAccount returns the account a path's first segment names: an
// account served under that name, or, for <name>-secondary, the
// secondary endpoint of account <name>.
func (s *Server) lookupAccount(name string) (acct *account, secondary bool) {
	if a := s.accounts[name]; a != nil {
		return a, false
	}
	if base, ok := strings.CutSuffix(name, SecondarySuffix); ok {
		if a := s.accounts[base]; a != nil {
			return a, true
		}
	}
	return nil, false
}

// errAccountNotFound is the service's answer for an account it does not
// hold.
func errAccountNotFound(name string) *localtable.Error {
	return wireError(codeAccountNotFound, "The specified account does not exist. (No account "+odata.Quote(name)+" is served here.)")
}

// errSecondaryWrite is the service's answer to a write at the secondary
// endpoint.
func errSecondaryWrite() *localtable.Error {
	return wireError(codeInsufficientAccountPermissions, "Write operations are not allowed.")
}

// isWrite reports whether a verb (after X-HTTP-Method tunnelling) writes.
func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, "MERGE", http.MethodDelete:
		return true
	}
	return false
}

// sharedKeyPaths returns the escaped paths besides the request's own
// that a Shared Key (or Shared Key Lite) signature of the request may
// sign: at the secondary endpoint, the request with the primary account
// name in its path. The service's rule is to leave "-secondary" out of
// the canonicalized resource (with host-style URLs it is only in the host
// name); the SDKs sign path-style URLs exactly as sent, so both are
// accepted, as Azurite accepts them.
func (rc *reqCtx) sharedKeyPaths() []string {
	if !rc.secondary {
		return nil
	}
	p := rc.r.URL.EscapedPath()
	_, rest, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	primary := "/" + url.PathEscape(rc.acct.name) + "/" + rest
	if !strings.Contains(p[1:], "/") {
		primary = "/" + url.PathEscape(rc.acct.name)
	}
	if _, err := url.PathUnescape(primary); err != nil {
		return nil
	}
	out := []string{primary}
	if rc.doubledSecondary {
		// The Python SDK signs the primary URL, /account/…, and then moves
		// the request to /account-secondary/account/… (see
		// reqclass.Request.DoubledSecondary).
		out = append(out, "/"+rest)
	}
	return out
}
