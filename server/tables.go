package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/internal/odata"
	"github.com/localtable/localtable/internal/reqclass"
)

// queryTables serves Query Tables: a list at /{acct}/Tables, one table
// at /{acct}/Tables('name').
func (rc *reqCtx) queryTables() {
	if rc.cls.Resource == reqclass.Table {
		rc.getTable(rc.cls.Table)
		return
	}
	rc.listTables()
}

// deleteTable serves Delete Table, DELETE /{acct}/Tables('name').
func (rc *reqCtx) deleteTable() {
	name := rc.cls.Table
	if err := rc.authorize(rc.cls.Op, name, "", ""); err != nil {
		rc.fail(err)
		return
	}
	if err := rc.acct.data.DeleteTable(rc.r.Context(), name); err != nil {
		rc.fail(err)
		return
	}
	rc.writeHeader(http.StatusNoContent)
}

// getTable serves GET /{acct}/Tables('name').
func (rc *reqCtx) getTable(name string) {
	level, err := rc.metadata()
	if err != nil {
		rc.fail(err)
		return
	}
	if err := rc.authorize(rc.cls.Op, name, "", ""); err != nil {
		rc.fail(err)
		return
	}
	t, err := rc.acct.data.GetTable(rc.r.Context(), name)
	if err != nil {
		rc.fail(wireError(localtable.CodeResourceNotFound, "The specified resource does not exist."))
		return
	}
	rc.writeJSON(http.StatusOK, level, rc.appendTable(nil, level, t.Name(), true))
}

// appendTable writes a table entry at a metadata level.
func (rc *reqCtx) appendTable(b []byte, level metaLevel, name string, standalone bool) []byte {
	base := rc.baseURL()
	b = append(b, '{')
	if level != metaNone {
		if standalone {
			b = append(b, `"odata.metadata":`...)
			b = entityjson.AppendString(b, base+"/$metadata#Tables/@Element")
			b = append(b, ',')
		}
		if level == metaFull {
			link := "Tables(" + odata.Quote(name) + ")"
			b = append(b, `"odata.type":`...)
			b = entityjson.AppendString(b, rc.acct.name+".Tables")
			b = append(b, `,"odata.id":`...)
			b = entityjson.AppendString(b, base+"/"+link)
			b = append(b, `,"odata.editLink":`...)
			b = entityjson.AppendString(b, link)
			b = append(b, ',')
		}
	}
	b = append(b, `"TableName":`...)
	b = entityjson.AppendString(b, name)
	return append(b, '}')
}

func (rc *reqCtx) createTable() {
	level, err := rc.metadata()
	if err != nil {
		rc.fail(err)
		return
	}
	body, err := rc.readJSONBody(MaxEntityBody)
	if err != nil {
		rc.fail(err)
		return
	}
	_, vals, err := entityjson.ReadObject(body)
	if err != nil {
		rc.fail(err)
		return
	}
	var name string
	raw, ok := vals["TableName"]
	if !ok || json.Unmarshal(raw, &name) != nil {
		rc.fail(&localtable.Error{Code: localtable.CodePropertiesNeedValue, Message: "The request body must name the table: {\"TableName\":\"…\"}."})
		return
	}
	if err := rc.authorize(rc.cls.Op, name, "", ""); err != nil {
		rc.fail(err)
		return
	}
	t, err := rc.acct.data.CreateTable(rc.r.Context(), name)
	if err != nil {
		rc.fail(err)
		return
	}
	rc.writeCreated(rc.baseURL()+"/Tables("+odata.Quote(t.Name())+")", level, func() []byte {
		return rc.appendTable(nil, level, t.Name(), true)
	})
}

func (rc *reqCtx) listTables() {
	level, err := rc.metadata()
	if err != nil {
		rc.fail(err)
		return
	}
	if err := rc.authorize(rc.cls.Op, "", "", ""); err != nil {
		rc.fail(err)
		return
	}
	opts := localtable.ListTablesOptions{NextTableName: rc.query.Get("NextTableName")}
	top, err := rc.parseTop()
	if err != nil {
		rc.fail(err)
		return
	}
	opts.PageSize = rc.s.pageSize(top)
	if f := strings.TrimSpace(rc.query.Get("$filter")); f != "" {
		if opts.Filter, err = parseFilter(f); err != nil {
			rc.fail(err)
			return
		}
	}
	var page localtable.TablesPage
	if top != 0 { // $top=0 asks for nothing: an empty page
		if page, err = rc.acct.data.ListTables(rc.r.Context(), &opts); err != nil {
			rc.fail(err)
			return
		}
		if opts.NextTableName == "" && rc.s.opts.EmptyFirstPage && len(page.Tables) > 0 {
			// Nothing yet, and a continuation at the first table.
			page = localtable.TablesPage{NextTableName: page.Tables[0].Name}
		}
	}
	var b []byte
	b = append(b, '{')
	if level != metaNone {
		b = append(b, `"odata.metadata":`...)
		b = entityjson.AppendString(b, rc.baseURL()+"/$metadata#Tables")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, t := range page.Tables {
		if i > 0 {
			b = append(b, ',')
		}
		b = rc.appendTable(b, level, t.Name, false)
	}
	b = append(b, "]}"...)
	if page.NextTableName != "" {
		rc.w.Header().Set("x-ms-continuation-NextTableName", page.NextTableName)
	}
	rc.writeJSON(http.StatusOK, level, b)
}
