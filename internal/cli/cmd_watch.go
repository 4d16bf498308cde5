package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/server"
)

func init() {
	register(&command{
		name: "watch", args: "[TABLE] [flags]",
		summary: "print an account's changes: a running server's as they come, or a data directory's history",
		details: `Prints the changes of the account's change feed, of TABLE only if given,
and with --filter only the entity changes whose entity it matches (after a
delete, its keys; a table's creation and deletion always pass).

With --endpoint or a connection string it reads the server's feed
(GET /ACCOUNT/$changes, a localtable extension: the server runs with
--feed), signed with the account key, and follows it until interrupted:
from the next commit, or with --from REV from the change after revision
REV (a revision printed before: resuming from it misses nothing and
repeats nothing). A revision the feed no longer keeps fails with
FeedCompacted: reread the data, then watch from the current revision,
which is printed on standard error when the watch starts. The server must
run with --feed (localtable serve --location ./data --feed).

With --location it reads a data directory's feed offline (kept while a
server ran on it with --feed), from the oldest change kept or --from REV,
prints it and exits: offline there is no other writer.

-o jsonl prints one JSON object a line, as the server sends them:
revision, commit (the revision of the commit's first change), last (the
commit's last change), kind (Insert, Replace, Merge, Delete, Expired: an
entity of a table with an expiry policy expired and was deleted,
TableCreated, TableDeleted, or Restored: the data was replaced by a
restore, table ""), table and entity (after an insert, replace or merge,
the entity with odata.etag and Timestamp; after a delete or an expiry, its
keys). -o table prints a line per change: revision, kind, table and keys,
tab-separated; a commit's later changes (those after its first, as the
changes of a transaction) are indented by two spaces under its first.` + "\n" + sourceHelp,
		examples: `
localtable watch --endpoint http://127.0.0.1:10002/devstoreaccount1
localtable watch Orders --filter "Status eq 'open'" -o jsonl --endpoint http://127.0.0.1:10002/devstoreaccount1
localtable watch --from 1200 --endpoint http://127.0.0.1:10002/devstoreaccount1
localtable watch Orders --location ./data                  # offline: the history kept, then exit`,
		run: runWatch,
	})
}

// watchLine is a line of the change feed's stream (server/changes.go).
type watchLine struct {
	Revision uint64          `json:"revision"`
	Commit   uint64          `json:"commit"`
	Last     bool            `json:"last"`
	Kind     string          `json:"kind"`
	Table    string          `json:"table"`
	Entity   json.RawMessage `json:"entity,omitempty"`
	Error    *struct {
		Code    string `json:"code"`
		Message struct {
			Value string `json:"value"`
		} `json:"message"`
	} `json:"odata.error,omitempty"`
}

func runWatch(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	var src sourceFlags
	src.register(fs)
	fromText := fs.String("from", "", "start after revision `REV` (default: the next commit on a server, the oldest change kept offline)")
	filterText := fs.String("filter", "", "an OData $filter the entity of an entity change must match")
	out := outputFlag(fs, "table", "jsonl")
	pos, err := c.parse(e, fs, args, 0, 1)
	if err != nil {
		return err
	}
	var table string
	if len(pos) == 1 {
		table = pos[0]
	}
	from, hasFrom := uint64(0), *fromText != ""
	if hasFrom {
		if from, err = strconv.ParseUint(*fromText, 10, 64); err != nil {
			return usagef(c, "--from %q: want a revision (a number)", *fromText)
		}
	}
	var f *filter.Filter
	if *filterText != "" {
		if f, err = filter.Parse(*filterText); err != nil {
			return fmt.Errorf("--filter: %w", err)
		}
	}
	local, remote, err := src.resolve(e, c)
	if err != nil {
		return err
	}
	emit := func(l *watchLine, raw []byte) error {
		if *out == "jsonl" {
			_, err := fmt.Fprintf(e.stdout, "%s\n", raw)
			return err
		}
		return printWatchLine(e.stdout, l)
	}
	if remote != nil {
		return watchRemote(ctx, e, remote, table, *filterText, *fromText, emit)
	}
	st, err := openLocal(ctx, local, openOpts{feed: true, readOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	return watchLocal(ctx, e, st.acct, table, f, localtable.Revision(from), emit)
}

// watchLocal prints the changes a data directory's feed keeps after
// from, and returns.
func watchLocal(ctx context.Context, e *env, acct *localtable.Account, table string, f *filter.Filter, from localtable.Revision, emit func(*watchLine, []byte) error) error {
	last, err := acct.Revision(ctx)
	if err != nil {
		return err
	}
	if last == 0 {
		fmt.Fprintln(e.stderr, "no changes kept: a data directory keeps a change feed while 'localtable serve --feed' runs on it")
		return nil
	}
	if from > last {
		// As the server answers: a revision of another store, or of this
		// one before a restore from an older backup.
		return fmt.Errorf("--from %d is beyond the data directory's revision, %d", from, last)
	}
	if from == last {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Every change comes through and is filtered here: the watch ends at
	// the last revision, which a filter may drop.
	sel := &localtable.WatchOptions{Table: table}
	if f != nil {
		sel.Filter = f
	}
	for ch, err := range acct.Watch(ctx, &localtable.WatchOptions{After: from}) {
		if err != nil {
			return err
		}
		if sel.Selects(&ch) {
			raw := entityjson.AppendChange(nil, &ch, nil)
			raw = raw[:len(raw)-1] // the newline
			var l watchLine
			if err := json.Unmarshal(raw, &l); err != nil {
				return err
			}
			if err := emit(&l, raw); err != nil {
				return err
			}
		}
		if ch.Revision >= last {
			return nil
		}
	}
	return ctx.Err()
}

// watchRemote follows a server's change feed until ctx ends.
func watchRemote(ctx context.Context, e *env, t *remoteTarget, table, filterText, from string, emit func(*watchLine, []byte) error) error {
	q := url.Values{}
	if table != "" {
		q.Set("table", table)
	}
	if filterText != "" {
		q.Set("$filter", filterText)
	}
	if from != "" {
		q.Set("from", from)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.endpoint+"/$changes?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	signSharedKeyLite(req, t.account, t.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		re := answerError(resp, body)
		if le := re.err; resp.StatusCode == http.StatusNotFound && le.Code == localtable.CodeResourceNotFound {
			le.Message += " (is the server running with --feed?)"
		}
		return re
	}
	if rev := resp.Header.Get(server.RevisionHeader); rev != "" && from == "" {
		fmt.Fprintf(e.stderr, "watching from revision %s (resume with --from REV, the last revision printed)\n", rev)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var l watchLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("reading the server's change feed: %v", err)
		}
		if l.Error != nil {
			return &localtable.Error{Code: localtable.ErrorCode(l.Error.Code), Message: l.Error.Message.Value}
		}
		if err := emit(&l, sc.Bytes()); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil // interrupted
	}
	if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("reading the server's change feed: %w", err)
	}
	return errors.New("the server ended the change feed (it is shutting down)")
}

// answerError is the error of a server's answer that is not a success,
// from its x-ms-error-code and the message of its JSON error body.
func answerError(resp *http.Response, body []byte) *remoteError {
	var l watchLine
	json.Unmarshal(body, &l)
	le := &localtable.Error{Code: localtable.ErrorCode(resp.Header.Get("x-ms-error-code")), Message: resp.Status}
	if l.Error != nil {
		le.Message = serviceMessage(l.Error.Message.Value)
	}
	return &remoteError{status: resp.StatusCode, err: le}
}

// serviceMessage is the message of a service's error without the
// "\nRequestId:…\nTime:…" the service appends to it: the message the Go
// API gives for the same failure, so that a command's error reads the
// same on a data directory and on a server.
func serviceMessage(msg string) string {
	msg, _, _ = strings.Cut(msg, "\nRequestId:")
	return strings.TrimSpace(msg)
}

// signSharedKeyLite signs req for account with key: Authorization
// SharedKeyLite, over x-ms-date and the canonicalized resource: the path
// as sent, after the account, and the request's comp=, if any.
func signSharedKeyLite(req *http.Request, account string, key []byte) {
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("X-Ms-Date", date)
	req.Header.Set("X-Ms-Version", server.LatestVersion)
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	path := req.URL.EscapedPath()
	if comp := req.URL.Query().Get("comp"); comp != "" {
		path += "?comp=" + comp
	}
	req.Header.Set("Authorization", "SharedKeyLite "+account+":"+signAdmin(key, date, account, path)) // the same string
}

// printWatchLine prints a change as a readable line: revision, kind,
// table, and an entity's keys; a commit's further changes are indented.
func printWatchLine(w io.Writer, l *watchLine) error {
	var keys struct {
		PartitionKey string `json:"PartitionKey"`
		RowKey       string `json:"RowKey"`
	}
	s := fmt.Sprintf("%d\t%s\t%s", l.Revision, l.Kind, cell(l.Table))
	if len(l.Entity) > 0 && json.Unmarshal(l.Entity, &keys) == nil {
		s += "\t" + cell(keys.PartitionKey) + "\t" + cell(keys.RowKey)
	}
	if l.Commit != 0 && l.Commit != l.Revision {
		s = "  " + s
	}
	_, err := fmt.Fprintln(w, s)
	return err
}
