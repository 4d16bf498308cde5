package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tableio"
	"github.com/localtable/localtable/server"
)

func init() {
	register(&command{
		name: "import", args: "TABLE FILE|- [flags]",
		summary: "load JSONL or CSV into a table, in transactions per partition",
		details: `Reads entities from FILE (- for standard input): JSONL, one entity a line
in the service's JSON format ("Name@odata.type" annotations), or CSV with a
typed header (PartitionKey,RowKey,Age@Edm.Int32,Name,...; an empty unquoted
field is an absent property, "" an empty string). The format follows the
file's extension unless --format says.

Entities are written in entity group transactions of up to 100 entities of
one partition (consecutive or not: up to 256 partitions are collected at
once). By default each is an upsert (InsertOrReplace), so importing a file
twice leaves the same table: a run that stopped can be started again, or
resumed. --mode merge merges into existing entities, --mode insert fails
on them. A transaction that fails is retried entity by entity, so that each
bad record is reported with its line and the others are written.

The table must exist (or --create it): import checks it before reading
the file. An error that is not about one record (a missing table, a
refused key, a server that fails or cannot be reached, an interruption)
stops the import at once.

Resuming: while it runs, import keeps a checkpoint file (FILE.checkpoint,
or --checkpoint) saying which records are done: written and acknowledged
(and synced to disk first), or failed and reported. A record whose write
was not acknowledged when the import stopped is not done. --resume skips
the records that are done and imports the others; in --mode insert, a
record not acknowledged before that the table holds exactly as written
counts as written. --skip N skips the records starting on lines 1 to N.
The checkpoint is removed when the file is done. While the checkpoint of an
import that stopped is there, a run without --resume refuses to start (it
would start over): give --resume, or remove the checkpoint to start over.

Ctrl-C (SIGINT) or SIGTERM stops the import as an error does: the writes in
flight are cut, the checkpoint is saved and the report printed, and it exits
130; a second signal ends it at once.

At the end it prints the rows written, skipped and failed, with the line
and error of each failure, and exits 1 if any failed; an error that
stopped the import comes first. On a terminal a progress bar shows the
input done (its records written, failed or skipped; not merely read), the
rows written, the rate and the time left.` + "\n" + sourceHelp,
		examples: `
localtable import Orders orders.jsonl --location ./data --create
localtable import Orders orders.csv --endpoint http://127.0.0.1:10002/devstoreaccount1
localtable import Orders orders.jsonl --location ./data --resume
gunzip -c big.jsonl.gz | localtable import Big - --format jsonl --location ./data --create`,
		run: runImport,
	})
	register(&command{
		name: "export", args: "TABLE [FILE|-] [flags]",
		summary: "write a table's entities (or a query's) as JSONL or CSV",
		details: `Writes the entities a --filter selects (all by default), in (PartitionKey,
RowKey) order, to FILE (standard output by default), as JSONL (every Edm
type exact, with "Name@odata.type" annotations) or CSV (a typed header, one
column per property and type; the entities are read twice, once for the
columns). --timestamps adds each entity's Timestamp (and odata.etag in
JSONL), which import ignores. A file is written under a temporary name and
renamed when complete. Export, import and export again give the same bytes.` + "\n" + sourceHelp,
		examples: `
localtable export Orders orders.jsonl --location ./data
localtable export Orders orders.csv --filter "PartitionKey eq 'smith'" --select Total,Status --location ./data
localtable export Orders - --endpoint http://127.0.0.1:10002/devstoreaccount1 | head`,
		run: runExport,
	})
}

// importCheckpoint is the resumption state of an import. It never says
// a line is done before the write of its record was acknowledged (or the
// record failed and is listed in Failures).
type importCheckpoint struct {
	File  string `json:"file"`
	Table string `json:"table"`
	// Line is the line through which every record is done.
	Line int `json:"line"`
	// Through is the last line read (0: Line). The records on the lines
	// after Line and up to Through are done too, except those on the
	// lines of Pending: written in transactions that were not
	// acknowledged when the import stopped.
	Through int         `json:"through,omitempty"`
	Pending []lineRange `json:"pending,omitempty"`
	Written int         `json:"written"`
	// Failures are the records that failed so far, by line: a resumed
	// run reports them with its own.
	Failures []checkpointFailure `json:"failures,omitempty"`
	Updated  string              `json:"updated"`
}

// lineRange is the lines from its first to its second, both included.
type lineRange [2]int

// done reports whether the checkpoint says the record on line is done.
func (cp *importCheckpoint) done(line int) bool {
	if line <= cp.Line {
		return true
	}
	if line > cp.Through {
		return false
	}
	return !cp.pending(line)
}

// pending reports whether line is in Pending.
func (cp *importCheckpoint) pending(line int) bool {
	i := sort.Search(len(cp.Pending), func(i int) bool { return cp.Pending[i][1] >= line })
	return i < len(cp.Pending) && cp.Pending[i][0] <= line
}

// check refuses a checkpoint whose lines contradict each other.
func (cp *importCheckpoint) check() error {
	prev := cp.Line
	for _, r := range cp.Pending {
		if r[0] <= prev || r[1] < r[0] || r[1] > cp.Through {
			return fmt.Errorf("pending lines %d-%d out of order (line %d, through %d)", r[0], r[1], cp.Line, cp.Through)
		}
		prev = r[1]
	}
	return nil
}

// ranges compresses sorted lines into ranges of consecutive lines.
func ranges(lines []int) []lineRange {
	var out []lineRange
	for _, l := range lines {
		if n := len(out); n > 0 && out[n-1][1] == l-1 {
			out[n-1][1] = l
			continue
		}
		out = append(out, lineRange{l, l})
	}
	return out
}

type checkpointFailure struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// pendingBatch is the entities of one partition waiting for a
// transaction, with their lines.
type pendingBatch struct {
	pk    string
	lines []int
	acts  []localtable.Action
	sizes []int64 // the input bytes of each record (record.size)
	rows  map[string]bool
	bytes int
}

// failure is a record that was not written.
type failure struct {
	line int
	err  error
}

// importer writes records in transactions per partition. A record is
// done when its write is acknowledged or it failed (and is in failures);
// until then it stays in its batch, whatever error ends the import.
type importer struct {
	st        store
	table     string
	mode      localtable.ActionType
	open      map[string]*pendingBatch
	order     []*pendingBatch // open batches, oldest first
	lastLine  int             // the last line read
	written   int
	failures  []failure
	maxErrors int
	// doneBytes are the input bytes of the records done (written,
	// failed or skipped), which the progress bar shows; onProgress is
	// called when they grow.
	doneBytes  int64
	onProgress func()
	// prev is the checkpoint resumed from: its pending lines after
	// lastLine are still pending, and the lines it says are done after
	// lastLine are still done.
	prev importCheckpoint
}

// maxOpenBatches bounds the partitions collected at once.
const maxOpenBatches = 256

// maxBatchBytes keeps a transaction under the 4 MiB body limit.
const maxBatchBytes = 3 << 20

var errTooManyFailures = errors.New("too many failures")

// add queues one entity read from line, of size bytes of input.
func (im *importer) add(ctx context.Context, line int, size int64, e localtable.Entity) error {
	im.lastLine = line
	b := im.open[e.PartitionKey]
	payload := localtable.PayloadSize(&e)
	if b != nil && (b.rows[e.RowKey] || b.bytes+payload > maxBatchBytes) {
		if err := im.flush(ctx, b); err != nil {
			return err
		}
		b = nil
	}
	if b == nil {
		if len(im.order) >= maxOpenBatches {
			if err := im.flush(ctx, im.order[0]); err != nil {
				return err
			}
		}
		b = &pendingBatch{pk: e.PartitionKey, rows: map[string]bool{}}
		im.open[e.PartitionKey] = b
		im.order = append(im.order, b)
	}
	b.lines = append(b.lines, line)
	b.acts = append(b.acts, localtable.Action{Type: im.mode, Entity: e})
	b.sizes = append(b.sizes, size)
	b.rows[e.RowKey] = true
	b.bytes += payload
	if len(b.acts) == 100 {
		return im.flush(ctx, b)
	}
	return nil
}

// fail records a record that was not written, of size bytes of input.
func (im *importer) fail(line int, size int64, err error) error {
	im.failures = append(im.failures, failure{line, err})
	im.progress(size)
	if im.maxErrors > 0 && len(im.failures) >= im.maxErrors {
		return errTooManyFailures
	}
	return nil
}

// progress counts size more bytes of input done.
func (im *importer) progress(size int64) {
	im.doneBytes += size
	if im.onProgress != nil {
		im.onProgress()
	}
}

// close takes a batch whose records are all done out of the open ones.
func (im *importer) close(b *pendingBatch) {
	if im.open[b.pk] == b {
		delete(im.open, b.pk)
	}
	for i, o := range im.order {
		if o == b {
			im.order = append(im.order[:i], im.order[i+1:]...)
			break
		}
	}
}

// flush commits one batch: as one transaction, or, if that fails, entity
// by entity, recording each failure. The batch stays open, holding the
// records not done, when an error ends the import: a fatal one, or too
// many failures.
func (im *importer) flush(ctx context.Context, b *pendingBatch) error {
	err := im.st.Transact(ctx, im.table, b.acts)
	if err == nil {
		im.written += len(b.acts)
		var size int64
		for _, n := range b.sizes {
			size += n
		}
		im.progress(size)
		im.close(b)
		return nil
	}
	if fatal(ctx, err) {
		return err
	}
	for len(b.acts) > 0 {
		line, a, size := b.lines[0], b.acts[0], b.sizes[0]
		_, err := im.st.Write(ctx, im.table, a)
		if err != nil && fatal(ctx, err) {
			return err
		}
		b.lines, b.acts, b.sizes = b.lines[1:], b.acts[1:], b.sizes[1:]
		if err != nil && !im.writtenBefore(ctx, line, &a.Entity, err) {
			if err := im.fail(line, size, err); err != nil {
				if len(b.acts) == 0 {
					im.close(b)
				}
				return err
			}
			continue
		}
		im.written++
		im.progress(size)
	}
	im.close(b)
	return nil
}

// writtenBefore reports whether an insert that failed with err is of a
// record that the run resumed from wrote without an acknowledgement: a
// pending line of its checkpoint whose entity the table holds as the
// record has it.
func (im *importer) writtenBefore(ctx context.Context, line int, e *localtable.Entity, err error) bool {
	if im.mode != localtable.ActionInsert || !errors.Is(err, localtable.ErrEntityExists) || !im.prev.pending(line) {
		return false
	}
	have, err := im.st.Get(ctx, im.table, e.PartitionKey, e.RowKey)
	if err != nil || len(have.Properties) != len(e.Properties) {
		return false
	}
	for name, v := range e.Properties {
		if w, ok := have.Properties[name]; !ok || !w.Equal(v) {
			return false
		}
	}
	return true
}

// fatal reports errors that end an import rather than fail one record:
// the context's, a missing table, a closed store, authentication and
// authorization, the server's failures and those of the connection. The
// errors of a record are the service's 400, 404 (other than
// TableNotFound), 409 (other than TableBeingDeleted), 412 and 413.
func fatal(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, localtable.ErrTableNotFound) || errors.Is(err, localtable.ErrClosed) {
		return true
	}
	var le *localtable.Error
	if !errors.As(err, &le) {
		return true
	}
	status := server.HTTPStatus(le.Code)
	var re *remoteError
	if errors.As(err, &re) {
		status = re.status
	}
	switch {
	case le.Code == localtable.CodeTableNotFound || le.Code == "TableBeingDeleted":
		return true
	case status == 400 || status == 404 || status == 409 || status == 412 || status == 413:
		return false
	}
	return true
}

// flushAll commits every open batch.
func (im *importer) flushAll(ctx context.Context) error {
	for len(im.order) > 0 {
		if err := im.flush(ctx, im.order[0]); err != nil {
			return err
		}
	}
	return nil
}

// checkpoint is the import's state: the lines of the open batches are
// pending (with those of the checkpoint resumed from not read again yet),
// every other line read (or done in the run resumed from) is done.
func (im *importer) checkpoint() importCheckpoint {
	var pending []int
	for _, b := range im.order {
		pending = append(pending, b.lines...)
	}
	for _, r := range im.prev.Pending {
		for l := max(r[0], im.lastLine+1); l <= r[1]; l++ {
			pending = append(pending, l)
		}
	}
	slices.Sort(pending)
	cp := importCheckpoint{Through: max(im.lastLine, im.prev.Through, im.prev.Line)}
	cp.Line = cp.Through
	if len(pending) > 0 {
		cp.Line = pending[0] - 1
		cp.Pending = ranges(pending)
	} else {
		cp.Through = 0
	}
	return cp
}

func runImport(ctx context.Context, e *env, c *command, args []string) error {
	ic, err := parseImport(e, c, args)
	if err != nil {
		return err
	}
	p, err := planImport(c, ic, e.stderr)
	if err != nil {
		return err
	}
	if err := p.loadResume(c, ic.table); err != nil {
		return err
	}
	// SIGINT (Ctrl-C) or SIGTERM stops the import as any other error
	// does: the writes in flight are cut, the checkpoint saved, the
	// report printed. A second signal ends the process at once.
	ctx, stop := notifyInterrupt(ctx)
	defer stop()
	in, size, closeIn, err := openImportInput(e, ic.path)
	if err != nil {
		return err
	}
	defer closeIn()
	// The table before the data is read: a missing table, a
	// refused key or an unreachable server end the import here.
	st, err := openImportTable(ctx, e, c, ic)
	if err != nil {
		return err
	}
	defer st.Close()
	r := &importRun{e: e, ic: ic, p: p, st: st}
	return r.run(ctx, in, size)
}

// importConfig is what import's arguments say.
type importConfig struct {
	src                    sourceFlags
	table, path            string
	format, mode, progress string
	create, resume         bool
	cpFile                 string
	skip, maxErrors        int
}

// parseImport reads import's arguments.
func parseImport(e *env, c *command, args []string) (*importConfig, error) {
	fs := c.flagSet()
	var ic importConfig
	ic.src.register(fs)
	fs.StringVar(&ic.format, "format", "", "jsonl or csv (default: by the file's extension; jsonl for -)")
	fs.StringVar(&ic.mode, "mode", "upsert", "upsert (insert or replace), merge (insert or merge) or insert (fail on existing entities)")
	fs.BoolVar(&ic.create, "create", false, "create the table if it does not exist")
	fs.BoolVar(&ic.resume, "resume", false, "skip the records the checkpoint file says are done")
	fs.StringVar(&ic.cpFile, "checkpoint", "", "the checkpoint `FILE` (default FILE.checkpoint; none for standard input)")
	fs.IntVar(&ic.skip, "skip", 0, "skip the records starting on lines 1 to `N`")
	fs.IntVar(&ic.maxErrors, "max-errors", 0, "stop after `N` failed records (0: never)")
	fs.StringVar(&ic.progress, "progress", "auto", "progress bar: auto (on a terminal), always or never")
	pos, err := c.parse(e, fs, args, 2, 2)
	if err != nil {
		return nil, err
	}
	ic.table, ic.path = pos[0], pos[1]
	return &ic, nil
}

// importPlan is how an import goes.
type importPlan struct {
	mode    localtable.ActionType
	format  tableio.Format
	showBar bool
	cpFile  string // "": no checkpoint
	resume  bool
	skip    int              // the records starting on lines 1 to skip are skipped
	cp      importCheckpoint // the checkpoint resumed from
}

// planImport checks import's flags and decides how it goes. It reads no
// file.
func planImport(c *command, ic *importConfig, stderr io.Writer) (*importPlan, error) {
	p := &importPlan{cpFile: ic.cpFile, resume: ic.resume, skip: ic.skip}
	switch ic.mode {
	case "upsert":
		p.mode = localtable.ActionUpsertReplace
	case "merge":
		p.mode = localtable.ActionUpsertMerge
	case "insert":
		p.mode = localtable.ActionInsert
	default:
		return nil, usagef(c, "--mode %q: want upsert, merge or insert", ic.mode)
	}
	var err error
	if p.format, err = fileFormat(ic.path, ic.format); err != nil {
		return nil, usagef(c, "%v", err)
	}
	if p.showBar, err = wantProgress(ic.progress, stderr); err != nil {
		return nil, usagef(c, "%v", err)
	}
	if p.cpFile == "" && ic.path != "-" {
		p.cpFile = ic.path + ".checkpoint"
	}
	if p.resume && p.cpFile == "" {
		return nil, usagef(c, "--resume needs a checkpoint: give --checkpoint FILE")
	}
	if p.resume && p.skip > 0 {
		return nil, usagef(c, "--resume and --skip exclude each other")
	}
	return p, nil
}

// loadResume reads the checkpoint resumed from, with --resume, and skips
// what it says is done. Without --resume, a checkpoint left by an import
// that stopped is refused rather than overwritten: the run would start
// over and lose where the other stopped.
func (p *importPlan) loadResume(c *command, table string) error {
	if !p.resume {
		if p.cpFile == "" {
			return nil
		}
		b, err := os.ReadFile(p.cpFile)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		var cp importCheckpoint
		if err == nil && json.Unmarshal(b, &cp) == nil && cp.Table != "" {
			return usagef(c, "%s holds where an import of %s into %s stopped (every record through line %d done, %d written, at %s): "+
				"run again with --resume to go on from there, or remove it to start over", p.cpFile, cp.File, cp.Table, cp.Line, cp.Written, cp.Updated)
		}
		return usagef(c, "%s, the checkpoint of this import, is there (an import that stopped left it): run again with --resume to go on from it, or remove it to start over", p.cpFile)
	}
	b, err := os.ReadFile(p.cpFile)
	if err != nil {
		return fmt.Errorf("--resume: %w", err)
	}
	if err := json.Unmarshal(b, &p.cp); err != nil {
		return fmt.Errorf("--resume: checkpoint %s: %v", p.cpFile, err)
	}
	if err := p.cp.check(); err != nil {
		return fmt.Errorf("--resume: checkpoint %s: %v", p.cpFile, err)
	}
	if p.cp.Table != table {
		return fmt.Errorf("--resume: the checkpoint %s is of an import into %s, not %s", p.cpFile, p.cp.Table, table)
	}
	p.skip = p.cp.Line
	return nil
}

// openImportInput opens the file imported (standard input for -), and
// returns its size (-1: unknown) and how to close it.
func openImportInput(e *env, path string) (io.Reader, int64, func(), error) {
	if path == "-" {
		return e.stdin, -1, func() {}, nil
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	var size int64 = -1
	if fi, err := file.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return file, size, func() { file.Close() }, nil
}

// openImportTable opens the store and checks the table, creating it with
// --create.
func openImportTable(ctx context.Context, e *env, c *command, ic *importConfig) (store, error) {
	st, err := ic.src.open(ctx, e, c, openOpts{write: true, noSync: true})
	if err != nil {
		return nil, err
	}
	if ic.create {
		err = st.CreateTable(ctx, ic.table)
		if errors.Is(err, localtable.ErrTableExists) || isCode(err, "TableAlreadyExists") {
			err = nil
		}
	} else if err = st.CheckTable(ctx, ic.table); errors.Is(err, localtable.ErrTableNotFound) {
		err = fmt.Errorf("%w: add --create to create it", err)
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// importRun is one import under way.
type importRun struct {
	e        *env
	ic       *importConfig
	p        *importPlan
	st       store
	im       importer
	skipped  int
	start    time.Time
	lastSave time.Time
}

// run imports in, of size bytes (-1: unknown), and reports.
func (r *importRun) run(ctx context.Context, in io.Reader, size int64) error {
	var bar *progressbar.ProgressBar
	if r.p.showBar {
		// The bar shows the bytes of the records done (written,
		// failed or skipped), not of those read: the reader runs
		// ahead of the writes.
		bar = newByteBar(r.e.stderr, size, "importing")
	}
	rd, err := tableio.NewReader(in, r.p.format)
	if err != nil {
		return fmt.Errorf("%s: %w", r.ic.path, err)
	}
	im := &r.im
	im.mode = r.p.mode
	for _, f := range r.p.cp.Failures {
		im.failures = append(im.failures, failure{f.Line, errors.New(f.Error)})
	}
	r.start = time.Now()
	if r.skipped, err = rd.SkipThrough(r.p.skip); err != nil {
		return err
	}
	im.st, im.table, im.open, im.maxErrors = r.st, r.ic.table, map[string]*pendingBatch{}, r.ic.maxErrors
	im.lastLine = r.p.skip
	im.written = 0
	im.prev = r.p.cp
	im.doneBytes = rd.Offset() // the lines skipped
	if bar != nil {
		im.onProgress = func() {
			bar.Describe(fmt.Sprintf("importing: %d rows written", im.written))
			bar.Set64(im.doneBytes)
		}
		im.onProgress()
	}
	r.lastSave = time.Now()
	// Records are read and decoded in a goroutine of their own, a chunk
	// at a time, while this one writes: decoding and committing overlap.
	recs, stopReading := readRecords(ctx, rd)
	runErr := r.write(ctx, recs)
	stopReading()
	if cause := context.Cause(ctx); runErr != nil && ctx.Err() != nil && cause != nil {
		runErr = cause // an interruption, rather than the write it cut short
	}
	if errors.Is(runErr, errTooManyFailures) {
		// Commit what was read before the stop: the checkpoint then
		// covers every line read.
		if err := im.flushAll(ctx); err != nil && !errors.Is(err, errTooManyFailures) {
			runErr = err
		}
	}
	if bar != nil {
		if runErr == nil {
			bar.Finish() // full, then cleared
		} else {
			bar.Clear() // as far as it went: the report says
			bar.Exit()
		}
	}
	elapsed := time.Since(r.start)
	return r.finish(runErr, elapsed)
}

// write writes the records of recs, saving the checkpoint every second.
func (r *importRun) write(ctx context.Context, recs <-chan []record) error {
	im, cp := &r.im, &r.p.cp
	for chunk := range recs {
		for _, rc := range chunk {
			var re *tableio.RecordError
			line := rc.line
			if errors.As(rc.err, &re) {
				line = re.Line
			}
			if rc.err == nil || re != nil {
				if line > cp.Line && cp.done(line) { // done in the run resumed from
					r.skipped++
					im.lastLine = max(im.lastLine, line)
					im.progress(rc.size)
					continue
				}
			}
			switch {
			case re != nil:
				im.lastLine = max(im.lastLine, re.Line)
				if err := im.fail(re.Line, rc.size, re.Err); err != nil {
					return err
				}
				continue
			case rc.err != nil:
				return rc.err
			}
			if err := im.add(ctx, rc.line, rc.size, rc.e); err != nil {
				return err
			}
		}
		if time.Since(r.lastSave) > time.Second {
			r.lastSave = time.Now()
			if err := r.save(); err != nil {
				return err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return im.flushAll(ctx)
}

// save writes the checkpoint, after making the data it covers durable.
func (r *importRun) save() error {
	if r.p.cpFile == "" {
		return nil
	}
	if s, ok := r.st.(*localStore); ok {
		if err := s.sync(); err != nil { // the checkpoint never runs ahead of the data
			return err
		}
	}
	next := r.im.checkpoint()
	next.File, next.Table, next.Written, next.Updated = r.ic.path, r.ic.table, r.p.cp.Written+r.im.written, time.Now().UTC().Format(time.RFC3339)
	for _, f := range r.im.failures {
		next.Failures = append(next.Failures, checkpointFailure{f.line, errMessage(f.err)})
	}
	slices.SortStableFunc(next.Failures, func(a, b checkpointFailure) int { return a.Line - b.Line })
	b, _ := json.MarshalIndent(next, "", "  ")
	return writeFileAtomic(r.p.cpFile, append(b, '\n'))
}

// finish syncs the data, removes or saves the checkpoint, prints the
// report, and returns the import's error.
func (r *importRun) finish(runErr error, elapsed time.Duration) error {
	im, cpFile := &r.im, r.p.cpFile
	if runErr == nil {
		if s, ok := r.st.(*localStore); ok {
			runErr = s.sync()
		}
	}
	if runErr == nil && cpFile != "" {
		os.Remove(cpFile)
	} else if cpFile != "" {
		if err := r.save(); err != nil && runErr != nil {
			runErr = fmt.Errorf("%w (and saving the checkpoint: %v)", runErr, err)
		}
	}
	// Failures are met partition by partition: list them by line.
	slices.SortStableFunc(im.failures, func(a, b failure) int { return a.line - b.line })
	stopped := runErr != nil && !errors.Is(runErr, errTooManyFailures)
	if stopped {
		// The error that ended the import heads the report.
		fmt.Fprintf(r.e.stdout, "import stopped: %s\n", errMessage(runErr))
	}
	rate := float64(im.written) / max(elapsed.Seconds(), 1e-9)
	fmt.Fprintf(r.e.stdout, "imported %s into %s: %d written, %d skipped, %d failed in %s (%.0f rows/s)\n",
		r.ic.path, r.ic.table, im.written, r.skipped, len(im.failures), took(elapsed), rate)
	for _, fl := range im.failures {
		fmt.Fprintf(r.e.stdout, "  line %d: %s\n", fl.line, errMessage(fl.err))
	}
	switch {
	case errors.Is(runErr, errTooManyFailures):
		return fmt.Errorf("stopped after %s (--max-errors); run again with --resume to go on", plural(len(im.failures), "failed record", "failed records"))
	case stopped && cpFile != "":
		return fmt.Errorf("import stopped: %w; %s says which records are done (all through line %d): run again with --resume to go on from there", runErr, cpFile, im.checkpoint().Line)
	case stopped:
		return fmt.Errorf("import stopped: %w", runErr)
	case len(im.failures) > 0:
		return fmt.Errorf("%s failed", plural(len(im.failures), "record", "records"))
	}
	return nil
}

// isCode reports whether err is a *localtable.Error with code.
func isCode(err error, code string) bool {
	var le *localtable.Error
	return errors.As(err, &le) && string(le.Code) == code
}

func runExport(ctx context.Context, e *env, c *command, args []string) error {
	xc, err := parseExport(e, c, args)
	if err != nil {
		return err
	}
	p, err := planExport(c, xc, e.stderr)
	if err != nil {
		return err
	}
	st, err := xc.src.open(ctx, e, c, openOpts{readOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	out := e.stdout
	var tmp *atomicFile
	if xc.path != "-" {
		if tmp, err = createAtomic(xc.path); err != nil {
			return err
		}
		defer tmp.Abort()
		out = tmp
	}
	start := time.Now()
	n, err := exportTo(ctx, e, st, xc, p, out)
	if err != nil {
		return err
	}
	if tmp != nil {
		if err := tmp.Commit(); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "exported %s of %s to %s in %s\n", plural(n, "entity", "entities"), xc.table, xc.path, took(time.Since(start)))
	}
	return nil
}

// exportConfig is what export's arguments say.
type exportConfig struct {
	src                           sourceFlags
	table, path                   string // path "-": standard output
	format, filter, sel, progress string
	timestamps                    bool
}

// parseExport reads export's arguments.
func parseExport(e *env, c *command, args []string) (*exportConfig, error) {
	fs := c.flagSet()
	var xc exportConfig
	xc.src.register(fs)
	fs.StringVar(&xc.format, "format", "", "jsonl or csv (default: by the file's extension; jsonl for standard output)")
	fs.StringVar(&xc.filter, "filter", "", "an OData $filter selecting the entities")
	fs.StringVar(&xc.sel, "select", "", "comma-separated properties to export ($select)")
	fs.BoolVar(&xc.timestamps, "timestamps", false, "add each entity's Timestamp (and odata.etag in JSONL)")
	fs.StringVar(&xc.progress, "progress", "auto", "progress bar: auto (on a terminal), always or never")
	pos, err := c.parse(e, fs, args, 1, 2)
	if err != nil {
		return nil, err
	}
	xc.table, xc.path = pos[0], "-"
	if len(pos) == 2 {
		xc.path = pos[1]
	}
	return &xc, nil
}

// exportPlan is how an export goes.
type exportPlan struct {
	format  tableio.Format
	showBar bool
	pred    *filter.Filter // the parsed --filter; nil: all
	q       queryReq
}

// planExport checks export's flags and decides how it goes.
func planExport(c *command, xc *exportConfig, stderr io.Writer) (*exportPlan, error) {
	p := &exportPlan{q: queryReq{Filter: xc.filter, Select: splitList(xc.sel)}}
	var err error
	if p.format, err = fileFormat(xc.path, xc.format); err != nil {
		return nil, usagef(c, "%v", err)
	}
	if p.showBar, err = wantProgress(xc.progress, stderr); err != nil {
		return nil, usagef(c, "%v", err)
	}
	if xc.filter != "" {
		if p.pred, err = filter.Parse(xc.filter); err != nil {
			return nil, fmt.Errorf("--filter: %w", err)
		}
	}
	return p, nil
}

// exportTo writes the table's entities to out, and returns how many.
//
// Its progress bar counts the entities written out of their number when
// it is known: a data directory counts them first; a CSV's first pass
// (its columns) counts them over a server, which gives no count. A JSONL
// export from a server counts without a total. A CSV's first pass has a
// bar of its own, so that something shows from the start.
func exportTo(ctx context.Context, e *env, st store, xc *exportConfig, p *exportPlan, out io.Writer) (int, error) {
	var total int64 = -1
	if l, ok := st.(*localStore); ok && p.showBar {
		var pred localtable.Predicate
		if p.pred != nil {
			pred = p.pred
		}
		if n, err := l.acct.Table(xc.table).Count(ctx, pred); err == nil {
			total = int64(n)
		}
	}
	var bar *progressbar.ProgressBar
	passes := ""
	if p.showBar && p.format == tableio.CSV {
		passes = " (2/2)"
		bar = newRowBar(e.stderr, total, "reading the columns (1/2)")
	}
	w, seen, err := newExportWriter(ctx, st, xc, p, out, bar)
	if bar != nil {
		bar.Clear()
		bar.Exit()
		if err == nil && total < 0 {
			total = int64(seen) // the entities now, as the second pass reads them
		}
	}
	if err != nil {
		return 0, err
	}
	if p.showBar {
		bar = newRowBar(e.stderr, total, "exporting"+passes)
	}
	n := 0
	err = scan(ctx, st, xc.table, p.q, 0, func(e *localtable.Entity) error {
		n++
		if bar != nil {
			bar.Add(1)
		}
		return w.Write(e)
	})
	if bar != nil {
		if err == nil && (total < 0 || int64(n) == total) {
			bar.Finish()
		} else {
			bar.Clear()
			bar.Exit()
		}
	}
	if err == nil {
		err = w.Flush()
	}
	return n, err
}

// newExportWriter returns the writer of the export's format. A CSV's
// columns are those of the entities exported, read first, counted (seen)
// and on bar (nil: none).
func newExportWriter(ctx context.Context, st store, xc *exportConfig, p *exportPlan, out io.Writer, bar *progressbar.ProgressBar) (w tableio.Writer, seen int, err error) {
	if p.format != tableio.CSV {
		return tableio.NewJSONLWriter(out, &entityjson.Options{System: xc.timestamps}), 0, nil
	}
	var cols tableio.ColumnSet
	if err := scan(ctx, st, xc.table, p.q, 0, func(e *localtable.Entity) error {
		cols.Add(e)
		seen++
		if bar != nil {
			bar.Add(1)
		}
		return nil
	}); err != nil {
		return nil, seen, err
	}
	list := cols.Columns()
	if xc.timestamps {
		list = append(list[:2], append([]tableio.Column{{Name: localtable.TimestampName, Kind: localtable.KindDateTime}}, list[2:]...)...)
	}
	cw, err := tableio.NewCSVWriter(out, list)
	if err != nil {
		return nil, seen, err
	}
	known := map[tableio.Column]bool{}
	for _, col := range list {
		known[col] = true
	}
	return &checkedCSV{CSVWriter: cw, known: known}, seen, nil
}

// checkedCSV refuses an entity with a property the header has no column
// for (the table changed between the two reads).
type checkedCSV struct {
	*tableio.CSVWriter
	known map[tableio.Column]bool
}

func (c *checkedCSV) Write(e *localtable.Entity) error {
	for name, v := range e.Properties {
		if !v.IsNull() && !c.known[tableio.Column{Name: name, Kind: v.Kind()}] {
			return fmt.Errorf("entity (%q, %q) has a property %s of type %s that the CSV header lacks: the table changed during the export; export again", e.PartitionKey, e.RowKey, name, v.Kind())
		}
	}
	return c.CSVWriter.Write(e)
}

// errMessage is an error without the library's "localtable: " prefix.
func errMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "localtable: ")
}

// record is one record read by readRecords: an entity, or why not.
type record struct {
	line int
	e    localtable.Entity
	err  error
	size int64 // its bytes of input (and of the blank lines before it)
}

// readRecords reads rd in a goroutine, in chunks, until its end, an error
// (sent as a last record) or stop, which waits for the goroutine.
func readRecords(ctx context.Context, rd tableio.Reader) (<-chan []record, func()) {
	out := make(chan []record, 4)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer close(out)
		const chunkSize = 256
		chunk := make([]record, 0, chunkSize)
		last := rd.Offset()
		send := func() bool {
			select {
			case out <- chunk:
				chunk = make([]record, 0, chunkSize)
				return true
			case <-done:
				return false
			case <-ctx.Done():
				return false
			}
		}
		for {
			line, e, err := rd.Next()
			off := rd.Offset()
			size := off - last
			last = off
			var re *tableio.RecordError
			switch {
			case err == io.EOF:
				if len(chunk) > 0 {
					send()
				}
				return
			case err != nil && !errors.As(err, &re):
				chunk = append(chunk, record{line: line, err: err, size: size})
				send()
				return
			}
			chunk = append(chunk, record{line: line, e: e, err: err, size: size})
			if len(chunk) == chunkSize && !send() {
				return
			}
		}
	}()
	var once sync.Once
	return out, func() {
		once.Do(func() { close(done) })
		for range out { // unblock a pending send
		}
		<-finished
	}
}

// fileFormat is the format of an import or export: the one --format
// names, or else the one path's extension says.
func fileFormat(path, name string) (tableio.Format, error) {
	if name == "" {
		return tableio.FormatOf(path), nil
	}
	return tableio.ParseFormat(name)
}
