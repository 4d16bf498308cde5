package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server/internal/azauth"
)

// This file authenticates requests (PROTOCOL.md §8) and authorizes their
// operations against what a shared access signature grants. Bearer tokens
// are validated in bearer.go, shared access signatures in sas.go.

// Authorization error codes of the service's SAS error table.
const (
	codeAuthorizationFailure          localtable.ErrorCode = "AuthorizationFailure"
	codeAuthorizationProtocolMismatch localtable.ErrorCode = "AuthorizationProtocolMismatch"
	codeAuthorizationServiceMismatch  localtable.ErrorCode = "AuthorizationServiceMismatch"
	codeAuthorizationSourceIPMismatch localtable.ErrorCode = "AuthorizationSourceIPMismatch"
)

// MaxRequestDateSkew is how far a Shared Key request's x-ms-date (or Date)
// may lie from the server's clock, before or after it: the service refuses
// a request older than 15 minutes, against replay.
const MaxRequestDateSkew = 15 * time.Minute

// op is an operation, as authorization sees it.
type op int

const (
	opRead op = iota // get one entity
	opQuery
	opAdd
	opUpdate
	opUpsert
	opDelete
	opListTables
	opCreateTable
	opDeleteTable
	opACL
	opServiceRead
	opServiceWrite
)

func (o op) entity() bool { return o <= opDelete }

// authFailedMessage is the service's message for AuthenticationFailed; the
// server appends what failed.
const authFailedMessage = "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."

func errAuthentication(msg string) *localtable.Error {
	return wireError(localtable.CodeAuthenticationFailed, authFailedMessage+" "+msg)
}

func errPermission(msg string) *localtable.Error {
	return wireError(localtable.CodeAuthorizationPermissionMismatch,
		"This request is not authorized to perform this operation using this permission. "+msg)
}

func errResourceType(msg string) *localtable.Error {
	return wireError(localtable.CodeAuthorizationResourceTypeMismatch,
		"This request is not authorized to perform this operation using this resource type. "+msg)
}

// errAuthorization is the service's answer to a SAS used for an operation
// no SAS of its kind may perform (such as reading or setting an ACL).
func errAuthorization(msg string) *localtable.Error {
	return wireError(codeAuthorizationFailure,
		"This request is not authorized to perform this operation. "+msg)
}

// authenticate checks the request's credentials and sets rc.grant for a
// SAS. Shared Key, Shared Key Lite and valid bearer tokens grant
// everything.
func (s *Server) authenticate(rc *reqCtx) error {
	if s.opts.DisableAuth {
		return nil
	}
	if rc.query.Has("sig") {
		g, err := s.verifySAS(rc)
		if err != nil {
			return err
		}
		rc.grant = g
		return nil
	}
	auth := strings.TrimSpace(rc.r.Header.Get("Authorization"))
	if auth == "" {
		if s.opts.AcceptBearerTokens && rc.bearerChallenge() {
			// From version 2020-12-06 the Table service answers an
			// anonymous request with a bearer challenge.
			rc.challenge("common")
			return wireError(codeNoAuthenticationInfo, challengeMessage)
		}
		return errAuthentication("The request carries no Authorization header and no shared access signature.")
	}
	scheme, cred, _ := strings.Cut(auth, " ")
	switch scheme {
	case "SharedKey", "SharedKeyLite":
		if err := checkRequestDate(rc.r.Header, rc.start); err != nil {
			return err
		}
		name, sig, ok := strings.Cut(strings.TrimSpace(cred), ":")
		if !ok || name != rc.acct.name {
			return errAuthentication("The Authorization header must be " + scheme + " " + rc.acct.name + ":<signature>.")
		}
		toSign := rc.sharedKeyStrings(scheme == "SharedKeyLite")
		for _, s := range toSign {
			if azauth.Equal(azauth.Sign(rc.acct.key, s), sig) {
				return nil
			}
		}
		return errAuthentication("The MAC signature found in the HTTP request is not the same as any computed signature. Server used following string to sign: " + quoteOData(toSign[0]) + ".")
	case "Bearer":
		return s.verifyBearer(rc, strings.TrimSpace(cred))
	}
	return errAuthentication("The authorization scheme " + quoteOData(scheme) + " is not supported.")
}

// checkRequestDate checks a Shared Key request's date: x-ms-date, or Date
// when x-ms-date is absent, must be given, be an HTTP date, and lie within
// MaxRequestDateSkew of now.
func checkRequestDate(h http.Header, now time.Time) error {
	name, v := "x-ms-date", h.Get("X-Ms-Date")
	if v == "" {
		name, v = "Date", h.Get("Date")
	}
	if v == "" {
		return errAuthentication("Request date header not specified: a Shared Key request needs an x-ms-date or Date header.")
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return errAuthentication("The Date header in the request is incorrect: " + name + " " + quoteOData(v) + " is not an RFC 1123 date.")
	}
	switch {
	case t.Before(now.Add(-MaxRequestDateSkew)):
		return errAuthentication("Request date header too old: " + quoteOData(t.UTC().Format(http.TimeFormat)) +
			"; the server's time is " + quoteOData(now.UTC().Format(http.TimeFormat)) + " and a request may be at most 15 minutes old.")
	case t.After(now.Add(MaxRequestDateSkew)):
		return errAuthentication("Request date header too far in the future: " + quoteOData(t.UTC().Format(http.TimeFormat)) +
			"; the server's time is " + quoteOData(now.UTC().Format(http.TimeFormat)) + " and a request may be at most 15 minutes ahead of it.")
	}
	return nil
}

// authorize checks that the request's credentials allow o on an entity
// (pk, rk) of table, or on table itself.
func (rc *reqCtx) authorize(o op, table, pk, rk string) error {
	g := rc.grant
	if g == nil {
		return nil
	}
	if o == opACL {
		// Neither kind of SAS delegates Get/Set Table ACL.
		return errAuthorization("A table's access policies can be read and set with Shared Key or a bearer token, not with a shared access signature.")
	}
	if g.accountSAS {
		return g.authorizeAccount(o)
	}
	if !o.entity() {
		return errAuthorization("A service SAS grants access to the entities of one table only: it cannot list, create or delete tables, nor read or set service properties.")
	}
	if !strings.EqualFold(table, g.table) {
		return errAuthorization("The SAS is for table " + quoteOData(g.table) + ", not " + quoteOData(table) + ".")
	}
	if err := g.need(o); err != nil {
		return err
	}
	if o != opQuery && g.hasRange && !g.rng.Contains(pk, rk) {
		return errPermission("The entity (" + quoteOData(pk) + ", " + quoteOData(rk) + ") is outside the SAS's PartitionKey/RowKey range.")
	}
	return nil
}

// need checks the permission letters an entity operation needs, the same
// for a service SAS and an account SAS: r to get or query, a to insert, u
// to update or merge, a and u to insert-or-replace or insert-or-merge, d
// to delete.
func (g *grant) need(o op) error {
	var want string
	switch o {
	case opRead, opQuery:
		want = "r"
	case opAdd:
		want = "a"
	case opUpdate:
		want = "u"
	case opUpsert:
		want = "au"
	case opDelete:
		want = "d"
	}
	return g.needAll(want)
}

// needAll checks that the SAS grants every letter of want.
func (g *grant) needAll(want string) error {
	for _, c := range want {
		if !strings.ContainsRune(g.perms, c) {
			return errPermission("The SAS grants " + quoteOData(g.perms) + "; this operation needs " + quoteOData(want) + ".")
		}
	}
	return nil
}

// authorizeAccount checks o against an account SAS, as the service's
// table of Table service operations for an account SAS says: service
// properties and stats are srt=s with r (get) or w (set); Query Tables is
// srt=c with l, Create Table srt=c with c or w, Delete Table srt=c with d;
// entity operations are srt=o with the letters need lists.
func (g *grant) authorizeAccount(o op) error {
	var rt byte
	switch {
	case o.entity():
		rt = 'o'
	case o == opListTables, o == opCreateTable, o == opDeleteTable:
		rt = 'c'
	default: // opServiceRead, opServiceWrite
		rt = 's'
	}
	if !strings.ContainsRune(g.resourceTypes, rune(rt)) {
		return errResourceType("The account SAS's signed resource types " + quoteOData(g.resourceTypes) + " do not include " + quoteOData(string(rt)) + ", which this operation needs.")
	}
	switch o {
	case opListTables:
		return g.needAll("l")
	case opCreateTable:
		if strings.ContainsAny(g.perms, "cw") {
			return nil
		}
		return errPermission("The SAS grants " + quoteOData(g.perms) + "; creating a table needs 'c' or 'w'.")
	case opDeleteTable:
		return g.needAll("d")
	case opServiceRead:
		return g.needAll("r")
	case opServiceWrite:
		return g.needAll("w")
	}
	return g.need(o)
}
