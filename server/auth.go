package server

import (
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/reqclass"
	"github.com/localtable/localtable/server/internal/auth"
)

// This file connects requests to package auth, which authenticates them
// (docs/protocol.md §8) and authorizes their operations against what a shared
// access signature grants.

// MaxRequestDateSkew is how far a Shared Key request's x-ms-date (or Date)
// may lie from the server's clock, before or after it: the service refuses
// a request older than 15 minutes, against replay.
const MaxRequestDateSkew = auth.MaxRequestDateSkew

// StorageAudience is the resource ID of Azure Storage, the audience of
// the tokens that Azure SDK clients request for the Table service.
const StorageAudience = auth.StorageAudience

// TokenClockSkew is the leeway allowed on a bearer token's nbf and exp
// claims against the server's clock, the default of Microsoft's token
// validation.
const TokenClockSkew = auth.TokenClockSkew

// authenticate checks the request's credentials and sets rc.grant for a
// SAS. Shared Key, Shared Key Lite and valid bearer tokens grant
// everything.
func (s *Server) authenticate(rc *reqCtx) error {
	if s.opts.DisableAuth {
		return rc.checkBrowserOrigin()
	}
	g, err := auth.Authenticate(&auth.Request{
		HTTP:               rc.r,
		Query:              rc.query,
		Account:            rc.acct.name,
		Key:                rc.acct.key,
		SecondaryKey:       rc.acct.key2,
		Arrived:            rc.start,
		Now:                s.now,
		AltPaths:           rc.sharedKeyPaths(),
		Policy:             func(table, id string) (localtable.AccessPolicy, bool) { return rc.storedPolicy(table, id) },
		AcceptBearerTokens: s.opts.AcceptBearerTokens,
		Header:             rc.w.Header(),
	})
	if err != nil {
		return err
	}
	rc.grant = g
	return nil
}

// storedPolicy returns the table's access policy named id.
func (rc *reqCtx) storedPolicy(table, id string) (localtable.AccessPolicy, bool) {
	t, err := rc.acct.data.GetTable(rc.r.Context(), table)
	if err != nil {
		return localtable.AccessPolicy{}, false
	}
	ps, err := t.GetAccessPolicy(rc.r.Context())
	if err != nil {
		return localtable.AccessPolicy{}, false
	}
	for _, p := range ps {
		if p.ID == id {
			return p, true
		}
	}
	return localtable.AccessPolicy{}, false
}

// authorize checks that the request's credentials allow o on an entity
// (pk, rk) of table, or on table itself: what o needs of them is its
// reqclass.Access.
func (rc *reqCtx) authorize(o reqclass.Op, table, pk, rk string) error {
	return rc.grant.Authorize(o.Access(), table, pk, rk)
}

// checkBrowserOrigin is the one check of a request without authentication
// (Options.DisableAuth): a request with an Origin header comes from a
// browser running some site's script, and is refused (403
// AuthorizationFailure) unless a CORS rule of the account allows that
// origin and method. Without it any page the user visits could write to
// the server, as its POSTs of text/plain or form bodies need no
// preflight. Clients other than browsers send no Origin.
func (rc *reqCtx) checkBrowserOrigin() error {
	origin := rc.r.Header.Get("Origin")
	if origin == "" || rc.acct.corsRules(rc.r.Context(), rc.s.log).Allows(origin, rc.r.Method) {
		return nil
	}
	return wireError(codeAuthorizationFailure, "This request is not authorized to perform this operation: authentication is off (no-auth), and no CORS rule of the account allows a browser request from origin "+origin+" with "+rc.r.Method+".")
}
