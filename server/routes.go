package server

import (
	"net/http"
	"net/url"
	"strings"
)

// route dispatches a request on its escaped path (never r.URL.Path: a %2F
// inside a key must not split the path), after reading its version and
// authenticating it. An OPTIONS request is a CORS preflight, answered
// without authentication.
func (s *Server) route(rc *reqCtx) {
	r := rc.r
	v, err := s.requestVersion(r)
	rc.setVersion(v)
	if err != nil {
		rc.fail(err)
		return
	}
	p := r.URL.EscapedPath()
	if !strings.HasPrefix(p, "/") {
		rc.fail(errInvalidURI("The request URI is invalid."))
		return
	}
	acctSeg, rest, _ := strings.Cut(p[1:], "/")
	name, err := url.PathUnescape(acctSeg)
	if err != nil || name == "" {
		rc.fail(errInvalidURI("The request URI is invalid: URLs are http://host:port/{account}/…"))
		return
	}
	if r.Method == http.MethodOptions {
		if rc.acct, rc.secondary = s.lookupAccount(name); rc.acct == nil {
			rc.fail(errAccountNotFound(name))
			return
		}
		rc.acctName = name
		rc.servePreflight() // anonymous, for any resource (cors.go)
		return
	}
	rest = strings.TrimSuffix(rest, "/")
	if primary, ok := strings.CutSuffix(name, SecondarySuffix); ok {
		rest, rc.doubledSecondary = stripDoubledSecondary(rest, primary, r.URL.RawQuery)
	}
	if strings.Contains(rest, "/") {
		rc.fail(errInvalidURI("The requested URI does not represent any resource on the server."))
		return
	}
	seg, err := url.PathUnescape(rest)
	if err != nil {
		rc.fail(errInvalidURI("The request URI is invalid."))
		return
	}
	if rc.query, err = parseQuery(r.URL.RawQuery); err != nil {
		rc.fail(wireError(codeInvalidQueryParameter, "The query string is invalid: "+err.Error()))
		return
	}
	rc.xmlAPI = isXMLOperation(seg, rc.query)
	if rc.xmlAPI {
		// As the service: its XML operations send neither header.
		rc.w.Header().Del("X-Content-Type-Options")
		rc.w.Header().Del("Cache-Control")
	}
	if rc.acct, rc.secondary = s.lookupAccount(name); rc.acct == nil {
		rc.fail(errAccountNotFound(name))
		return
	}
	rc.acctName = name
	if rc.method, err = effectiveMethod(r); err != nil {
		rc.fail(err)
		return
	}
	if err := s.authenticate(rc); err != nil {
		rc.fail(err)
		return
	}
	if rc.secondary && isWrite(rc.method) {
		rc.fail(errSecondaryWrite())
		return
	}
	if !rc.xmlAPI {
		if err := rc.checkJSONVersion(); err != nil {
			rc.fail(err)
			return
		}
	}
	switch {
	case seg == "":
		rc.serveService()
	case strings.EqualFold(seg, "Tables") || strings.EqualFold(seg, "Tables()"):
		rc.serveTables()
	case len(seg) > len("Tables(") && strings.EqualFold(seg[:len("Tables(")], "Tables("):
		rc.serveTable(seg)
	case seg == "$batch":
		rc.serveBatch()
	default:
		res, err := parseResource(seg, false)
		if err != nil {
			rc.fail(err)
			return
		}
		rc.serveResource(res)
	}
}

// isXMLOperation reports whether the path segment after the account and
// the query name one of the XML operations: the account root
// (?restype=service&comp=properties|stats) or a table's ?comp=acl.
func isXMLOperation(seg string, q url.Values) bool {
	if seg == "" {
		return true
	}
	return q.Get("comp") == "acl" && seg != "$batch" && !strings.EqualFold(seg, "Tables") && !strings.ContainsAny(seg, "()")
}

// effectiveMethod returns the request's verb, honouring X-HTTP-Method
// tunnelling: a POST carrying X-HTTP-Method: MERGE (or PUT, DELETE, PATCH)
// acts as that verb.
func effectiveMethod(r *http.Request) (string, error) {
	vals := r.Header.Values("X-HTTP-Method")
	if len(vals) == 0 {
		return r.Method, nil
	}
	if r.Method != http.MethodPost {
		return "", wireError(codeXMethodNotUsingPost, "The X-HTTP-Method header can only be used with POST.")
	}
	if len(vals) > 1 {
		return "", wireError(codeXMethodIncorrectCount, "More than one X-HTTP-Method header was specified.")
	}
	switch m := strings.ToUpper(strings.TrimSpace(vals[0])); m {
	case "MERGE", http.MethodPut, http.MethodDelete, http.MethodPatch:
		return m, nil
	}
	return "", wireError(codeXMethodIncorrectValue, "The X-HTTP-Method header must be MERGE, PUT, PATCH or DELETE.")
}

// serveResource serves /{acct}/{table}, /{acct}/{table}() and
// /{acct}/{table}(PartitionKey='…',RowKey='…').
func (rc *reqCtx) serveResource(res resource) {
	switch res.kind {
	case resTable:
		if rc.query.Get("comp") == "acl" {
			rc.serveACL(res.table)
			return
		}
		switch rc.method {
		case http.MethodPost:
			rc.insertEntity(res.table)
		case http.MethodGet:
			rc.queryEntities(res.table) // some SDKs query without "()"
		default:
			rc.fail(errMethod(rc.r))
		}
	case resQuery:
		if rc.method != http.MethodGet {
			rc.fail(errMethod(rc.r))
			return
		}
		rc.queryEntities(res.table)
	case resEntity:
		switch rc.method {
		case http.MethodGet:
			rc.getEntity(res)
		case http.MethodPut:
			rc.writeEntity(res, false)
		case http.MethodPatch, "MERGE":
			rc.writeEntity(res, true)
		case http.MethodDelete:
			rc.deleteEntity(res)
		default:
			rc.fail(errMethod(rc.r))
		}
	}
}

// parseQuery reads a query string as url.ParseQuery does, but accepts
// unescaped semicolons inside values ($format=application/json;odata=…).
func parseQuery(raw string) (url.Values, error) {
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
