package auth

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/odata"
	"github.com/localtable/localtable/internal/reqclass"
)

// This file authenticates requests (docs/protocol.md §8) and authorizes their
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

// Op is an operation, as authorization sees it: what it needs of a
// credential, from the table of operations in package reqclass.
type Op = reqclass.Access

// The operations of the Table service, as a SAS grants them.
const (
	OpRead         = reqclass.AccessRead         // Query Entity: get one entity
	OpQuery        = reqclass.AccessQuery        // Query Entities
	OpAdd          = reqclass.AccessAdd          // Insert Entity
	OpUpdate       = reqclass.AccessUpdate       // Update Entity, Merge Entity
	OpUpsert       = reqclass.AccessUpsert       // Insert Or Replace Entity, Insert Or Merge Entity
	OpDelete       = reqclass.AccessDelete       // Delete Entity
	OpListTables   = reqclass.AccessListTables   // Query Tables
	OpCreateTable  = reqclass.AccessCreateTable  // Create Table
	OpDeleteTable  = reqclass.AccessDeleteTable  // Delete Table
	OpACL          = reqclass.AccessACL          // Get Table ACL, Set Table ACL
	OpServiceRead  = reqclass.AccessServiceRead  // Get Table Service Properties, Get Table Service Stats
	OpServiceWrite = reqclass.AccessServiceWrite // Set Table Service Properties
	OpChanges      = reqclass.AccessChanges      // Watch Changes (localtable's change feed)
	OpIndexes      = reqclass.AccessIndexes      // a table's declared indexes and expiry policy (localtable's)
)

func isEntity(o Op) bool { return o <= OpDelete }

// authFailedMessage is the service's message for AuthenticationFailed; the
// server appends what failed.
// invalidAuthInfoMessage is the service's message for
// InvalidAuthenticationInfo when the credentials are not in a form it
// accepts.
const invalidAuthInfoMessage = "Authentication information is not given in the correct format. Check the value of Authorization header."

const authFailedMessage = "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."

func errAuthentication(msg string) *localtable.Error {
	return newError(codeAuthenticationFailed, authFailedMessage+" "+msg)
}

func errPermission(msg string) *localtable.Error {
	return newError(codeAuthorizationPermissionMismatch,
		"This request is not authorized to perform this operation using this permission. "+msg)
}

func errResourceType(msg string) *localtable.Error {
	return newError(codeAuthorizationResourceTypeMismatch,
		"This request is not authorized to perform this operation using this resource type. "+msg)
}

// errAuthorization is the service's answer to a SAS used for an operation
// no SAS of its kind may perform (such as reading or setting an ACL).
func errAuthorization(msg string) *localtable.Error {
	return newError(codeAuthorizationFailure,
		"This request is not authorized to perform this operation. "+msg)
}

// Request is a request to authenticate, with what the server knows of it.
type Request struct {
	// HTTP is the request as it arrived.
	HTTP *http.Request
	// Query is its query string, parsed.
	Query url.Values
	// Account and Key are the account the request addresses and its key;
	// SecondaryKey, if not nil, is its second key, which signs requests
	// as well as Key does (as a storage account's key2).
	Account      string
	Key          []byte
	SecondaryKey []byte
	// Arrived is the server's clock when the request arrived: a Shared
	// Key request's date and a bearer token's lifetime are checked
	// against it.
	Arrived time.Time
	// DatedAt is the time a Shared Key request's date is checked against;
	// zero: Arrived.
	DatedAt time.Time
	// Now reads the server's clock: a SAS's validity window is checked
	// against it.
	Now func() time.Time
	// AltPaths are other escaped paths that a Shared Key signature of the
	// request may have signed (at the secondary endpoint); the request's
	// own path is tried first and is the one errors report.
	AltPaths []string
	// Policy returns the stored access policy id of table, for a service
	// SAS that names one (si); ok is false when the table has none such.
	Policy func(table, id string) (p localtable.AccessPolicy, ok bool)
	// AcceptBearerTokens accepts bearer tokens (over TLS).
	AcceptBearerTokens bool
	// Header is the response's header, where a bearer challenge sets
	// WWW-Authenticate.
	Header http.Header
}

// Authenticate checks the request's credentials and returns what they
// grant: nil (everything) for Shared Key, Shared Key Lite and valid bearer
// tokens, the SAS's grant for a shared access signature.
func Authenticate(req *Request) (*Grant, error) {
	if req.Query.Has("sig") {
		if strings.TrimSpace(req.HTTP.Header.Get("Authorization")) != "" {
			// The service takes one credential: a request carrying a SAS
			// and an Authorization header is not authorized by either. It
			// answers InvalidAuthenticationInfo, "Authentication
			// information is not given in the correct format. Check the
			// value of Authorization header.", as recorded for a request
			// with a SAS in its URL and an Authorization header
			// (github.com/Azure/iothub-explorer issue 58; that answer was
			// 400, where this code's documented status, ours, is 401).
			return nil, newError(codeInvalidAuthenticationIn, invalidAuthInfoMessage+
				" The request carries both a shared access signature and an Authorization header; use one.")
		}
		return verifySAS(req)
	}
	auth := strings.TrimSpace(req.HTTP.Header.Get("Authorization"))
	if auth == "" {
		if req.AcceptBearerTokens && bearerChallenge(req.HTTP) {
			// From version 2020-12-06 the Table service answers an
			// anonymous request with a bearer challenge.
			challenge(req.Header, "common")
			return nil, newError(codeNoAuthenticationInfo, challengeMessage)
		}
		return nil, errAuthentication("The request carries no Authorization header and no shared access signature.")
	}
	scheme, cred, _ := strings.Cut(auth, " ")
	switch scheme {
	case "SharedKey", "SharedKeyLite":
		dated := req.Arrived
		if !req.DatedAt.IsZero() {
			dated = req.DatedAt
		}
		if err := checkRequestDate(req.HTTP.Header, dated); err != nil {
			return nil, err
		}
		name, sig, ok := strings.Cut(strings.TrimSpace(cred), ":")
		if !ok || name != req.Account {
			return nil, errAuthentication("The Authorization header must be " + scheme + " " + req.Account + ":<signature>.")
		}
		toSign := sharedKeyStrings(req, scheme == "SharedKeyLite")
		for _, s := range toSign {
			if req.signedWith(s, sig) {
				return nil, nil
			}
		}
		return nil, errAuthentication("The MAC signature found in the HTTP request is not the same as any computed signature. Server used following string to sign: " + odata.Quote(toSign[0]) + ".")
	case "Bearer":
		return nil, verifyBearer(req, strings.TrimSpace(cred))
	}
	return nil, errAuthentication("The authorization scheme " + odata.Quote(scheme) + " is not supported.")
}

// sharedKeyStrings returns the strings a Shared Key (or Shared Key Lite)
// signature of the request may sign: the request as sent, then the
// request at each of req.AltPaths.
func sharedKeyStrings(req *Request, lite bool) []string {
	sign := SharedKeyString
	if lite {
		sign = SharedKeyLiteString
	}
	out := []string{sign(req.Account, req.HTTP)}
	for _, p := range req.AltPaths {
		u := *req.HTTP.URL
		u.RawPath = p
		var err error
		if u.Path, err = url.PathUnescape(p); err != nil {
			continue
		}
		r2 := req.HTTP.WithContext(req.HTTP.Context())
		r2.URL = &u
		out = append(out, sign(req.Account, r2))
	}
	return out
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
		return errAuthentication("The Date header in the request is incorrect: " + name + " " + odata.Quote(v) + " is not an RFC 1123 date.")
	}
	switch {
	case t.Before(now.Add(-MaxRequestDateSkew)):
		return errAuthentication("Request date header too old: " + odata.Quote(t.UTC().Format(http.TimeFormat)) +
			"; the server's time is " + odata.Quote(now.UTC().Format(http.TimeFormat)) + " and a request may be at most 15 minutes old.")
	case t.After(now.Add(MaxRequestDateSkew)):
		return errAuthentication("Request date header too far in the future: " + odata.Quote(t.UTC().Format(http.TimeFormat)) +
			"; the server's time is " + odata.Quote(now.UTC().Format(http.TimeFormat)) + " and a request may be at most 15 minutes ahead of it.")
	}
	return nil
}

// Authorize checks that g allows o on an entity (pk, rk) of table, or on
// table itself. A nil Grant (Shared Key, a bearer token) allows
// everything.
func (g *Grant) Authorize(o Op, table, pk, rk string) error {
	if g == nil {
		return nil
	}
	if o == OpIndexes {
		return errAuthorization("A table's indexes and expiry policy (comp=indexes, comp=expiry: localtable extensions) are read and set with the account key (Shared Key or Shared Key Lite), not with a shared access signature.")
	}
	if o == OpACL {
		// Neither kind of SAS delegates Get/Set Table ACL.
		return errAuthorization("A table's access policies can be read and set with Shared Key or a bearer token, not with a shared access signature.")
	}
	if g.accountSAS {
		return g.authorizeAccount(o)
	}
	if o == OpChanges {
		return errAuthorization("The change feed ($changes) reads every table of the account: a service SAS, which is for one table, does not grant it; use an account SAS (ss=t, srt=co, sp=r) or Shared Key.")
	}
	if !isEntity(o) {
		return errAuthorization("A service SAS grants access to the entities of one table only: it cannot list, create or delete tables, nor read or set service properties.")
	}
	if !strings.EqualFold(table, g.table) {
		return errAuthorization("The SAS is for table " + odata.Quote(g.table) + ", not " + odata.Quote(table) + ".")
	}
	if err := g.need(o); err != nil {
		return err
	}
	if o != OpQuery && g.hasRange && !g.rng.Contains(pk, rk) {
		return errPermission("The entity (" + odata.Quote(pk) + ", " + odata.Quote(rk) + ") is outside the SAS's PartitionKey/RowKey range.")
	}
	return nil
}

// need checks the permission letters an entity operation needs, the same
// for a service SAS and an account SAS: r to get or query, a to insert, u
// to update or merge, a and u to insert-or-replace or insert-or-merge, d
// to delete.
func (g *Grant) need(o Op) error {
	var want string
	switch o {
	case OpRead, OpQuery:
		want = "r"
	case OpAdd:
		want = "a"
	case OpUpdate:
		want = "u"
	case OpUpsert:
		want = "au"
	case OpDelete:
		want = "d"
	}
	return g.needAll(want)
}

// needAll checks that the SAS grants every letter of want.
func (g *Grant) needAll(want string) error {
	for _, c := range want {
		if !strings.ContainsRune(g.perms, c) {
			return errPermission("The SAS grants " + odata.Quote(g.perms) + "; this operation needs " + odata.Quote(want) + ".")
		}
	}
	return nil
}

// authorizeAccount checks o against an account SAS, as the service's
// table of Table service operations for an account SAS says: service
// properties and stats are srt=s with r (get) or w (set); Query Tables is
// srt=c with l, Create Table srt=c with c or w, Delete Table srt=c with d;
// entity operations are srt=o with the letters need lists. The change
// feed, localtable's own, reads the tables and their entities: srt=c and
// srt=o, with r.
func (g *Grant) authorizeAccount(o Op) error {
	if o == OpChanges {
		if !strings.Contains(g.resourceTypes, "c") || !strings.Contains(g.resourceTypes, "o") {
			return errResourceType("The account SAS's signed resource types " + odata.Quote(g.resourceTypes) + " do not include both 'c' and 'o', which the change feed needs: it reads the tables and their entities.")
		}
		return g.needAll("r")
	}
	var rt byte
	switch {
	case isEntity(o):
		rt = 'o'
	case o == OpListTables, o == OpCreateTable, o == OpDeleteTable:
		rt = 'c'
	default: // OpServiceRead, OpServiceWrite
		rt = 's'
	}
	if !strings.ContainsRune(g.resourceTypes, rune(rt)) {
		return errResourceType("The account SAS's signed resource types " + odata.Quote(g.resourceTypes) + " do not include " + odata.Quote(string(rt)) + ", which this operation needs.")
	}
	switch o {
	case OpListTables:
		return g.needAll("l")
	case OpCreateTable:
		if strings.ContainsAny(g.perms, "cw") {
			return nil
		}
		return errPermission("The SAS grants " + odata.Quote(g.perms) + "; creating a table needs 'c' or 'w'.")
	case OpDeleteTable:
		return g.needAll("d")
	case OpServiceRead:
		return g.needAll("r")
	case OpServiceWrite:
		return g.needAll("w")
	}
	return g.need(o)
}

// signedWith reports whether sig is the signature of toSign with the
// account's key or its secondary key.
func (req *Request) signedWith(toSign, sig string) bool {
	return Equal(Sign(req.Key, toSign), sig) || (req.SecondaryKey != nil && Equal(Sign(req.SecondaryKey, toSign), sig))
}
