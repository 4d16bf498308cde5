package server

import (
	"errors"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
)

// This file serves the account's change feed (localtable.Account.Watch)
// over HTTP: GET /{account}/$changes, a localtable extension, not an
// operation of the Azure Table service (no SDK calls it).
//
// Query parameters:
//
//	from     a revision: the stream starts with the change after it
//	         (0: the oldest change kept; absent: the next commit)
//	table    only this table's changes (case-insensitive)
//	$filter  only the entity changes whose entity it matches (the
//	         service's filter syntax); a table's changes always pass
//	$format  the metadata level of the entities, as for a query
//	         (default application/json;odata=minimalmetadata)
//
// The answer is 200, Content-Type: application/x-ndjson, with
// X-Localtable-Revision: the account's revision when the stream began.
// Each change is one line, a JSON object (entityjson.AppendChange):
//
//	{"revision":7,"commit":6,"last":true,"kind":"Insert","table":"Orders",
//	 "entity":{"odata.etag":"W/\"datetime'…'\"","PartitionKey":"p","RowKey":"r","Timestamp":"…",…}}
//
// kind is Insert, Replace, Merge, Delete, TableCreated, TableDeleted or
// Restored (the data replaced by a restore; table is "");
// entity is the entity as a query returns it after an insert, replace or
// merge, its keys alone after a delete, and absent for a table's change.
// The lines of a commit are written and flushed together (a commit's
// lines over 1 MiB in parts). The stream goes
// on until the client goes away or the server shuts down; an error after
// the status line (the account closing, the feed compacted under a slow
// reader) is a last line {"odata.error":{…}} in the service's JSON error
// shape.
//
// Errors before the stream: 404 ResourceNotFound if the account has no
// feed (served without --feed, Options.Feed unset); 400
// InvalidQueryParameterValue for a from that is not a revision or lies
// beyond the account's; 410 FeedCompacted (a localtable code) if the
// feed no longer keeps the changes after from, with
// X-Localtable-Oldest-Revision naming the oldest it keeps: reread the
// data, then watch from the current revision.
//
// Authorization: Shared Key (or a bearer token, where accepted), or an
// account SAS with ss=t, srt=c and o, and sp=r. A service SAS is for one
// table and does not grant the feed.

// ChangesContentType is the Content-Type of the change feed's stream.
const ChangesContentType = "application/x-ndjson"

// Headers of the change feed's answers.
const (
	// RevisionHeader carries the account's revision when the stream
	// began: watching from it again resumes where a stream opened
	// without from began.
	RevisionHeader = "X-Localtable-Revision"
	// OldestRevisionHeader carries, with 410 FeedCompacted, the oldest
	// revision the feed keeps.
	OldestRevisionHeader = "X-Localtable-Oldest-Revision"
)

// codeFeedCompacted is localtable's code for a watch from a revision the
// feed no longer keeps: 410 Gone.
const codeFeedCompacted localtable.ErrorCode = "FeedCompacted"

// watchChanges serves GET /{account}/$changes.
func (rc *reqCtx) watchChanges() {
	if err := rc.authorize(rc.cls.Op, "", "", ""); err != nil {
		rc.fail(err)
		return
	}
	level, err := rc.metadata()
	if err != nil {
		rc.fail(err)
		return
	}
	var pred localtable.Predicate
	if f := rc.query.Get("$filter"); f != "" {
		if pred, err = parseFilter(f); err != nil {
			rc.fail(err)
			return
		}
	}
	table := strings.ToLower(rc.query.Get("table"))
	if table != "" {
		if err := localtable.ValidateTableName(table); err != nil {
			why := err.Error()
			if e := (*localtable.Error)(nil); errors.As(err, &e) {
				why = e.Message
			}
			rc.fail(wireError(codeInvalidQueryParameter, "table "+strconv.Quote(rc.query.Get("table"))+" is not a table's name: "+why))
			return
		}
	}
	ctx := rc.r.Context()
	data := rc.acct.data
	rev, err := data.Revision(ctx)
	if errors.Is(err, localtable.ErrFeedOff) {
		rc.fail(&localtable.Error{Code: localtable.CodeResourceNotFound,
			Message: "The account has no change feed: $changes is a localtable extension, on when the account is opened with Options.Feed ('localtable serve --feed')."})
		return
	}
	if err != nil {
		rc.fail(err)
		return
	}
	after := rev
	if s := rc.query.Get("from"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			rc.fail(wireError(codeInvalidQueryParameter, "from "+strconv.Quote(s)+" is not a revision (a decimal number)."))
			return
		}
		if localtable.Revision(n) > rev {
			rc.fail(wireError(codeInvalidQueryParameter, "from "+s+" is beyond the account's revision, "+strconv.FormatUint(uint64(rev), 10)+"."))
			return
		}
		after = localtable.Revision(n)
	}
	// Every change comes through, filtered here, so that each commit's
	// lines are flushed at its last change even when a filter drops it.
	next, stop := iter.Pull2(data.Watch(ctx, &localtable.WatchOptions{After: after}))
	defer stop()
	var (
		first    localtable.Change
		firstErr error
		have     bool
	)
	if after < rev {
		// The first change is stored: it comes at once, or the error
		// that the feed no longer keeps it.
		first, firstErr, have = next()
		var fc *localtable.FeedCompactedError
		if errors.As(firstErr, &fc) {
			rc.w.Header().Set(OldestRevisionHeader, strconv.FormatUint(uint64(fc.Oldest), 10))
			rc.fail(wireError(codeFeedCompacted, fc.Error()))
			return
		}
		if firstErr != nil {
			rc.fail(firstErr)
			return
		}
	}
	h := rc.w.Header()
	h.Set("Content-Type", ChangesContentType)
	h.Set(RevisionHeader, strconv.FormatUint(uint64(rev), 10))
	rc.writeHeader(http.StatusOK)
	ctl := http.NewResponseController(rc.w)
	// The stream lasts until the client goes: the server's read and
	// write timeouts, meant for a request and its response, do not
	// apply (where the writer supports deadlines).
	ctl.SetWriteDeadline(time.Time{})
	ctl.SetReadDeadline(time.Time{})
	rc.releaseSlot() // nor does the cap on requests answered at once
	ctl.Flush()
	o := rc.encodeOpts(level, "", nil)
	entity := func(b []byte, e *localtable.Entity) []byte { return appendEntity(b, e, o, false) }
	sel := &localtable.WatchOptions{Table: table, Filter: pred}
	var buf []byte
	for {
		if !have {
			if first, firstErr, have = next(); !have {
				return
			}
		}
		c, err := first, firstErr
		have = false
		if err != nil {
			if ctx.Err() == nil {
				e := asWireError(err)
				if fc := (*localtable.FeedCompactedError)(nil); errors.As(err, &fc) {
					e = wireError(codeFeedCompacted, fc.Error())
				}
				buf = append(errorBody(e, "", rc.id, rc.s.now()), '\n')
				rc.w.Write(buf)
				ctl.Flush()
			}
			return
		}
		if sel.Selects(&c) {
			o.table = c.Table
			buf = entityjson.AppendChange(buf, &c, entity)
		}
		if len(buf) > 0 && (c.Last || len(buf) > 1<<20) {
			if _, err := rc.w.Write(buf); err != nil {
				return
			}
			if err := ctl.Flush(); err != nil {
				return
			}
			buf = buf[:0]
		}
	}
}
