package server

import (
	"errors"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/internal/rawquery"
	"github.com/localtable/localtable/internal/reqclass"
	"github.com/localtable/localtable/server/internal/auth"
)

// parseSelect reads $select: nil when absent or when a term is *, the
// listed names otherwise. It also returns the custom names alone, for the
// core, which refuses a term that is not a property name (400
// InvalidInput, as the service answers).
func (rc *reqCtx) parseSelect() (all, custom []string) {
	s := strings.TrimSpace(rc.query.Get("$select"))
	if s == "" {
		return nil, nil
	}
	all, custom = []string{}, []string{}
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "*" {
			return nil, nil
		}
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		all = append(all, f)
		switch f {
		case localtable.PartitionKeyName, localtable.RowKeyName, localtable.TimestampName:
		default:
			custom = append(custom, f)
		}
	}
	return all, custom
}

// queryStored is package localtable's query whose entities are handed
// over as stored (see package internal/rawquery).
// rows holds the Rows point reads decode into: reused, a read
// allocates nothing.
var rows = sync.Pool{New: func() any { return new(localtable.Row) }}

var queryStored = rawquery.Get[*localtable.Table, localtable.QueryOptions, localtable.QueryPage, localtable.Value]()

// insertEntity serves Insert Entity.
func (rc *reqCtx) insertEntity() {
	table := rc.cls.Table
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
	e, _, err := entityjson.DecodeRequest(body, true)
	if err != nil {
		rc.fail(err)
		return
	}
	if err := rc.authorize(rc.cls.Op, table, e.PartitionKey, e.RowKey); err != nil {
		rc.fail(err)
		return
	}
	tag, err := rc.acct.data.Table(table).Insert(rc.r.Context(), e)
	if err != nil {
		rc.fail(err)
		return
	}
	setHeader(rc.w.Header(), hdrETag, string(tag))
	bp := bodyBufs.Get().(*[]byte)
	defer putBody(bp)
	rc.writeCreated(rc.baseURL()+"/"+entityPath(table, e.PartitionKey, e.RowKey), level, func() []byte {
		e.ETag = tag
		e.Timestamp, _ = tag.Time()
		*bp = appendEntity((*bp)[:0], &e, rc.encodeOpts(level, table, nil), true)
		return *bp
	})
}

// getEntity serves Query Entity: one entity by its keys.
func (rc *reqCtx) getEntity() {
	res := &rc.cls
	level, err := rc.metadata()
	if err != nil {
		rc.fail(err)
		return
	}
	if err := rc.authorize(res.Op, res.Table, res.PartitionKey, res.RowKey); err != nil {
		rc.fail(err)
		return
	}
	sel, custom := rc.parseSelect()
	if sel == nil {
		// Written from the stored record, as a query's entities are: no
		// Entity, no Properties map.
		row := rows.Get().(*localtable.Row)
		defer rows.Put(row)
		if err := rc.acct.data.Table(res.Table).GetRow(rc.r.Context(), res.PartitionKey, res.RowKey, row); err != nil {
			rc.fail(err)
			return
		}
		ts, _ := row.Property(localtable.TimestampName)
		bp := bodyBufs.Get().(*[]byte)
		defer putBody(bp)
		*bp = appendStored((*bp)[:0], res.PartitionKey, res.RowKey, ts.Ticks(), row.Properties(), rc.encodeOpts(level, res.Table, nil), true)
		if err := row.Err(); err != nil {
			rc.fail(err)
			return
		}
		setHeader(rc.w.Header(), hdrETag, string(row.ETag()))
		rc.writeJSON(http.StatusOK, level, *bp)
		return
	}
	e, err := rc.acct.data.Table(res.Table).Get(rc.r.Context(), res.PartitionKey, res.RowKey, &localtable.GetOptions{Select: custom})
	if err != nil {
		rc.fail(err)
		return
	}
	rc.w.Header().Set("ETag", string(e.ETag))
	bp := bodyBufs.Get().(*[]byte)
	defer putBody(bp)
	*bp = appendEntity((*bp)[:0], &e, rc.encodeOpts(level, res.Table, sel), true)
	rc.writeJSON(http.StatusOK, level, *bp)
}

// writeEntity serves PUT (replace) and PATCH/MERGE (merge): Update
// Entity and Merge Entity when If-Match is sent, Insert Or Replace Entity
// and Insert Or Merge Entity otherwise.
func (rc *reqCtx) writeEntity() {
	res := &rc.cls
	body, err := rc.readJSONBody(MaxEntityBody)
	if err != nil {
		rc.fail(err)
		return
	}
	e, _, err := entityjson.DecodeRequest(body, false)
	if err != nil {
		rc.fail(err)
		return
	}
	e.PartitionKey, e.RowKey = res.PartitionKey, res.RowKey // the URL addresses the entity
	mode := localtable.UpdateModeReplace
	if res.Op == reqclass.MergeEntity || res.Op == reqclass.InsertOrMergeEntity {
		mode = localtable.UpdateModeMerge
	}
	t := rc.acct.data.Table(res.Table)
	var tag localtable.ETag
	if err = rc.authorize(res.Op, res.Table, res.PartitionKey, res.RowKey); err == nil {
		if res.Op == reqclass.UpdateEntity || res.Op == reqclass.MergeEntity {
			tag, err = t.Update(rc.r.Context(), e, &localtable.UpdateOptions{Mode: mode, IfMatch: localtable.ETag(rc.r.Header.Get("If-Match"))})
		} else {
			tag, err = t.Upsert(rc.r.Context(), e, &localtable.UpsertOptions{Mode: mode})
		}
	}
	if err != nil {
		rc.fail(err)
		return
	}
	h := rc.w.Header()
	h.Set("ETag", string(tag))
	h.Set("DataServiceVersion", "3.0;")
	rc.writeHeader(http.StatusNoContent)
}

// deleteEntity serves Delete Entity.
func (rc *reqCtx) deleteEntity() {
	res := &rc.cls
	if err := rc.authorize(res.Op, res.Table, res.PartitionKey, res.RowKey); err != nil {
		rc.fail(err)
		return
	}
	ifMatch := rc.r.Header.Get("If-Match")
	if ifMatch == "" {
		ifMatch = "*"
	}
	if err := rc.acct.data.Table(res.Table).Delete(rc.r.Context(), res.PartitionKey, res.RowKey, &localtable.DeleteOptions{IfMatch: localtable.ETag(ifMatch)}); err != nil {
		rc.fail(err)
		return
	}
	rc.w.Header().Set("DataServiceVersion", "3.0;")
	rc.writeHeader(http.StatusNoContent)
}

// queryEntities serves Query Entities.
func (rc *reqCtx) queryEntities() {
	table := rc.cls.Table
	level, err := rc.metadata()
	if err != nil {
		rc.fail(err)
		return
	}
	if err := rc.authorize(rc.cls.Op, table, "", ""); err != nil {
		rc.fail(err)
		return
	}
	opts := localtable.QueryOptions{
		ScanLimit: rc.s.scanLimit(),
		MaxBytes:  MaxQueryPageBytes,
	}
	rc.resumeAt(&opts) // paging.go
	first := opts.Continuation.IsZero()
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
	if r, ok := rc.grant.KeyRange(); ok {
		opts.Filter = auth.Restrict(opts.Filter, r)
	}
	sel, custom := rc.parseSelect()
	opts.Select = custom
	eo := rc.encodeOpts(level, table, sel)
	bp := bodyBufs.Get().(*[]byte)
	defer putBody(bp)
	// The page is built whole, then written: its memory counts against
	// MaxPageBytesInFlight until the client has it (or is cut).
	mem := pageMemory{b: &rc.s.pages}
	defer mem.release()
	b := (*bp)[:0]
	b = append(b, '{')
	if level != metaNone {
		b = append(b, `"odata.metadata":`...)
		b = entityjson.AppendString(b, eo.base+"/$metadata#"+table)
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	var page localtable.QueryPage
	switch {
	case top == 0:
		// $top=0 asks for nothing: an empty page without a continuation,
		// once the table is known to exist.
		_, err = rc.acct.data.GetTable(rc.r.Context(), table)
	case sel == nil && !rc.s.opts.EmptyFirstPage && !rc.s.opts.PageAtPartitionBoundary:
		// Written as the scan finds them, from their stored records:
		// no Entity, no Properties map.
		n := 0
		sw := newStoredWriter(eo)
		page, err = queryStored(rc.acct.data.Table(table), rc.r.Context(), opts, func(pk, rk string, ticks int64, props iter.Seq2[string, localtable.Value]) error {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = sw.append(b, pk, rk, ticks, props, false)
			return mem.grow(b)
		})
	default:
		page, err = rc.acct.data.Table(table).Query(rc.r.Context(), &opts)
	}
	var next nextPage
	if err == nil {
		next = rc.s.shapePage(&page, first)
	}
	for i := 0; err == nil && i < len(page.Entities); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEntity(b, &page.Entities[i], eo, false)
		err = mem.grow(b)
	}
	if err == nil {
		b = append(b, "]}"...)
		err = mem.grow(b)
	}
	*bp = b
	if errors.Is(err, errPagesBusy) {
		// Not the server's failure: the client may retry, as the SDKs do.
		e := errServerBusy()
		rc.writeError(HTTPStatus(e.Code), e, e)
		return
	}
	if err != nil {
		rc.fail(err)
		return
	}
	h := rc.w.Header()
	if page.Stats.Index != "" {
		h.Set(IndexHeader, page.Stats.Index)
	}
	h.Set(ScannedHeader, strconv.Itoa(page.Stats.Scanned))
	if next.pk != "" {
		rc.w.Header().Set("x-ms-continuation-NextPartitionKey", next.pk)
	}
	if next.rk != "" {
		rc.w.Header().Set("x-ms-continuation-NextRowKey", next.rk)
	}
	rc.writeJSON(http.StatusOK, level, b)
}
