package server

import (
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/reqclass"
)

// route classifies a request (package reqclass reads its escaped path,
// never r.URL.Path: a %2F inside a key must not split the path), reads its
// version, authenticates it and dispatches it to its operation's handler.
// An OPTIONS request is a CORS preflight, answered without
// authentication.
func (s *Server) route(rc *reqCtx) {
	r := rc.r
	v, err := s.requestVersion(r)
	rc.setVersion(v)
	if err != nil {
		rc.fail(err)
		return
	}
	rc.cls = reqclass.Classify(r)
	c := &rc.cls
	if c.Problem.EarlyProblem() {
		rc.fail(rc.problemError())
		return
	}
	name := c.Account
	if c.Op == reqclass.Preflight {
		if rc.acct, rc.secondary = s.lookupAccount(name); rc.acct == nil {
			rc.fail(errAccountNotFound(name))
			return
		}
		rc.acctName = name
		rc.servePreflight() // anonymous, for any resource (cors.go)
		return
	}
	rc.doubledSecondary = c.DoubledSecondary
	rc.query = c.Query
	rc.xmlAPI = c.XML
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
	if c.Problem.TunnelProblem() {
		rc.fail(rc.problemError())
		return
	}
	rc.method = c.Method
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
	rc.dispatch()
}

// handlers serve the operations, one each: the router's half of the
// table of operations in package reqclass (TestRoutes checks that they
// agree).
var handlers map[reqclass.Op]func(*reqCtx)

func init() { // not a composite literal: serveBatch dispatches too
	handlers = map[reqclass.Op]func(*reqCtx){
		reqclass.GetTableServiceProperties: (*reqCtx).getServiceProperties,
		reqclass.SetTableServiceProperties: (*reqCtx).setServiceProperties,
		reqclass.GetTableServiceStats:      (*reqCtx).getServiceStats,
		reqclass.CreateTable:               (*reqCtx).createTable,
		reqclass.DeleteTable:               (*reqCtx).deleteTable,
		reqclass.QueryTables:               (*reqCtx).queryTables,
		reqclass.GetTableACL:               (*reqCtx).serveACL,
		reqclass.SetTableACL:               (*reqCtx).serveACL,
		reqclass.InsertEntity:              (*reqCtx).insertEntity,
		reqclass.QueryEntities:             (*reqCtx).queryEntities,
		reqclass.QueryEntity:               (*reqCtx).getEntity,
		reqclass.UpdateEntity:              (*reqCtx).writeEntity,
		reqclass.MergeEntity:               (*reqCtx).writeEntity,
		reqclass.InsertOrReplaceEntity:     (*reqCtx).writeEntity,
		reqclass.InsertOrMergeEntity:       (*reqCtx).writeEntity,
		reqclass.DeleteEntity:              (*reqCtx).deleteEntity,
		reqclass.EntityGroupTransaction:    (*reqCtx).serveBatch,
		reqclass.WatchChanges:              (*reqCtx).watchChanges,
		reqclass.GetTableIndexes:           (*reqCtx).serveIndexes,
		reqclass.CreateTableIndex:          (*reqCtx).serveIndexes,
		reqclass.DeleteTableIndex:          (*reqCtx).serveIndexes,
		reqclass.RepairTableIndex:          (*reqCtx).serveIndexes,
		reqclass.GetTableExpiry:            (*reqCtx).serveExpiry,
		reqclass.SetTableExpiry:            (*reqCtx).serveExpiry,
		reqclass.DeleteTableExpiry:         (*reqCtx).serveExpiry,
	}
	for _, o := range reqclass.Ops() {
		if o.IsTestControl() {
			handlers[o] = (*reqCtx).serveTestControl
		}
	}
}

// dispatch serves rc.cls with its operation's handler, or fails with its
// problem.
func (rc *reqCtx) dispatch() {
	h := handlers[rc.cls.Op]
	if rc.cls.Problem != reqclass.OK || h == nil {
		rc.fail(rc.problemError())
		return
	}
	h(rc)
}

// problemError is the service's answer to a request that names no
// operation, for each reqclass.Problem.
func (rc *reqCtx) problemError() *localtable.Error {
	const noResource = "The requested URI does not represent any resource on the server."
	switch rc.cls.Problem {
	case reqclass.BadURI:
		return errInvalidURI("The request URI is invalid.")
	case reqclass.BadAccount:
		return errInvalidURI("The request URI is invalid: URLs are http://host:port/{account}/…")
	case reqclass.ExtraSegments, reqclass.BadResource:
		return errInvalidURI(noResource)
	case reqclass.BadQuery:
		return wireError(codeInvalidQueryParameter, "The query string is invalid: "+rc.cls.Err.Error())
	case reqclass.TunnelNotPost:
		return wireError(codeXMethodNotUsingPost, "The X-HTTP-Method header can only be used with POST.")
	case reqclass.TunnelCount:
		return wireError(codeXMethodIncorrectCount, "More than one X-HTTP-Method header was specified.")
	case reqclass.TunnelValue:
		return wireError(codeXMethodIncorrectValue, "The X-HTTP-Method header must be MERGE, PUT, PATCH or DELETE.")
	case reqclass.BadComp, reqclass.MethodNotAllowed:
		if rc.cls.Resource == reqclass.TestControls {
			return wireError(codeInvalidQueryParameter, "The test controls are POST comp=reset, PUT, POST or DELETE comp=snapshot (restore: POST comp=restore), GET, POST or DELETE comp=faults, PUT or DELETE comp=latency, GET or PUT comp=clock, GET or DELETE comp=log.")
		}
		if rc.cls.Problem == reqclass.MethodNotAllowed {
			return errMethod(rc.r)
		}
		return errInvalidURI("The account root supports comp=properties and comp=stats.")
	case reqclass.NeedRestype:
		return errInvalidURI("The requested URI does not represent any resource on the server: the account root needs restype=service.")
	case reqclass.BadTablePath:
		return errInvalidURI("The table path must be Tables('name').")
	case reqclass.BadKeys:
		return wireError(localtable.CodeInvalidInput, "The entity path must be (PartitionKey='…',RowKey='…') with OData string literals.")
	}
	return errMethod(rc.r)
}
