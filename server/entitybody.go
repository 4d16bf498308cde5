package server

import (
	"iter"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/internal/edmfmt"
	"github.com/localtable/localtable/internal/odata"
	"github.com/localtable/localtable/internal/ticktime"
)

// This file writes entities into response bodies at the metadata level a
// request asks for; the entity JSON codec itself (docs/protocol.md §3) is
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

// bodyBufs holds buffers for response bodies: a body is written to the
// connection before its handler returns, and then its buffer is free.
var bodyBufs = sync.Pool{New: func() any { return new([]byte) }}

// putBody returns a buffer of bodyBufs, unless it grew beyond most
// bodies.
func putBody(bp *[]byte) {
	if cap(*bp) <= 1<<20 {
		*bp = (*bp)[:0]
		bodyBufs.Put(bp)
	}
}

// appendEntity writes e as a JSON object. standalone adds odata.metadata
// (a single-entity response). Every entity read is written here: it
// appends straight into b, and its custom properties are sorted by name
// in a buffer on the stack.
func appendEntity(b []byte, e *localtable.Entity, o *encodeOpts, standalone bool) []byte {
	b = append(b, '{')
	w := memberWriter{b: b, first: true}
	if o.level != metaNone {
		if standalone {
			w.member("odata.metadata", "")
			w.b = appendElementURL(w.b, o)
		}
		var path string
		if o.level == metaFull {
			path = entityPath(o.table, e.PartitionKey, e.RowKey)
			w.member("odata.type", "")
			w.b = entityjson.AppendString(w.b, o.account+"."+o.table)
			w.member("odata.id", "")
			w.b = entityjson.AppendString(w.b, o.base+"/"+path)
		}
		w.member("odata.etag", "")
		w.b = entityjson.AppendString(w.b, string(e.ETag))
		if o.level == metaFull {
			w.member("odata.editLink", "")
			w.b = entityjson.AppendString(w.b, path)
		}
	}
	if o.sel == nil {
		w.system(e, localtable.PartitionKeyName, o.level)
		w.system(e, localtable.RowKeyName, o.level)
		w.system(e, localtable.TimestampName, o.level)
		var buf [32]string
		for _, name := range sortedNames(buf[:0], e.Properties) {
			w.property(name, e.Properties[name], o.level)
		}
	} else {
		for _, name := range o.sel {
			switch name {
			case localtable.PartitionKeyName, localtable.RowKeyName, localtable.TimestampName:
				w.system(e, name, o.level)
				continue
			}
			if v, ok := e.Properties[name]; ok && !v.IsNull() {
				w.property(name, v, o.level)
			} else {
				w.member(name, "")
				w.b = append(w.b, "null"...)
			}
		}
	}
	return append(w.b, '}')
}

// appendElementURL appends the odata.metadata of a single-entity
// response, as a JSON string.
func appendElementURL(b []byte, o *encodeOpts) []byte {
	return entityjson.AppendString(b, o.base+"/$metadata#"+o.table+"/@Element")
}

// appendStored writes an entity handed over as stored (see
// rawquery.Func) as appendEntity writes it without $select: keys,
// Timestamp and ETag from their ticks, and the properties in the order
// they come, their names' order.
func appendStored(b []byte, pk, rk string, ticks int64, props iter.Seq2[string, localtable.Value], o *encodeOpts, standalone bool) []byte {
	sw := storedWriter{o: o} // one entity: no member texts kept for others
	sw.yield = sw.property
	return sw.append(b, pk, rk, ticks, props, standalone)
}

// storedWriter is appendStored for the entities of a page: made once, it
// writes each without allocating. The entities of a page mostly share
// their properties' names and types: the first entity's member names, as
// written with their annotations, are kept by position and copied for
// the entities after it where name and annotation are the same.
type storedWriter struct {
	w     memberWriter
	o     *encodeOpts
	yield func(string, localtable.Value) bool // sw.property, made once
	slots []memberSlot                        // by position among the properties
	idx   int                                 // position of the next property
	keep  bool                                // keep member texts in slots for the entities after
}

// memberSlot is the text written before a property's value: its
// annotation member, if any, and its name, with the colon.
type memberSlot struct {
	name string
	kind localtable.Kind
	ann  string // its annotation, as annotation returns it
	text []byte
}

func newStoredWriter(o *encodeOpts) *storedWriter {
	sw := &storedWriter{o: o, keep: true}
	sw.yield = sw.property
	return sw
}

func (sw *storedWriter) property(name string, v localtable.Value) bool {
	k := v.Kind()
	if k == localtable.KindNull {
		return true
	}
	w, level := &sw.w, sw.o.level
	i := sw.idx
	sw.idx++
	if i < len(sw.slots) && !w.first {
		// A property of the same name and kind as the last entity's at
		// i has the same annotation, but for a Double, which is annotated
		// when it is not finite.
		if sl := &sw.slots[i]; sl.kind == k && sl.name == name && (k != localtable.KindDouble || sl.ann == annotation(v, level)) {
			w.b = append(w.b, sl.text...)
			w.b = entityjson.AppendValue(w.b, v)
			return true
		}
	}
	if sw.keep && i == len(sw.slots) && i < maxSlots && !w.first {
		// The first entity to have a property at i: keep its text, its
		// comma too (a property always follows the keys).
		ann := annotation(v, level)
		m := memberWriter{b: append(make([]byte, 0, 64), ','), first: true}
		if ann != "" {
			m.member(name, entityjson.AnnotationSuffix)
			m.b = entityjson.AppendString(m.b, ann)
		}
		m.member(name, "")
		sw.slots = append(sw.slots, memberSlot{name: strings.Clone(name), kind: k, ann: ann, text: m.b})
		w.b = append(w.b, m.b...)
		w.b = entityjson.AppendValue(w.b, v)
		return true
	}
	w.property(name, v, level)
	return true
}

// maxSlots bounds the member texts a storedWriter keeps: an entity has at
// most 252 custom properties.
const maxSlots = 255

// append is appendStored.
func (sw *storedWriter) append(b []byte, pk, rk string, ticks int64, props iter.Seq2[string, localtable.Value], standalone bool) []byte {
	b = append(b, '{')
	sw.w = memberWriter{b: b, first: true}
	sw.idx = 0
	w, o := &sw.w, sw.o
	var tsBuf [32]byte
	var ts []byte // the Timestamp's text, once formatted (fixedTS)
	fixedTS := false
	if o.level != metaNone {
		if standalone {
			w.member("odata.metadata", "")
			w.b = appendElementURL(w.b, o)
		}
		var path string
		if o.level == metaFull {
			path = entityPath(o.table, pk, rk)
			w.member("odata.type", "")
			w.b = entityjson.AppendString(w.b, o.account+"."+o.table)
			w.member("odata.id", "")
			w.b = entityjson.AppendString(w.b, o.base+"/"+path)
		}
		w.name(`"odata.etag":`)
		if ticks >= 0 && ticks <= ticktime.Max {
			// The ETag is the Timestamp's text with its colons escaped:
			// formatted once, for both.
			if !fixedTS {
				ts = ticktime.Append(tsBuf[:0], ticks, true, ":")
				fixedTS = true
			}
			w.b = append(w.b, `"W/\"datetime'`...)
			w.b = appendEscapedColons(w.b, ts)
			w.b = append(w.b, `'\""`...)
		} else {
			tag := `W/"datetime'` + strings.ReplaceAll(edmfmt.DateTime7(localtable.TicksToTime(ticks)), ":", "%3A") + `'"`
			w.b = entityjson.AppendString(w.b, tag)
		}
		if o.level == metaFull {
			w.member("odata.editLink", "")
			w.b = entityjson.AppendString(w.b, path)
		}
	}
	w.name(`"PartitionKey":`)
	w.b = entityjson.AppendString(w.b, pk)
	w.b = append(w.b, `,"RowKey":`...)
	w.b = entityjson.AppendString(w.b, rk)
	if fixedTS && o.level != metaFull {
		w.b = append(w.b, `,"Timestamp":"`...)
		w.b = append(w.b, ts...)
		w.b = append(w.b, '"')
	} else {
		w.timestamp(localtable.TicksToTime(ticks), ticks, o.level)
	}
	props(sw.yield)
	b = append(w.b, '}')
	w.b = nil
	return b
}

// appendEscapedColons appends the Timestamp text s, as ticktime.Append
// writes it with seven digits (yyyy-MM-ddTHH:mm:ss.fffffffZ), with its
// colons as "%3A", as an ETag holds it.
func appendEscapedColons(b, s []byte) []byte {
	b = append(b, s[:13]...)
	b = append(b, "%3A"...)
	b = append(b, s[14:16]...)
	b = append(b, "%3A"...)
	return append(b, s[17:]...)
}

// memberWriter appends the members of a JSON object.
type memberWriter struct {
	b     []byte
	first bool
}

// name appends text, a member's name as JSON and its colon, after a
// comma unless it is the first member.
func (w *memberWriter) name(text string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, text...)
}

// member appends the name of a member, name followed by suffix, and its
// colon.
func (w *memberWriter) member(name, suffix string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = entityjson.AppendString(w.b, name)
	if suffix != "" {
		w.b = append(w.b[:len(w.b)-1], suffix...) // a suffix needs no escaping
		w.b = append(w.b, '"')
	}
	w.b = append(w.b, ':')
}

// property appends a custom property and, at level, its type annotation.
func (w *memberWriter) property(name string, v localtable.Value, level metaLevel) {
	if v.IsNull() {
		return
	}
	if ann := annotation(v, level); ann != "" {
		w.member(name, entityjson.AnnotationSuffix)
		w.b = entityjson.AppendString(w.b, ann)
	}
	w.member(name, "")
	w.b = entityjson.AppendValue(w.b, v)
}

// system appends the system property name of e.
func (w *memberWriter) system(e *localtable.Entity, name string, level metaLevel) {
	switch name {
	case localtable.PartitionKeyName:
		w.member(name, "")
		w.b = entityjson.AppendString(w.b, e.PartitionKey)
	case localtable.RowKeyName:
		w.member(name, "")
		w.b = entityjson.AppendString(w.b, e.RowKey)
	case localtable.TimestampName:
		w.timestamp(e.Timestamp, localtable.TimeToTicks(e.Timestamp), level)
	}
}

// timestamp appends the Timestamp t, of ticks, and its annotation at level.
func (w *memberWriter) timestamp(t time.Time, ticks int64, level metaLevel) {
	if level == metaFull {
		w.member(localtable.TimestampName, entityjson.AnnotationSuffix)
		w.b = entityjson.AppendString(w.b, "Edm.DateTime")
	}
	w.member(localtable.TimestampName, "")
	if ticks >= 0 && ticks <= ticktime.Max {
		w.b = append(w.b, '"')
		w.b = ticktime.Append(w.b, ticks, true, ":")
		w.b = append(w.b, '"')
	} else {
		w.b = entityjson.AppendString(w.b, edmfmt.DateTime7(t))
	}
}

// nameLess is a < b, with the first bytes, where names mostly differ,
// compared inline.
func nameLess(a, b string) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return a < b
}

// sortedNames appends the names of p to buf, sorted: by insertion for the
// few of a typical entity, which needs no calls to compare.
func sortedNames(buf []string, p localtable.Properties) []string {
	for name := range p {
		buf = append(buf, name)
	}
	if len(buf) > 16 {
		slices.Sort(buf)
		return buf
	}
	for i := 1; i < len(buf); i++ {
		n := buf[i]
		j := i
		for ; j > 0 && nameLess(n, buf[j-1]); j-- {
			buf[j] = buf[j-1]
		}
		buf[j] = n
	}
	return buf
}

// entityPath is the path of an entity below the account, as the SDKs
// write it: keys quote-doubled, then path-escaped.
func entityPath(table, pk, rk string) string {
	return string(appendEntityPath(nil, table, pk, rk))
}

// appendEntityPath appends entityPath(table, pk, rk) to b.
func appendEntityPath(b []byte, table, pk, rk string) []byte {
	b = append(b, table...)
	b = append(b, "(PartitionKey="...)
	b = appendPathKey(b, pk)
	b = append(b, ",RowKey="...)
	b = appendPathKey(b, rk)
	return append(b, ')')
}

// appendPathKey appends key k as entityPath writes it: quote-doubled
// and path-escaped, its quotes left as they are. Keys of unreserved
// characters only, most of them, are appended as they are.
func appendPathKey(b []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		if !isUnreserved(k[i]) {
			return append(b, strings.ReplaceAll(url.PathEscape(odata.Quote(k)), "%27", "'")...)
		}
	}
	b = append(b, '\'')
	b = append(b, k...)
	return append(b, '\'')
}

// isUnreserved reports whether c is one of RFC 3986's unreserved
// characters, which path escaping leaves as they are.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// annotation returns the @odata.type a value is written with at level:
// entityjson.Annotation's, and nothing at nometadata.
func annotation(v localtable.Value, level metaLevel) string {
	if level == metaNone {
		return ""
	}
	return entityjson.Annotation(v)
}
