package server

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/internal/edmfmt"
)

// This file writes entities into response bodies at the metadata level a
// request asks for; the entity JSON codec itself (PROTOCOL.md §3) is
// package entityjson.

// encodeOpts say how entities are written.
type encodeOpts struct {
	level   metaLevel
	base    string   // account URL, for odata.metadata and odata.id
	account string   // account name, for odata.type
	table   string   // as addressed
	sel     []string // $select; nil: all
}

func (rc *reqCtx) encodeOpts(level metaLevel, table string, sel []string) *encodeOpts {
	return &encodeOpts{level: level, base: rc.baseURL(), account: rc.acct.name, table: table, sel: sel}
}

// appendEntity writes e as a JSON object. standalone adds odata.metadata
// (a single-entity response).
func appendEntity(b []byte, e *localtable.Entity, o *encodeOpts, standalone bool) []byte {
	b = append(b, '{')
	first := true
	member := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = entityjson.AppendString(b, name)
		b = append(b, ':')
	}
	if o.level != metaNone {
		if standalone {
			member("odata.metadata")
			b = entityjson.AppendString(b, o.base+"/$metadata#"+o.table+"/@Element")
		}
		path := entityPath(o.table, e.PartitionKey, e.RowKey)
		if o.level == metaFull {
			member("odata.type")
			b = entityjson.AppendString(b, o.account+"."+o.table)
			member("odata.id")
			b = entityjson.AppendString(b, o.base+"/"+path)
		}
		member("odata.etag")
		b = entityjson.AppendString(b, string(e.ETag))
		if o.level == metaFull {
			member("odata.editLink")
			b = entityjson.AppendString(b, path)
		}
	}
	write := func(name string, v localtable.Value) {
		if ann := annotation(v, o.level); ann != "" {
			member(name + entityjson.AnnotationSuffix)
			b = entityjson.AppendString(b, ann)
		}
		member(name)
		b = entityjson.AppendValue(b, v)
	}
	system := func(name string) {
		switch name {
		case localtable.PartitionKeyName:
			member(name)
			b = entityjson.AppendString(b, e.PartitionKey)
		case localtable.RowKeyName:
			member(name)
			b = entityjson.AppendString(b, e.RowKey)
		case localtable.TimestampName:
			if o.level == metaFull {
				member(name + entityjson.AnnotationSuffix)
				b = entityjson.AppendString(b, "Edm.DateTime")
			}
			member(name)
			b = entityjson.AppendString(b, edmfmt.DateTime7(e.Timestamp))
		}
	}
	if o.sel == nil {
		system(localtable.PartitionKeyName)
		system(localtable.RowKeyName)
		system(localtable.TimestampName)
		for _, name := range slices.Sorted(maps.Keys(e.Properties)) {
			if v := e.Properties[name]; !v.IsNull() {
				write(name, v)
			}
		}
	} else {
		for _, name := range o.sel {
			switch name {
			case localtable.PartitionKeyName, localtable.RowKeyName, localtable.TimestampName:
				system(name)
				continue
			}
			if v, ok := e.Properties[name]; ok && !v.IsNull() {
				write(name, v)
			} else {
				member(name)
				b = append(b, "null"...)
			}
		}
	}
	return append(b, '}')
}

// entityPath is the path of an entity below the account, as the SDKs
// write it: keys quote-doubled, then path-escaped.
func entityPath(table, pk, rk string) string {
	esc := func(k string) string { return strings.ReplaceAll(url.PathEscape(quoteOData(k)), "%27", "'") }
	return table + "(PartitionKey=" + esc(pk) + ",RowKey=" + esc(rk) + ")"
}

// annotation returns the @odata.type a value is written with at level:
// entityjson.Annotation's, and nothing at nometadata.
func annotation(v localtable.Value, level metaLevel) string {
	if level == metaNone {
		return ""
	}
	return entityjson.Annotation(v)
}
