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
// are validated in bearer.go.

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
	return wireError(localtable.CodeAuthenticationFailed, http.StatusForbidden, authFailedMessage+" "+msg)
}

func errPermission(msg string) *localtable.Error {
	return wireError(localtable.CodeAuthorizationPermissionMismatch, http.StatusForbidden,
		"This request is not authorized to perform this operation using this permission. "+msg)
}

func errResourceType(msg string) *localtable.Error {
	return wireError(localtable.CodeAuthorizationResourceTypeMismatch, http.StatusForbidden,
		"This request is not authorized to perform this operation using this resource type. "+msg)
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
			return wireError(codeNoAuthenticationInfo, http.StatusUnauthorized, challengeMessage)
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
		var toSign string
		if scheme == "SharedKey" {
			toSign = azauth.SharedKeyString(rc.acct.name, rc.r)
		} else {
			toSign = azauth.SharedKeyLiteString(rc.acct.name, rc.r)
		}
		if !azauth.Equal(azauth.Sign(rc.acct.key, toSign), sig) {
			return errAuthentication("The MAC signature found in the HTTP request is not the same as any computed signature. Server used following string to sign: " + quoteOData(toSign) + ".")
		}
		return nil
	case "Bearer":
		return s.verifyBearer(rc, strings.TrimSpace(cred))
	}
	return errAuthentication("The authorization scheme " + quoteOData(scheme) + " is not supported.")
}

// checkRequestDate checks a Shared Key request's date: x-ms-date, or Date
// when x-ms-date is absent, must be given, be an HTTP date, and lie within
// MaxRequestDateSkew of now.
func checkRequestDate(h http.Header, now time.Time) error {
	name, v := "x-ms-date", h.Get("x-ms-date")
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
	if g.accountSAS {
		return g.authorizeAccount(o)
	}
	if !o.entity() {
		return errResourceType("A service SAS grants access to the entities of one table only.")
	}
	if !strings.EqualFold(table, g.table) {
		return errResourceType("The SAS is for table " + quoteOData(g.table) + ", not " + quoteOData(table) + ".")
	}
	if err := g.need(o); err != nil {
		return err
	}
	if o != opQuery && g.hasRange && !g.rng.Contains(pk, rk) {
		return errPermission("The entity (" + quoteOData(pk) + ", " + quoteOData(rk) + ") is outside the SAS's PartitionKey/RowKey range.")
	}
	return nil
}

// need checks the permission letters o needs: r, a, u, a+u or d.
func (g *grant) need(o op) error {
	var want string
	switch o {
	case opRead, opQuery, opServiceRead:
		want = "r"
	case opAdd:
		want = "a"
	case opUpdate:
		want = "u"
	case opUpsert:
		want = "au"
	case opDelete, opDeleteTable:
		want = "d"
	case opListTables:
		want = "l"
	case opServiceWrite:
		want = "w"
	case opCreateTable:
		if strings.ContainsAny(g.perms, "ac") {
			return nil
		}
		want = "c"
	}
	for _, c := range want {
		if !strings.ContainsRune(g.perms, c) {
			return errPermission("The SAS grants " + quoteOData(g.perms) + "; this operation needs " + quoteOData(want) + ".")
		}
	}
	return nil
}

func (g *grant) authorizeAccount(o op) error {
	var rt byte
	switch {
	case o.entity():
		rt = 'o'
	case o == opListTables, o == opCreateTable, o == opDeleteTable:
		rt = 'c'
	case o == opServiceRead, o == opServiceWrite:
		rt = 's'
	default:
		return errResourceType("Table access policies need Shared Key authorization.")
	}
	if !strings.ContainsRune(g.resourceTypes, rune(rt)) {
		return errResourceType("The account SAS's signed resource types " + quoteOData(g.resourceTypes) + " do not include " + quoteOData(string(rt)) + ".")
	}
	return g.need(o)
}
