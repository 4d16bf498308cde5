package server

import (
	"net/http"

	"github.com/localtable/localtable/internal/reqclass"
)

// This file serves a table's declared secondary indexes (localtable's
// Table.CreateIndex), a localtable extension: GET, PUT, DELETE and POST
// (repair: Table.RebuildIndex) /{acct}/{table}?comp=indexes. They are authorized with the account key
// alone (Shared Key or Shared Key Lite): an index changes how every query
// of the table reads, so no SAS and no bearer token grants them.

// The plan of a Query Entities page, in two localtable extension headers of
// its response (the service sends neither; the SDKs ignore them):
//
//	X-Localtable-Index: <name>   the index the page read instead of its key
//	                             ranges (localtable.QueryStats.Index), as
//	                             declared; absent when it read none
//	X-Localtable-Scanned: <n>    the entities (and, through an index, the
//	                             index entries) the page read
//	                             (localtable.QueryStats.Scanned)
//
// So a client, the request log of localtable serve, and query --explain on
// a server can tell whether a filter reads an index.
const (
	IndexHeader   = "X-Localtable-Index"
	ScannedHeader = "X-Localtable-Scanned"
)

// MaxIndexBody is the largest body of a Create Table Index request.
const MaxIndexBody = 4 << 10

// IndexDefinition is an index in the bodies of the index operations: the
// body of PUT ?comp=indexes (Name and Properties) and the items of GET's
// "value".
type IndexDefinition struct {
	Name       string   `json:"Name"`
	Properties []string `json:"Properties"`
	// Ready says the index is built and queries use it (GET only).
	Ready bool `json:"Ready"`
	// Covering says the index's entries hold their entities' records
	// (localtable.IndexInfo.Covering; GET only).
	Covering bool `json:"Covering"`
}

// serveIndexes serves Get Table Indexes (200 with {"value": [...]}),
// Create Table Index (204, once the index is built), Delete Table Index
// (?name=, 204) and Repair Table Index (?name=, 204 once the index is
// rebuilt).
func (rc *reqCtx) serveIndexes() {
	if !rc.accountKeyOnly("A table's indexes (comp=indexes, a localtable extension) are read and declared") {
		return
	}
	t := rc.acct.data.Table(rc.cls.Table)
	ctx := rc.r.Context()
	switch rc.cls.Op {
	case reqclass.GetTableIndexes:
		idx, err := t.Indexes(ctx)
		if err != nil {
			rc.fail(err)
			return
		}
		out := struct {
			Value []IndexDefinition `json:"value"`
		}{Value: make([]IndexDefinition, 0, len(idx))}
		for _, ix := range idx {
			out.Value = append(out.Value, IndexDefinition{Name: ix.Name, Properties: ix.Properties, Ready: ix.Ready, Covering: ix.Covering})
		}
		rc.answerJSON(out)
	case reqclass.CreateTableIndex:
		var def IndexDefinition
		if !rc.readJSON(MaxIndexBody, &def, `an index: want {"Name": "…", "Properties": ["…"]}`) {
			return
		}
		if err := t.CreateIndex(ctx, def.Name, def.Properties...); err != nil {
			rc.fail(err)
			return
		}
		rc.writeHeader(http.StatusNoContent)
	case reqclass.DeleteTableIndex, reqclass.RepairTableIndex:
		name := rc.query.Get("name")
		if name == "" {
			rc.fail(wireError(codeInvalidQueryParameter, rc.cls.Op.String()+" needs name=, the index's name."))
			return
		}
		act := t.DropIndex
		if rc.cls.Op == reqclass.RepairTableIndex {
			act = t.RebuildIndex
		}
		if err := act(ctx, name); err != nil {
			rc.fail(err)
			return
		}
		rc.writeHeader(http.StatusNoContent)
	}
}
