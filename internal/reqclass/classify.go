// Package reqclass classifies requests to the Table service: which
// operation a request names, on which account, table and entity, and
// what the operation needs. It is the one classifier of the server's
// router and authorization, the CLI's request log and localtabletest's
// fault rules, and its table of operations (ops.go) is the one place
// that lists them.
package reqclass

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/localtable/localtable/internal/odata"
)

// SecondarySuffix turns an account name into its read-only secondary
// endpoint's name: devstoreaccount1-secondary.
const SecondarySuffix = "-secondary"

// Problem is why a request names no operation, as the server finds it.
// The problems come in three groups, in the order the server meets them:
// before it looks up the account (EarlyProblem), after it and before
// authentication (TunnelProblem), and when it dispatches.
type Problem uint8

// The problems.
const (
	OK            Problem = iota // the request names an operation (or is a preflight)
	BadURI                       // the path does not start with / or does not unescape
	BadAccount                   // the account segment is empty or does not unescape
	ExtraSegments                // more path segments than the account and one resource
	BadQuery                     // the query string does not unescape (Request.Err says why)

	TunnelNotPost // X-HTTP-Method on a verb other than POST
	TunnelCount   // X-HTTP-Method sent more than once
	TunnelValue   // X-HTTP-Method other than MERGE, PUT, PATCH or DELETE

	NeedRestype      // the account root without restype=service
	BadComp          // the account root with a comp= other than properties or stats
	BadTablePath     // Tables(…) without one OData string literal
	BadResource      // a resource path that names nothing: t1(…, (…)
	BadKeys          // an entity's key list that does not parse
	MethodNotAllowed // a verb the resource does not serve
)

// EarlyProblem reports whether the server meets p before it looks up the
// account.
func (p Problem) EarlyProblem() bool { return p >= BadURI && p <= BadQuery }

// TunnelProblem reports whether p is a bad X-HTTP-Method header, which
// the server meets after the account and before authentication.
func (p Problem) TunnelProblem() bool { return p >= TunnelNotPost && p <= TunnelValue }

// Request is a classified request.
type Request struct {
	// Op is the operation; Unknown when Problem is not OK.
	Op Op
	// Problem is why the request names no operation, OK if it does.
	Problem Problem
	// Err is the cause of a BadQuery.
	Err error
	// Method is the verb, after X-HTTP-Method tunnelling.
	Method string
	// Account is the account segment of the path, unescaped: an account
	// name, or an account's name with SecondarySuffix. Empty in a batch
	// operation.
	Account string
	// DoubledSecondary reports the Python SDK's path for the secondary
	// endpoint: /account-secondary/account/…, the primary account named
	// again after the secondary's.
	DoubledSecondary bool
	// Resource is what the path addresses, and Table, PartitionKey and
	// RowKey what it names of it: the table of Tables('t1') and of an
	// entity path, the keys of an entity path.
	Resource     Resource
	Table        string
	PartitionKey string
	RowKey       string
	// Query is the query string, read as ParseQuery reads it; nil for a
	// problem before it was read.
	Query url.Values
	// XML reports whether the server answers the request in XML: the
	// account root and a table's ?comp=acl.
	XML bool
}

// Classify classifies a request to the server, as its router reads it:
// the escaped path (a %2F inside a key does not split it), the account
// segment, the secondary endpoint's forms, the query, the verb after
// X-HTTP-Method tunnelling, and If-Match, which tells an update from an
// upsert.
func Classify(r *http.Request) Request {
	c := Request{Method: r.Method}
	p := r.URL.EscapedPath()
	if !strings.HasPrefix(p, "/") {
		c.Problem = BadURI
		return c
	}
	acctSeg, rest, _ := strings.Cut(p[1:], "/")
	name, err := url.PathUnescape(acctSeg)
	if err != nil || name == "" {
		c.Problem = BadAccount
		return c
	}
	c.Account = name
	if r.Method == http.MethodOptions {
		c.Op = Preflight
		return c
	}
	rest = strings.TrimSuffix(rest, "/")
	if primary, ok := strings.CutSuffix(name, SecondarySuffix); ok {
		rest, c.DoubledSecondary = stripDoubledSecondary(rest, primary, r.URL.RawQuery)
	}
	if strings.Contains(rest, "/") {
		c.Problem = ExtraSegments
		return c
	}
	seg, err := url.PathUnescape(rest)
	if err != nil {
		c.Problem = BadURI
		return c
	}
	if c.Query, err = ParseQuery(r.URL.RawQuery); err != nil {
		c.Problem, c.Err, c.Query = BadQuery, err, nil
		return c
	}
	resProblem := c.readResource(seg, false)
	comp := c.Query.Get("comp")
	c.XML = c.Resource == Service || (c.Resource == EntitySet && comp == "acl")
	if c.Method, c.Problem = tunnel(r); c.Problem != OK {
		c.Method = r.Method
		return c
	}
	if resProblem != OK {
		c.Problem = resProblem
		return c
	}
	if c.Resource == Service && c.Query.Get("restype") != "service" {
		c.Problem = NeedRestype
		return c
	}
	c.match(comp, r.Header.Get("If-Match") != "")
	return c
}

// ClassifyBatchOp classifies an operation of a $batch body, as the
// server reads it: the last segment of its URL's path is a table or an
// entity, whose keys the SDKs do not quote-double (an unparsable key list
// is read greedily), with no X-HTTP-Method tunnelling and no comp=.
// ifMatch is the operation's If-Match header ("" if none).
func ClassifyBatchOp(method string, u *url.URL, ifMatch string) Request {
	c := Request{Method: method}
	path := u.EscapedPath()
	seg, err := url.PathUnescape(path[strings.LastIndexByte(path, '/')+1:])
	if err != nil {
		c.Problem = BadURI
		return c
	}
	if c.Query, err = ParseQuery(u.RawQuery); err != nil {
		c.Problem, c.Err, c.Query = BadQuery, err, nil
		return c
	}
	if c.Problem = c.readResource(seg, true); c.Problem != OK {
		return c
	}
	c.match("", ifMatch != "")
	return c
}

// match sets c.Op to the operation of c's resource, comp and verb, or
// c.Problem to MethodNotAllowed (BadComp at the account root).
func (c *Request) match(comp string, hasIfMatch bool) {
	known := false // some operation of the resource takes comp
	for o := range ops {
		s := &ops[o]
		if !slices.Contains(s.resources, c.Resource) || s.comp != comp {
			continue
		}
		known = true
		if slices.Contains(s.methods, c.Method) &&
			(s.ifMatch == anyIfMatch || (s.ifMatch == withIfMatch) == hasIfMatch) {
			c.Op = Op(o)
			return
		}
	}
	if !known && comp != "" && c.Resource != Service {
		c.match("", hasIfMatch) // a comp= the resource does not take is ignored
		return
	}
	c.Problem = MethodNotAllowed
	if !known {
		c.Problem = BadComp
	}
}

// readResource reads the unescaped path segment after the account into
// c.Resource, c.Table and the keys, and returns the problem with it. In
// a batch (batchOp) the segment is always a table or an entity, and an
// unparsable key list is read greedily.
func (c *Request) readResource(seg string, batchOp bool) Problem {
	const tablesOpen = "Tables("
	switch {
	case batchOp:
	case seg == "":
		c.Resource = Service
		return OK
	case strings.EqualFold(seg, "Tables") || strings.EqualFold(seg, "Tables()"):
		c.Resource = Tables
		return OK
	case len(seg) > len(tablesOpen) && strings.EqualFold(seg[:len(tablesOpen)], tablesOpen):
		c.Resource = Table
		inner := strings.TrimSuffix(seg[len(tablesOpen):], ")")
		name, n, ok := odata.ReadString(inner)
		if !ok || n != len(inner) || !strings.HasSuffix(seg, ")") {
			return BadTablePath
		}
		c.Table = name
		return OK
	case seg == "$batch":
		c.Resource = Batch
		return OK
	case seg == "$changes":
		c.Resource = Changes
		return OK
	case seg == "$test":
		c.Resource = TestControls
		return OK
	}
	open := strings.IndexByte(seg, '(')
	if open < 0 {
		if seg == "" {
			return BadResource
		}
		c.Resource, c.Table = EntitySet, seg
		return OK
	}
	if open == 0 || !strings.HasSuffix(seg, ")") {
		return BadResource
	}
	c.Table = seg[:open]
	inner := seg[open+1 : len(seg)-1]
	if strings.TrimSpace(inner) == "" {
		c.Resource = Query
		return OK
	}
	c.Resource = Entity
	pk, rk, err := odata.ParseKeys(inner)
	if err != nil && batchOp {
		if m := greedyKeys.FindStringSubmatch(inner); m != nil {
			pk, rk, err = m[1], m[2], nil
		}
	}
	if err != nil {
		return BadKeys
	}
	c.PartitionKey, c.RowKey = pk, rk
	return OK
}

// greedyKeys reads a batch operation's key list that does not parse as
// OData literals: the SDKs do not quote-double a quote inside a key there.
var greedyKeys = regexp.MustCompile(`^\s*PartitionKey\s*=\s*'(.*)'\s*,\s*RowKey\s*=\s*'(.*)'\s*$`)

// tunnel returns the request's verb, honouring X-HTTP-Method tunnelling:
// a POST carrying X-HTTP-Method: MERGE (or PUT, DELETE, PATCH) acts as
// that verb.
func tunnel(r *http.Request) (string, Problem) {
	vals := r.Header.Values("X-HTTP-Method")
	switch {
	case len(vals) == 0:
		return r.Method, OK
	case r.Method != http.MethodPost:
		return "", TunnelNotPost
	case len(vals) > 1:
		return "", TunnelCount
	}
	switch m := strings.ToUpper(strings.TrimSpace(vals[0])); m {
	case "MERGE", http.MethodPut, http.MethodDelete, http.MethodPatch:
		return m, OK
	}
	return "", TunnelValue
}

// stripDoubledSecondary removes the primary account's name from the front
// of rest, the path after /account-secondary/, when it is there: the
// Python SDK (azure-data-tables 12.x) sends a path-style request for the
// secondary to /account-secondary/account/… (it swaps the host part of
// the URL only). A table named like the account is still reachable as
// /account-secondary/account() or …/account(PartitionKey=…).
func stripDoubledSecondary(rest, primary string, query string) (string, bool) {
	if r, ok := strings.CutPrefix(rest, primary+"/"); ok {
		return r, true
	}
	if rest == primary && strings.Contains(query, "restype=service") {
		return "", true
	}
	return rest, false
}

// ParseQuery reads a query string as url.ParseQuery does, but accepts
// unescaped semicolons inside values ($format=application/json;odata=…).
func ParseQuery(raw string) (url.Values, error) {
	q := url.Values{}
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			return nil, err
		}
		if v, err = url.QueryUnescape(v); err != nil {
			return nil, err
		}
		q.Add(k, v)
	}
	return q, nil
}
