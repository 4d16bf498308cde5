package reqclass

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"testing"
)

// routes is one request of each operation (some more than one), with its
// classification: the test that every route of the Table service is
// classified, and how.
var routes = []struct {
	method, target string
	header         map[string]string
	want           Request
}{
	{"OPTIONS", "/acct/Orders(PartitionKey='a',RowKey='b')", nil, Request{Op: Preflight, Account: "acct"}},
	{"GET", "/acct/?restype=service&comp=properties", nil, Request{Op: GetTableServiceProperties, Resource: Service, XML: true}},
	{"PUT", "/acct/?restype=service&comp=properties", nil, Request{Op: SetTableServiceProperties, Resource: Service, XML: true}},
	{"GET", "/acct-secondary/?restype=service&comp=stats", nil, Request{Op: GetTableServiceStats, Resource: Service, XML: true, Account: "acct-secondary"}},
	{"GET", "/acct-secondary/acct?restype=service&comp=stats", nil, Request{Op: GetTableServiceStats, Resource: Service, XML: true, Account: "acct-secondary", DoubledSecondary: true}},
	{"POST", "/acct/Tables", nil, Request{Op: CreateTable, Resource: Tables}},
	{"GET", "/acct/Tables()", nil, Request{Op: QueryTables, Resource: Tables}},
	{"GET", "/acct/tables('Or''ders')", nil, Request{Op: QueryTables, Resource: Table, Table: "Or'ders"}},
	{"DELETE", "/acct/Tables('Orders')", nil, Request{Op: DeleteTable, Resource: Table, Table: "Orders"}},
	{"GET", "/acct/Orders?comp=acl", nil, Request{Op: GetTableACL, Resource: EntitySet, Table: "Orders", XML: true}},
	{"HEAD", "/acct/Orders?comp=acl", nil, Request{Op: GetTableACL, Resource: EntitySet, Table: "Orders", XML: true}},
	{"PUT", "/acct/Orders?comp=acl", nil, Request{Op: SetTableACL, Resource: EntitySet, Table: "Orders", XML: true}},
	{"GET", "/acct/Orders?comp=indexes", nil, Request{Op: GetTableIndexes, Resource: EntitySet, Table: "Orders"}},
	{"PUT", "/acct/Orders?comp=indexes", nil, Request{Op: CreateTableIndex, Resource: EntitySet, Table: "Orders"}},
	{"DELETE", "/acct/Orders?comp=indexes&name=ByTotal", nil, Request{Op: DeleteTableIndex, Resource: EntitySet, Table: "Orders"}},
	{"POST", "/acct/Orders?comp=indexes&name=ByTotal", nil, Request{Op: RepairTableIndex, Resource: EntitySet, Table: "Orders"}},
	{"PATCH", "/acct/Orders?comp=indexes", nil, Request{Problem: MethodNotAllowed, Resource: EntitySet, Table: "Orders"}},
	{"GET", "/acct/Orders?comp=expiry", nil, Request{Op: GetTableExpiry, Resource: EntitySet, Table: "Orders"}},
	{"PUT", "/acct/Orders?comp=expiry", nil, Request{Op: SetTableExpiry, Resource: EntitySet, Table: "Orders"}},
	{"DELETE", "/acct/Orders?comp=expiry", nil, Request{Op: DeleteTableExpiry, Resource: EntitySet, Table: "Orders"}},
	{"POST", "/acct/Orders?comp=expiry", nil, Request{Problem: MethodNotAllowed, Resource: EntitySet, Table: "Orders"}},
	{"POST", "/acct/Orders", nil, Request{Op: InsertEntity, Resource: EntitySet, Table: "Orders"}},
	{"GET", "/acct/Orders()?$filter=PartitionKey%20eq%20'a'", nil, Request{Op: QueryEntities, Resource: Query, Table: "Orders"}},
	{"GET", "/acct/Orders", nil, Request{Op: QueryEntities, Resource: EntitySet, Table: "Orders"}},
	{"GET", "/acct/Orders(PartitionKey='a%2Fb',RowKey='it''s')", nil, Request{Op: QueryEntity, Resource: Entity, Table: "Orders", PartitionKey: "a/b", RowKey: "it's"}},
	{"GET", "/acct/Orders(PartitionKey='a',RowKey='b')?comp=acl", nil, Request{Op: QueryEntity, Resource: Entity, Table: "Orders", PartitionKey: "a", RowKey: "b"}},
	{"PUT", "/acct/Orders(PartitionKey='a',RowKey='b')", map[string]string{"If-Match": "*"}, Request{Op: UpdateEntity, Resource: Entity, Table: "Orders", PartitionKey: "a", RowKey: "b"}},
	{"PUT", "/acct/Orders(PartitionKey='a',RowKey='b')", nil, Request{Op: InsertOrReplaceEntity, Resource: Entity, Table: "Orders", PartitionKey: "a", RowKey: "b"}},
	{"MERGE", "/acct/Orders(PartitionKey='a',RowKey='b')", map[string]string{"If-Match": "*"}, Request{Op: MergeEntity, Resource: Entity, Table: "Orders", PartitionKey: "a", RowKey: "b"}},
	{"POST", "/acct/Orders(PartitionKey='a',RowKey='b')", map[string]string{"X-HTTP-Method": " merge", "If-Match": "*"}, Request{Op: MergeEntity, Method: "MERGE", Resource: Entity, Table: "Orders", PartitionKey: "a", RowKey: "b"}},
	{"PATCH", "/acct/Orders(PartitionKey='a',RowKey='b')", nil, Request{Op: InsertOrMergeEntity, Resource: Entity, Table: "Orders", PartitionKey: "a", RowKey: "b"}},
	{"DELETE", "/acct/Orders(PartitionKey='a',RowKey='b')/", nil, Request{Op: DeleteEntity, Resource: Entity, Table: "Orders", PartitionKey: "a", RowKey: "b"}},
	{"GET", "/acct-secondary/acct/Orders()", nil, Request{Op: QueryEntities, Resource: Query, Table: "Orders", Account: "acct-secondary", DoubledSecondary: true}},
	{"GET", "/acct-secondary/acct()", nil, Request{Op: QueryEntities, Resource: Query, Table: "acct", Account: "acct-secondary"}},
	{"POST", "/acct/$batch", nil, Request{Op: EntityGroupTransaction, Resource: Batch}},
	{"GET", "/acct/$changes?from=12&table=Orders", nil, Request{Op: WatchChanges, Resource: Changes}},
	{"POST", "/acct/$changes", nil, Request{Problem: MethodNotAllowed, Resource: Changes}},
	{"POST", "/acct/$test?comp=reset&table=Orders", nil, Request{Op: TestReset, Resource: TestControls}},
	{"PUT", "/acct/$test?comp=snapshot&name=s1", nil, Request{Op: TestSnapshot, Resource: TestControls}},
	{"POST", "/acct/$test?comp=restore&name=s1", nil, Request{Op: TestRestore, Resource: TestControls}},
	{"DELETE", "/acct/$test?comp=snapshot&name=s1", nil, Request{Op: TestDeleteSnapshot, Resource: TestControls}},
	{"GET", "/acct/$test?comp=faults", nil, Request{Op: TestGetFaults, Resource: TestControls}},
	{"POST", "/acct/$test?comp=faults", nil, Request{Op: TestAddFault, Resource: TestControls}},
	{"DELETE", "/acct/$test?comp=faults&id=2", nil, Request{Op: TestClearFaults, Resource: TestControls}},
	{"PUT", "/acct/$test?comp=latency", nil, Request{Op: TestSetLatency, Resource: TestControls}},
	{"DELETE", "/acct/$test?comp=latency", nil, Request{Op: TestClearLatency, Resource: TestControls}},
	{"GET", "/acct/$test?comp=clock", nil, Request{Op: TestGetClock, Resource: TestControls}},
	{"PUT", "/acct/$test?comp=clock", nil, Request{Op: TestSetClock, Resource: TestControls}},
	{"GET", "/acct/$test?comp=log", nil, Request{Op: TestGetLog, Resource: TestControls}},
	{"DELETE", "/acct/$test?comp=log", nil, Request{Op: TestClearLog, Resource: TestControls}},
	{"GET", "/acct/$test?comp=reset", nil, Request{Problem: MethodNotAllowed, Resource: TestControls}},
	{"GET", "/acct/$test", nil, Request{Problem: BadComp, Resource: TestControls}},
	{"GET", "/acct/$test?comp=nothing", nil, Request{Problem: BadComp, Resource: TestControls}},

	// What the server refuses.
	{"GET", "//Tables", nil, Request{Problem: BadAccount}},
	{"GET", "/acct/a/b", nil, Request{Problem: ExtraSegments}},
	{"GET", "/acct/Orders()?a=%zz", nil, Request{Problem: BadQuery}},
	{"GET", "/acct/Orders()", map[string]string{"X-HTTP-Method": "DELETE"}, Request{Problem: TunnelNotPost, Resource: Query, Table: "Orders"}},
	{"POST", "/acct/Orders()", map[string]string{"X-HTTP-Method": "GET"}, Request{Problem: TunnelValue, Resource: Query, Table: "Orders"}},
	{"GET", "/acct/?comp=properties", nil, Request{Problem: NeedRestype, Resource: Service, XML: true}},
	{"GET", "/acct/?restype=service&comp=list", nil, Request{Problem: BadComp, Resource: Service, XML: true}},
	{"DELETE", "/acct/?restype=service&comp=properties", nil, Request{Problem: MethodNotAllowed, Resource: Service, XML: true}},
	{"GET", "/acct/Tables(Orders)", nil, Request{Problem: BadTablePath, Resource: Table}},
	{"GET", "/acct/(PartitionKey='a',RowKey='b')", nil, Request{Problem: BadResource}},
	{"GET", "/acct/Orders(PartitionKey='a'b',RowKey='c')", nil, Request{Problem: BadKeys, Resource: Entity, Table: "Orders"}},
	{"DELETE", "/acct/Orders()", nil, Request{Problem: MethodNotAllowed, Resource: Query, Table: "Orders"}},
	{"DELETE", "/acct/Orders?comp=acl", nil, Request{Problem: MethodNotAllowed, Resource: EntitySet, Table: "Orders", XML: true}},
	{"GET", "/acct/$batch", nil, Request{Problem: MethodNotAllowed, Resource: Batch}},
}

func TestClassify(t *testing.T) {
	seen := map[Op]bool{}
	for _, c := range routes {
		r := httptest.NewRequest(c.method, c.target, nil)
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		got := Classify(r)
		want := c.want
		if want.Method == "" {
			want.Method = c.method
		}
		if want.Account == "" && want.Problem != BadAccount {
			want.Account = "acct"
		}
		got.Query, got.Err = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", c.method, c.target, got, want)
		}
		seen[got.Op] = true
	}
	for _, o := range Ops() {
		if !seen[o] {
			t.Errorf("no route of %v is tested", o)
		}
	}
}

func TestClassifyBatchOp(t *testing.T) {
	for _, c := range []struct {
		method, target string
		ifMatch        string
		want           Request
	}{
		{"POST", "http://h/acct/Orders", "", Request{Op: InsertEntity, Resource: EntitySet, Table: "Orders"}},
		{"PUT", "http://h/acct/Orders(PartitionKey='a',RowKey='b')", "*", Request{Op: UpdateEntity, Resource: Entity, Table: "Orders", PartitionKey: "a", RowKey: "b"}},
		{"MERGE", "http://h/acct/Orders(PartitionKey='a',RowKey='b')", "", Request{Op: InsertOrMergeEntity, Resource: Entity, Table: "Orders", PartitionKey: "a", RowKey: "b"}},
		{"DELETE", "http://h/acct/Orders(PartitionKey='it's',RowKey='b')", "", Request{Op: DeleteEntity, Resource: Entity, Table: "Orders", PartitionKey: "it's", RowKey: "b"}},
		{"GET", "http://h/acct/Orders()?comp=acl", "", Request{Op: QueryEntities, Resource: Query, Table: "Orders"}},
		{"GET", "http://h/acct/Tables", "", Request{Op: QueryEntities, Resource: EntitySet, Table: "Tables"}},
		{"DELETE", "http://h/acct/Orders", "", Request{Problem: MethodNotAllowed, Resource: EntitySet, Table: "Orders"}},
		{"GET", "http://h/acct/", "", Request{Problem: BadResource}},
	} {
		u, err := url.Parse(c.target)
		if err != nil {
			t.Fatal(err)
		}
		got := ClassifyBatchOp(c.method, u, c.ifMatch)
		got.Query = nil
		want := c.want
		want.Method = c.method
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", c.method, c.target, got, want)
		}
	}
}

// TestTable checks the table of operations against itself: every
// operation has a name, verbs and resources, a write is sent with a verb
// that writes, and no two operations claim the same resource, comp, verb
// and If-Match.
func TestTable(t *testing.T) {
	names := map[string]Op{}
	type key struct {
		res       Resource
		comp, vrb string
		ifMatch   ifMatch
	}
	claimed := map[key]Op{}
	for _, o := range Ops() {
		s := ops[o]
		if s.name == "" || len(s.methods) == 0 {
			t.Errorf("operation %d has no name or no verbs", o)
		}
		if p, dup := names[s.name]; dup {
			t.Errorf("%v and %v share the name %s", p, o, s.name)
		}
		names[s.name] = o
		if o != Preflight && len(s.resources) == 0 {
			t.Errorf("%v acts on no resource", o)
		}
		for _, m := range s.methods {
			if w := m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions; w != s.write {
				t.Errorf("%v: sent with %s, but IsWrite is %v", o, m, s.write)
			}
			for _, res := range s.resources {
				for _, im := range []ifMatch{withIfMatch, withoutIfMatch} {
					if s.ifMatch != anyIfMatch && s.ifMatch != im {
						continue
					}
					k := key{res, s.comp, m, im}
					if p, dup := claimed[k]; dup {
						t.Errorf("%v and %v both claim %+v", p, o, k)
					}
					claimed[k] = o
				}
			}
		}
		if s.access == AccessNone && o != Preflight && o != EntityGroupTransaction {
			t.Errorf("%v needs no access", o)
		}
	}
	if Unknown.String() != "Unknown" || Op(200).String() != "Unknown" || !slices.Equal(Op(200).Methods(), nil) {
		t.Error("Unknown and out-of-range operations are not Unknown")
	}
}
