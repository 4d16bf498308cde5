package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/reqclass"
)

// This file serves a table's declared secondary indexes (localtable's
// Table.CreateIndex), a localtable extension: GET, PUT and DELETE
// /{acct}/{table}?comp=indexes. They are authorized with the account key
// alone (Shared Key or Shared Key Lite): an index changes how every query
// of the table reads, so no SAS and no bearer token grants them.

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
}

// accountKeyOnly fails the request, and returns false, unless it is
// authorized with the account key (or the server checks no
// authorization): for the extensions that only the account's owner uses
// (indexes, expiry). what says what they are, as the error's subject.
func (rc *reqCtx) accountKeyOnly(what string) bool {
	switch {
	case rc.grant != nil:
		rc.fail(rc.authorize(rc.cls.Op, rc.cls.Table, "", ""))
		return false
	case !rc.s.opts.DisableAuth && strings.HasPrefix(rc.r.Header.Get("Authorization"), "Bearer "):
		rc.fail(wireError(codeAuthorizationFailure, what+" with the account key (Shared Key or Shared Key Lite), not with a bearer token."))
		return false
	}
	return true
}

// serveIndexes serves Get Table Indexes (200 with {"value": [...]}),
// Create Table Index (204, once the index is built) and Delete Table
// Index (?name=, 204).
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
			out.Value = append(out.Value, IndexDefinition{Name: ix.Name, Properties: ix.Properties, Ready: ix.Ready})
		}
		b, err := json.Marshal(out)
		if err != nil {
			rc.fail(err)
			return
		}
		rc.w.Header().Set("Content-Type", "application/json")
		rc.writeHeader(http.StatusOK)
		rc.w.Write(append(b, '\n'))
	case reqclass.CreateTableIndex:
		body, err := rc.readBody(MaxIndexBody)
		if err != nil {
			rc.fail(err)
			return
		}
		var def IndexDefinition
		if err := json.Unmarshal(body, &def); err != nil {
			rc.fail(wireError(localtable.CodeInvalidInput, "The body is not an index: want {\"Name\": \"…\", \"Properties\": [\"…\"]}: "+err.Error()))
			return
		}
		if err := t.CreateIndex(ctx, def.Name, def.Properties...); err != nil {
			rc.fail(err)
			return
		}
		rc.writeHeader(http.StatusNoContent)
	case reqclass.DeleteTableIndex:
		name := rc.query.Get("name")
		if name == "" {
			rc.fail(wireError(codeInvalidQueryParameter, "Delete Table Index needs name=, the index's name."))
			return
		}
		if err := t.DropIndex(ctx, name); err != nil {
			rc.fail(err)
			return
		}
		rc.writeHeader(http.StatusNoContent)
	}
}
