package explorer

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
)

// The Changes view of a table: t/{table}/changes is the page, and
// t/{table}/changes/stream?from=REV the stream its script reads with
// fetch(), authorized by the session as every page is. The stream is
// the change feed's NDJSON (entityjson.AppendChange, as the server's
// GET /{account}/$changes writes it) of the table's changes after REV,
// each entity with its odata.etag and Timestamp and every value
// annotated with its Edm type, so that the page can name the types; it
// lasts until the client goes away, the server shuts down (which ends
// the request's context) or the account closes. An error is a JSON
// object {"error":{"code":…,"message":…}}: the body of a 4xx answer
// before the stream (FeedOff with 404, InvalidInput with 400), or its
// last line (FeedCompacted: the feed no longer keeps the changes after
// REV, so resuming would miss some).

// Codes of the stream's errors.
const (
	codeFeedOff       = "FeedOff"
	codeFeedCompacted = "FeedCompacted"
)

// feedOffMessage says why a table shows no changes.
const feedOffMessage = "This account has no change feed: the server was started without --feed. Restart it with 'localtable serve --feed' (or open the account with Options.Feed) to watch changes here."

// serveChangesPage serves the Changes view: the page, whose script
// then reads the stream from the account's current revision, or from
// the URL's from (a reload resumes where the page was).
func (x *Explorer) serveChangesPage(w http.ResponseWriter, r *http.Request, acct *Account, t *localtable.Table, p *page) {
	p.Title = t.Name() + " changes"
	rev, err := acct.Data.Revision(r.Context())
	if errors.Is(err, localtable.ErrFeedOff) {
		p.FeedOff = feedOffMessage
		x.render(w, r, http.StatusOK, "changes", p)
		return
	}
	if err != nil {
		p.Error = errText(err)
		x.render(w, r, statusOf(err), "error", p)
		return
	}
	p.From = uint64(rev)
	if s := r.URL.Query().Get("from"); s != "" {
		if n, err := strconv.ParseUint(s, 10, 64); err == nil && n <= uint64(rev) {
			p.From = n
		}
	}
	p.StreamURL = x.tableURL(p.Account, t.Name(), nil) + "/changes/stream"
	x.render(w, r, http.StatusOK, "changes", p)
}

// streamError writes the stream's error object, with a newline.
func streamError(w http.ResponseWriter, code, message string) {
	b, _ := json.Marshal(map[string]map[string]string{"error": {"code": code, "message": message}})
	w.Write(append(b, '\n'))
}

// failStream answers a request for the stream with an error, before it.
func failStream(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	streamError(w, code, message)
}

// serveChangesStream streams the changes of table t after the request's
// from.
func (x *Explorer) serveChangesStream(w http.ResponseWriter, r *http.Request, acct *Account, t *localtable.Table) {
	ctx := r.Context()
	rev, err := acct.Data.Revision(ctx)
	if errors.Is(err, localtable.ErrFeedOff) {
		failStream(w, http.StatusNotFound, codeFeedOff, feedOffMessage)
		return
	}
	if err != nil {
		failStream(w, statusOf(err), "Error", errText(err))
		return
	}
	after := rev
	if s := r.URL.Query().Get("from"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n > uint64(rev) {
			failStream(w, http.StatusBadRequest, string(localtable.CodeInvalidInput),
				"from "+strconv.Quote(s)+" is not a revision of this account (its revision is "+strconv.FormatUint(uint64(rev), 10)+").")
			return
		}
		after = localtable.Revision(n)
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	ctl := http.NewResponseController(w)
	// The stream lasts until the client goes: the server's read and
	// write timeouts, meant for a request and its response, do not
	// apply (where the writer supports deadlines).
	ctl.SetWriteDeadline(time.Time{})
	ctl.SetReadDeadline(time.Time{})
	ctl.Flush()
	table := t.Name()
	entity := func(b []byte, e *localtable.Entity) []byte {
		return entityjson.Append(b, e, &entityjson.Options{System: true, Annotate: true})
	}
	var buf []byte
	// Every change comes through, selected here, so that each commit's
	// lines are flushed together at its last change.
	for c, err := range acct.Data.Watch(ctx, &localtable.WatchOptions{After: after}) {
		if err != nil {
			if ctx.Err() == nil {
				var fc *localtable.FeedCompactedError
				if errors.As(err, &fc) {
					streamError(w, codeFeedCompacted, "The feed no longer keeps the changes after revision "+
						strconv.FormatUint(uint64(fc.After), 10)+" (it keeps those from "+strconv.FormatUint(uint64(fc.Oldest), 10)+"): some changes were missed.")
				} else {
					streamError(w, "Error", errText(err))
				}
				ctl.Flush()
			}
			return
		}
		if strings.EqualFold(c.Table, table) {
			buf = entityjson.AppendChange(buf, &c, entity)
		}
		if len(buf) > 0 && (c.Last || len(buf) > 1<<20) {
			if _, err := w.Write(buf); err != nil {
				return
			}
			if err := ctl.Flush(); err != nil {
				return
			}
			buf = buf[:0]
		}
	}
}
