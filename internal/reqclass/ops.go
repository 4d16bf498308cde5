package reqclass

import "net/http"

// Op is an operation of the Table service.
type Op uint8

// The operations, named in String as the Table service's REST reference
// and its request logs name them.
const (
	Unknown                   Op = iota // a request the server refuses: see Request.Problem
	Preflight                           // a CORS preflight: OPTIONS, on any path
	GetTableServiceProperties           // GET /acct/?restype=service&comp=properties
	SetTableServiceProperties           // PUT /acct/?restype=service&comp=properties
	GetTableServiceStats                // GET /acct/?restype=service&comp=stats (secondary only)
	CreateTable                         // POST /acct/Tables
	DeleteTable                         // DELETE /acct/Tables('t1')
	QueryTables                         // GET /acct/Tables, /acct/Tables('t1')
	GetTableACL                         // GET or HEAD /acct/t1?comp=acl
	SetTableACL                         // PUT /acct/t1?comp=acl
	InsertEntity                        // POST /acct/t1
	QueryEntities                       // GET /acct/t1(), /acct/t1
	QueryEntity                         // GET /acct/t1(PartitionKey='p',RowKey='r')
	UpdateEntity                        // PUT with If-Match
	MergeEntity                         // MERGE or PATCH with If-Match
	InsertOrReplaceEntity               // PUT without If-Match
	InsertOrMergeEntity                 // MERGE or PATCH without If-Match
	DeleteEntity                        // DELETE /acct/t1(PartitionKey='p',RowKey='r')
	EntityGroupTransaction              // POST /acct/$batch
	WatchChanges                        // GET /acct/$changes: the change feed, a localtable extension
	GetTableIndexes                     // GET /acct/t1?comp=indexes: a table's declared indexes, a localtable extension
	CreateTableIndex                    // PUT /acct/t1?comp=indexes: declare an index, a localtable extension
	DeleteTableIndex                    // DELETE /acct/t1?comp=indexes&name=…: drop an index, a localtable extension
	RepairTableIndex                    // POST /acct/t1?comp=indexes&name=…: rebuild an index from its table, a localtable extension
	GetTableExpiry                      // GET /acct/t1?comp=expiry: a table's expiry policy, a localtable extension
	SetTableExpiry                      // PUT /acct/t1?comp=expiry: set it, a localtable extension
	DeleteTableExpiry                   // DELETE /acct/t1?comp=expiry: clear it, a localtable extension

	// The test controls, /acct/$test?comp=…: a localtable extension, on
	// only when the server is given them (serve --test-controls).
	TestReset          // POST comp=reset: empty the account, or one table
	TestSnapshot       // PUT comp=snapshot&name=…: save the account's data
	TestRestore        // POST comp=restore&name=…: return to a snapshot
	TestDeleteSnapshot // DELETE comp=snapshot&name=…
	TestGetFaults      // GET comp=faults: the fault rules in force
	TestAddFault       // POST comp=faults: put a fault rule in force
	TestClearFaults    // DELETE comp=faults[&id=…]
	TestSetLatency     // PUT comp=latency
	TestClearLatency   // DELETE comp=latency
	TestGetClock       // GET comp=clock
	TestSetClock       // PUT comp=clock: set, advance, freeze, resume
	TestGetLog         // GET comp=log: the request log
	TestClearLog       // DELETE comp=log
	numOps
)

// Access is what an operation needs of a credential: a shared access
// signature grants operations by these classes. The entity classes come
// first (AccessRead to AccessDelete), as package auth relies on.
type Access uint8

// The access classes of the operations.
const (
	AccessRead         Access = iota // Query Entity: get one entity
	AccessQuery                      // Query Entities
	AccessAdd                        // Insert Entity
	AccessUpdate                     // Update Entity, Merge Entity
	AccessUpsert                     // Insert Or Replace Entity, Insert Or Merge Entity
	AccessDelete                     // Delete Entity
	AccessListTables                 // Query Tables
	AccessCreateTable                // Create Table
	AccessDeleteTable                // Delete Table
	AccessACL                        // Get Table ACL, Set Table ACL
	AccessServiceRead                // Get Table Service Properties, Get Table Service Stats
	AccessServiceWrite               // Set Table Service Properties
	AccessChanges                    // Watch Changes: every table's entities and the tables themselves
	AccessIndexes                    // a table's declared indexes and expiry policy: the account key alone (Shared Key), never a SAS or token
	AccessTestControl                // the test controls: the account key alone (Shared Key), never a SAS or token
	AccessNone                       // nothing to authorize: a preflight, an unknown request
)

// Resource is what a request's path addresses, after the account.
type Resource uint8

// The resources of the Table service's paths.
const (
	NoResource   Resource = iota // none could be read
	Service                      // the account root: /acct/
	Tables                       // the table collection: /acct/Tables, /acct/Tables()
	Table                        // one table by name: /acct/Tables('t1')
	Batch                        // an entity group transaction: /acct/$batch
	EntitySet                    // a table's entities: /acct/t1 (insert, ACL, a query)
	Query                        // a query of a table's entities: /acct/t1()
	Entity                       // one entity: /acct/t1(PartitionKey='p',RowKey='r')
	Changes                      // the account's change feed: /acct/$changes (a localtable extension)
	TestControls                 // the test controls: /acct/$test (a localtable extension)
)

// ifMatch is whether an operation is told apart by If-Match.
type ifMatch uint8

const (
	anyIfMatch ifMatch = iota
	withIfMatch
	withoutIfMatch
)

// spec is one operation: how a request names it and what the server, its
// authorization, the request log and fault rules need to know of it.
type spec struct {
	name      string     // its name in the REST reference and request logs
	resources []Resource // the resources it acts on
	methods   []string   // its verbs, after X-HTTP-Method tunnelling
	comp      string     // the comp= it needs; "" for none
	ifMatch   ifMatch    // whether it needs If-Match, or its absence
	access    Access     // what it needs of a credential
	write     bool       // it changes data
	xml       bool       // it speaks XML, not JSON
}

// ops is the one table of the Table service's operations. Adding an
// operation is a row here, its handler in package server and its entry
// in the server's handler table.
var ops = [numOps]spec{
	Unknown:   {name: "Unknown", access: AccessNone},
	Preflight: {name: "PreflightTableRequest", methods: []string{http.MethodOptions}, access: AccessNone},

	GetTableServiceProperties: {name: "GetTableServiceProperties", resources: []Resource{Service}, methods: []string{http.MethodGet},
		comp: "properties", access: AccessServiceRead, xml: true},
	SetTableServiceProperties: {name: "SetTableServiceProperties", resources: []Resource{Service}, methods: []string{http.MethodPut},
		comp: "properties", access: AccessServiceWrite, write: true, xml: true},
	GetTableServiceStats: {name: "GetTableServiceStats", resources: []Resource{Service}, methods: []string{http.MethodGet},
		comp: "stats", access: AccessServiceRead, xml: true},

	CreateTable: {name: "CreateTable", resources: []Resource{Tables}, methods: []string{http.MethodPost},
		access: AccessCreateTable, write: true},
	DeleteTable: {name: "DeleteTable", resources: []Resource{Table}, methods: []string{http.MethodDelete},
		access: AccessDeleteTable, write: true},
	QueryTables: {name: "QueryTables", resources: []Resource{Tables, Table}, methods: []string{http.MethodGet},
		access: AccessListTables},

	GetTableACL: {name: "GetTableACL", resources: []Resource{EntitySet}, methods: []string{http.MethodGet, http.MethodHead},
		comp: "acl", access: AccessACL, xml: true},
	SetTableACL: {name: "SetTableACL", resources: []Resource{EntitySet}, methods: []string{http.MethodPut},
		comp: "acl", access: AccessACL, write: true, xml: true},

	InsertEntity: {name: "InsertEntity", resources: []Resource{EntitySet}, methods: []string{http.MethodPost},
		access: AccessAdd, write: true},
	QueryEntities: {name: "QueryEntities", resources: []Resource{EntitySet, Query}, methods: []string{http.MethodGet},
		access: AccessQuery},
	QueryEntity: {name: "QueryEntity", resources: []Resource{Entity}, methods: []string{http.MethodGet},
		access: AccessRead},
	UpdateEntity: {name: "UpdateEntity", resources: []Resource{Entity}, methods: []string{http.MethodPut},
		ifMatch: withIfMatch, access: AccessUpdate, write: true},
	MergeEntity: {name: "MergeEntity", resources: []Resource{Entity}, methods: []string{"MERGE", http.MethodPatch},
		ifMatch: withIfMatch, access: AccessUpdate, write: true},
	InsertOrReplaceEntity: {name: "InsertOrReplaceEntity", resources: []Resource{Entity}, methods: []string{http.MethodPut},
		ifMatch: withoutIfMatch, access: AccessUpsert, write: true},
	InsertOrMergeEntity: {name: "InsertOrMergeEntity", resources: []Resource{Entity}, methods: []string{"MERGE", http.MethodPatch},
		ifMatch: withoutIfMatch, access: AccessUpsert, write: true},
	DeleteEntity: {name: "DeleteEntity", resources: []Resource{Entity}, methods: []string{http.MethodDelete},
		access: AccessDelete, write: true},

	EntityGroupTransaction: {name: "EntityGroupTransaction", resources: []Resource{Batch}, methods: []string{http.MethodPost},
		access: AccessNone, write: true}, // each of its operations is authorized as itself

	// Not an operation of the Table service: localtable's change feed,
	// streamed as newline-delimited JSON (package server, changes.go).
	// It reads every table, so only Shared Key (or a bearer token) and an
	// account SAS with r and srt c and o grant it; a service SAS, which
	// is for one table, does not.
	WatchChanges: {name: "WatchChanges", resources: []Resource{Changes}, methods: []string{http.MethodGet},
		access: AccessChanges},

	// Not operations of the Table service: a table's declared secondary
	// indexes (package server, indexes.go), JSON in and out, authorized
	// with the account key alone, as they change how every query of the
	// table reads.
	GetTableIndexes: {name: "GetTableIndexes", resources: []Resource{EntitySet}, methods: []string{http.MethodGet},
		comp: "indexes", access: AccessIndexes},
	CreateTableIndex: {name: "CreateTableIndex", resources: []Resource{EntitySet}, methods: []string{http.MethodPut},
		comp: "indexes", access: AccessIndexes, write: true},
	DeleteTableIndex: {name: "DeleteTableIndex", resources: []Resource{EntitySet}, methods: []string{http.MethodDelete},
		comp: "indexes", access: AccessIndexes, write: true},
	RepairTableIndex: {name: "RepairTableIndex", resources: []Resource{EntitySet}, methods: []string{http.MethodPost},
		comp: "indexes", access: AccessIndexes, write: true},
	// A table's expiry policy (package server, expiry.go), likewise: it
	// decides which entities every read sees.
	GetTableExpiry: {name: "GetTableExpiry", resources: []Resource{EntitySet}, methods: []string{http.MethodGet},
		comp: "expiry", access: AccessIndexes},
	SetTableExpiry: {name: "SetTableExpiry", resources: []Resource{EntitySet}, methods: []string{http.MethodPut},
		comp: "expiry", access: AccessIndexes, write: true},
	DeleteTableExpiry: {name: "DeleteTableExpiry", resources: []Resource{EntitySet}, methods: []string{http.MethodDelete},
		comp: "expiry", access: AccessIndexes, write: true},

	// Not operations of the Table service: localtable's test controls
	// (package server, testcontrols.go), JSON in and out, authorized with
	// the account key alone.
	TestReset:          testControl("TestReset", http.MethodPost, "reset"),
	TestSnapshot:       testControl("TestSnapshot", http.MethodPut, "snapshot"),
	TestRestore:        testControl("TestRestore", http.MethodPost, "restore"),
	TestDeleteSnapshot: testControl("TestDeleteSnapshot", http.MethodDelete, "snapshot"),
	TestGetFaults:      testControl("TestGetFaults", http.MethodGet, "faults"),
	TestAddFault:       testControl("TestAddFault", http.MethodPost, "faults"),
	TestClearFaults:    testControl("TestClearFaults", http.MethodDelete, "faults"),
	TestSetLatency:     testControl("TestSetLatency", http.MethodPut, "latency"),
	TestClearLatency:   testControl("TestClearLatency", http.MethodDelete, "latency"),
	TestGetClock:       testControl("TestGetClock", http.MethodGet, "clock"),
	TestSetClock:       testControl("TestSetClock", http.MethodPut, "clock"),
	TestGetLog:         testControl("TestGetLog", http.MethodGet, "log"),
	TestClearLog:       testControl("TestClearLog", http.MethodDelete, "log"),
}

// testControl is the row of a test control: one verb and comp= on
// /acct/$test. Those sent with a verb other than GET change the server's
// state (its data, its faults, its clock): writes.
func testControl(name, method, comp string) spec {
	return spec{name: name, resources: []Resource{TestControls}, methods: []string{method}, comp: comp,
		access: AccessTestControl, write: method != http.MethodGet}
}

// Ops returns every operation but Unknown, in order.
func Ops() []Op {
	out := make([]Op, 0, numOps-1)
	for o := Unknown + 1; o < numOps; o++ {
		out = append(out, o)
	}
	return out
}

// String returns the operation's name in the REST reference and the
// service's request logs: "InsertEntity", "QueryEntity",
// "PreflightTableRequest"; "Unknown" for Unknown.
func (o Op) String() string {
	if o >= numOps {
		return "Unknown"
	}
	return ops[o].name
}

// Access returns what the operation needs of a credential; AccessNone
// for Preflight, Unknown, and EntityGroupTransaction, whose operations
// are authorized one by one.
func (o Op) Access() Access {
	if o >= numOps {
		return AccessNone
	}
	return ops[o].access
}

// IsWrite reports whether the operation changes data: a table, an
// entity, a batch, an ACL or the service properties.
func (o Op) IsWrite() bool { return o < numOps && ops[o].write }

// IsXML reports whether the operation's bodies (and error bodies) are
// XML: the ACL and service operations.
func (o Op) IsXML() bool { return o < numOps && ops[o].xml }

// IsTestControl reports whether the operation is one of localtable's
// test controls (/acct/$test), which the test harness lets by without
// logging them or injecting faults.
func (o Op) IsTestControl() bool { return o < numOps && ops[o].access == AccessTestControl }

// Methods returns the verbs the operation is sent with, after
// X-HTTP-Method tunnelling.
func (o Op) Methods() []string {
	if o >= numOps {
		return nil
	}
	return append([]string(nil), ops[o].methods...)
}

// Resources returns the resources the operation acts on.
func (o Op) Resources() []Resource {
	if o >= numOps {
		return nil
	}
	return append([]Resource(nil), ops[o].resources...)
}

// Comp returns the comp= query value the operation needs, "" for none.
func (o Op) Comp() string {
	if o >= numOps {
		return ""
	}
	return ops[o].comp
}
