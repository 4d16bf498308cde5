package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/edmfmt"
	"github.com/localtable/localtable/internal/tableio"
)

// The commands on tables and single entities.

const sourceHelp = `
The data is a data directory (--location DIR, with --account NAME for
DIR/NAME; offline, no server may be running on it) or a running server
(--endpoint URL, --connection-string, or LOCALTABLE_CONNECTION_STRING or
AZURE_STORAGE_CONNECTION_STRING in the environment).`

func init() {
	register(&command{
		name: "tables", args: "[list | create NAME... | delete NAME...] [flags]",
		summary: "list, create or delete tables",
		details: "Without a subcommand, lists the tables, one name a line.\n" + sourceHelp,
		examples: `
localtable tables --location ./data
localtable tables create Orders Customers --location ./data
localtable tables delete Orders --endpoint http://127.0.0.1:10002/devstoreaccount1
LOCALTABLE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=…" localtable tables list`,
		run: runTables,
	})
	register(&command{
		name: "query", args: "TABLE [flags]",
		summary: "query a table's entities: a readable table, JSON or JSON lines",
		details: `Prints the entities a $filter selects, in (PartitionKey, RowKey) order,
paging through the whole result (or the first --top). -o table prints
columns (long values cut), -o json a JSON array and -o jsonl one entity a
line, in the service's JSON format with its type annotations, odata.etag and
Timestamp. --explain prints the planner's key ranges and residual filter,
then the entities scanned and returned and the index the query read, if
any (on a data directory, or on a localtable server, from its
X-Localtable-Scanned and X-Localtable-Index headers), and (on a data
directory) a hint for each comparison whose literal is of another type
than the property's in the entities scanned ("Total eq '12'" for a Double
Total matches nothing, as in the service).` + "\n" + sourceHelp,
		examples: `
localtable query Orders --location ./data
localtable query Orders --filter "PartitionKey eq 'smith' and Total gt 100.0" --select Total,Status --location ./data
localtable query Orders --filter "RowKey ge '2024'" --top 10 -o jsonl --endpoint http://127.0.0.1:10002/devstoreaccount1
localtable query Orders --filter "Status eq 'open'" --explain --location ./data`,
		run: runQuery,
	})
	register(&command{
		name: "get", args: "TABLE PARTITIONKEY ROWKEY [flags]",
		summary: "print one entity with its types, ETag and Timestamp",
		details: sourceHelp,
		examples: `
localtable get Orders smith 0001 --location ./data
localtable get Orders smith 0001 -o json --endpoint http://127.0.0.1:10002/devstoreaccount1`,
		run: runGet,
	})
	register(&command{
		name: "put", args: "TABLE PARTITIONKEY ROWKEY [NAME[@Edm.Type]=VALUE]... [flags] | TABLE --json JSON|FILE|-",
		summary: "insert, replace or merge one entity",
		details: `Writes one entity: by default inserts it or replaces the existing one
(InsertOrReplace); --merge merges into it (InsertOrMerge); --insert fails
if it exists; --if-match ETAG updates only the entity with that ETag ("*":
any existing one). Properties are NAME=VALUE (an Edm.String) or
NAME@Edm.Type=VALUE, such as Age@Edm.Int32=42, with values as in CSV files
(RFC 3339 DateTimes, base64 Binary); or the whole entity is --json, in the
service's JSON format (annotated with "Name@odata.type"), inline, from a
file, or "-" for standard input. Prints the new ETag.` + "\n" + sourceHelp,
		examples: `
localtable put Orders smith 0001 Status=open Total@Edm.Double=12.5 Items@Edm.Int32=3 --location ./data
localtable put Orders smith 0001 Status=shipped --merge --if-match "W/\"datetime'2024-05-01T10%3A00%3A00.0000000Z'\"" --location ./data
localtable put Orders --json '{"PartitionKey":"smith","RowKey":"0002","Big@odata.type":"Edm.Int64","Big":"9007199254740993"}' --location ./data
echo '{"PartitionKey":"a","RowKey":"b"}' | localtable put Orders --json - --endpoint http://127.0.0.1:10002/devstoreaccount1`,
		run: runPut,
	})
	register(&command{
		name: "delete", args: "TABLE PARTITIONKEY ROWKEY [flags]",
		summary: "delete one entity",
		details: `--if-match ETAG deletes it only if it has that ETag: the one get prints,
such as W/"datetime'2024-05-01T10%3A00%3A00.0000000Z'", quoted for the
shell as a whole (it holds both kinds of quotes), as in the example.` + "\n" + sourceHelp,
		examples: `
localtable delete Orders smith 0001 --location ./data
localtable delete Orders smith 0001 --if-match "W/\"datetime'2024-05-01T10%3A00%3A00.0000000Z'\"" --endpoint http://127.0.0.1:10002/devstoreaccount1`,
		run: runDelete,
	})
}

func runTables(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	var src sourceFlags
	src.register(fs)
	pos, err := c.parse(e, fs, args, 0, -1)
	if err != nil {
		return err
	}
	sub := "list"
	if len(pos) > 0 {
		sub, pos = pos[0], pos[1:]
	}
	switch sub {
	case "list":
		if len(pos) > 0 {
			return usagef(c, "list takes no arguments")
		}
	case "create", "delete":
		if len(pos) == 0 {
			return usagef(c, "%s needs table names", sub)
		}
	default:
		return usagef(c, "unknown subcommand %q: list, create or delete", sub)
	}
	st, err := src.open(ctx, e, c, openOpts{write: sub == "create", readOnly: sub == "list"})
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "list":
		names, err := st.ListTables(ctx)
		if err != nil {
			return err
		}
		for _, n := range names {
			fmt.Fprintln(e.stdout, n)
		}
	case "create":
		for _, n := range pos {
			if err := st.CreateTable(ctx, n); err != nil {
				return fmt.Errorf("creating %s: %w", n, err)
			}
			fmt.Fprintf(e.stdout, "created %s\n", n)
		}
	case "delete":
		for _, n := range pos {
			if err := st.DeleteTable(ctx, n); err != nil {
				return fmt.Errorf("deleting %s: %w", n, err)
			}
			fmt.Fprintf(e.stdout, "deleted %s\n", n)
		}
	}
	return nil
}

// outputFlag registers -o, one of values (the first is the default): its
// help names them, and the command line is refused with any other.
func outputFlag(fs *flag.FlagSet, values ...string) *string {
	o := &choiceValue{value: values[0], allowed: values}
	fs.Var(o, "o", "the output `format`: "+orList(values))
	return &o.value
}

// choiceValue is a flag that takes one of a list of values.
type choiceValue struct {
	value   string
	allowed []string
}

func (c *choiceValue) String() string {
	if c == nil {
		return ""
	}
	return c.value
}

func (c *choiceValue) Set(s string) error {
	if !slices.Contains(c.allowed, s) {
		return fmt.Errorf("want %s", orList(c.allowed))
	}
	c.value = s
	return nil
}

// tableHint adds to a TableNotFound error of a command on table how to
// create the table (import says its own --create instead).
func tableHint(err error, table string) error {
	if errors.Is(err, localtable.ErrTableNotFound) {
		return fmt.Errorf("%w: create it with 'localtable tables create %s'", err, table)
	}
	return err
}

// orList is "a", "a or b", "a, b or c".
func orList(v []string) string {
	if len(v) < 2 {
		return strings.Join(v, "")
	}
	return strings.Join(v[:len(v)-1], ", ") + " or " + v[len(v)-1]
}

// splitList reads a comma-separated list; "" is nil.
func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runQuery(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	var src sourceFlags
	src.register(fs)
	filterText := fs.String("filter", "", "an OData $filter, such as \"PartitionKey eq 'a' and Age gt 30\"")
	sel := fs.String("select", "", "comma-separated properties to return ($select)")
	top := fs.Int("top", 0, "print at most `N` entities (0: all)")
	explain := fs.Bool("explain", false, "print the query plan and the entities scanned and returned")
	out := outputFlag(fs, "table", "json", "jsonl")
	pos, err := c.parse(e, fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *top < 0 {
		return usagef(c, "--top %d: want 0 (all) or more", *top)
	}
	var f *filter.Filter
	if *filterText != "" {
		if f, err = filter.Parse(*filterText); err != nil {
			return fmt.Errorf("--filter: %w", err)
		}
	}
	st, err := src.open(ctx, e, c, openOpts{readOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	q := queryReq{Filter: *filterText, Select: splitList(*sel)}
	if *top > 0 {
		q.Top = min(localtable.MaxPageSize, *top)
	}
	printPlan := func(plan string) {
		fmt.Fprintln(e.stdout, "plan: "+strings.ReplaceAll(plan, "\n", "\n      "))
	}
	// remotePlan: a server does not tell its plan before the query, only
	// the index its first page read (planHeaders): its plan is printed
	// after the first page is read, before its entities.
	remotePlan := false
	if *explain {
		// The planner's plan names the index the first page reads (the
		// filter's own plan knows of no index: "full scan").
		if x, ok := st.(explainer); ok {
			plan, err := x.Explain(ctx, pos[0], q)
			if err != nil {
				return tableHint(err, pos[0])
			}
			printPlan(plan)
		} else {
			remotePlan = true
		}
	}
	if *explain && f != nil {
		q.Check = f.TypeCheck()
	}
	var stats localtable.QueryStats
	haveStats := false
	pages := 0
	var p printer
	switch *out {
	case "json":
		p = &jsonPrinter{w: e.stdout}
	case "jsonl":
		p = &jsonlPrinter{w: tableio.NewJSONLWriter(e.stdout, &entityjson.Options{System: true})}
	default:
		p = &tablePrinter{w: e.stdout, sel: q.Select}
	}
	n := 0
	for {
		if *top > 0 {
			q.Top = min(localtable.MaxPageSize, *top-n)
		}
		page, err := st.Query(ctx, pos[0], q)
		if err != nil {
			return tableHint(err, pos[0])
		}
		pages++
		if remotePlan {
			remotePlan = false
			switch {
			case page.Stats != nil && page.Stats.Index != "":
				printPlan("index: read through index " + page.Stats.Index + " (the server names the index it read, not why)\nfilter: checked on each entity fetched: " + f.String())
			case page.Stats != nil:
				printPlan("no index (the server read none, and does not say why)\n" + f.Explain())
			default:
				printPlan("the filter's own (the server does not tell its plan, nor the index it reads)\n" + f.Explain())
			}
		}
		if page.Stats != nil {
			haveStats = true
			stats.Scanned += page.Stats.Scanned
			stats.Returned += page.Stats.Returned
			stats.Ranges = max(stats.Ranges, page.Stats.Ranges)
			stats.FullScan = stats.FullScan || page.Stats.FullScan
			if page.Stats.Index != "" {
				stats.Index = page.Stats.Index
			}
		}
		for i := range page.Entities {
			if err := p.add(&page.Entities[i]); err != nil {
				return err
			}
		}
		n += len(page.Entities)
		if page.Next.IsZero() || (*top > 0 && n >= *top) {
			break
		}
		q.Cont = page.Next
	}
	if err := p.end(); err != nil {
		return err
	}
	if *explain {
		if haveStats {
			fmt.Fprintf(e.stdout, "scanned %d, returned %d, in %d page(s)\n", stats.Scanned, stats.Returned, pages)
			if stats.Index != "" {
				fmt.Fprintf(e.stdout, "read through index %s\n", stats.Index)
			}
		} else {
			fmt.Fprintf(e.stdout, "returned %d, in %d page(s) (the server does not report the entities it scanned, nor the index it read: it is not localtable)\n", n, pages)
		}
		if q.Check != nil {
			for _, h := range q.Check.Hints() {
				fmt.Fprintln(e.stdout, "hint: "+h)
			}
		}
	}
	return nil
}

// printer prints a query's entities.
type printer interface {
	add(e *localtable.Entity) error
	end() error
}

type jsonlPrinter struct{ w *tableio.JSONLWriter }

func (p *jsonlPrinter) add(e *localtable.Entity) error { return p.w.Write(e) }
func (p *jsonlPrinter) end() error                     { return p.w.Flush() }

type jsonPrinter struct {
	w   io.Writer
	n   int
	buf []byte
}

func (p *jsonPrinter) add(e *localtable.Entity) error {
	p.buf = p.buf[:0]
	if p.n == 0 {
		p.buf = append(p.buf, "[\n  "...)
	} else {
		p.buf = append(p.buf, ",\n  "...)
	}
	p.n++
	p.buf = entityjson.Append(p.buf, e, &entityjson.Options{System: true})
	_, err := p.w.Write(p.buf)
	return err
}

func (p *jsonPrinter) end() error {
	end := "\n]\n"
	if p.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(p.w, end)
	return err
}

// tablePrinter prints columns, a block of up to 1000 rows at a time (the
// columns of a block are those its entities have).
type tablePrinter struct {
	w     io.Writer
	sel   []string
	rows  []localtable.Entity
	total int
}

const maxCell = 40

func (p *tablePrinter) add(e *localtable.Entity) error {
	p.rows = append(p.rows, *e)
	if len(p.rows) == localtable.MaxPageSize {
		return p.flush()
	}
	return nil
}

func (p *tablePrinter) flush() error {
	if len(p.rows) == 0 {
		return nil
	}
	cols := p.sel
	if cols == nil {
		seen := map[string]bool{}
		for i := range p.rows {
			for name := range p.rows[i].Properties {
				if !seen[name] {
					seen[name] = true
					cols = append(cols, name)
				}
			}
		}
		slices.Sort(cols)
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "PartitionKey\tRowKey\tTimestamp")
	for _, c := range cols {
		fmt.Fprint(tw, "\t"+c+columnKinds(p.rows, c))
	}
	fmt.Fprintln(tw)
	for i := range p.rows {
		r := &p.rows[i]
		fmt.Fprintf(tw, "%s\t%s\t%s", cell(r.PartitionKey), cell(r.RowKey), edmfmt.DateTime7(r.Timestamp))
		for _, c := range cols {
			fmt.Fprint(tw, "\t"+cell(entityjson.FormatValueText(r.Properties[c])))
		}
		fmt.Fprintln(tw)
	}
	p.total += len(p.rows)
	p.rows = p.rows[:0]
	return tw.Flush()
}

func (p *tablePrinter) end() error {
	if err := p.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(p.w, "(%s)\n", plural(p.total, "entity", "entities"))
	return err
}

// columnKinds names the Edm types of column c's values in its header, as
// " (Int64)" or " (Double, Int32)", so that 402 the Int32, the Int64 and
// the Double are told apart; nothing for a column of strings.
func columnKinds(rows []localtable.Entity, c string) string {
	var kinds []string
	for i := range rows {
		v, ok := rows[i].Properties[c]
		if !ok || v.IsNull() {
			continue
		}
		if k := v.Kind().String(); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 || len(kinds) == 1 && kinds[0] == localtable.KindString.String() {
		return ""
	}
	slices.Sort(kinds)
	return " (" + strings.Join(kinds, ", ") + ")"
}

// cell makes a value fit a column: one line, at most maxCell characters.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > maxCell {
		s = string([]rune(s)[:maxCell-1]) + "…"
	}
	if s == "" {
		return "-"
	}
	return s
}

func runGet(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	var src sourceFlags
	src.register(fs)
	out := outputFlag(fs, "text", "json")
	pos, err := c.parse(e, fs, args, 3, 3)
	if err != nil {
		return err
	}
	st, err := src.open(ctx, e, c, openOpts{readOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	ent, err := st.Get(ctx, pos[0], pos[1], pos[2])
	if err != nil {
		return tableHint(err, pos[0])
	}
	if *out == "json" {
		b := entityjson.Append(nil, &ent, &entityjson.Options{System: true})
		_, err := fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "PartitionKey\t\t%s\nRowKey\t\t%s\nTimestamp\t\t%s\nETag\t\t%s\n", ent.PartitionKey, ent.RowKey, edmfmt.DateTime7(ent.Timestamp), ent.ETag)
	names := make([]string, 0, len(ent.Properties))
	for n := range ent.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		v := ent.Properties[n]
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n, v.Kind(), strings.ReplaceAll(entityjson.FormatValueText(v), "\n", `\n`))
	}
	return tw.Flush()
}

func runPut(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	var src sourceFlags
	src.register(fs)
	jsonArg := fs.String("json", "", "the entity in the service's JSON format: inline, a file name, or - for standard input")
	insert := fs.Bool("insert", false, "insert only: fail if the entity exists")
	merge := fs.Bool("merge", false, "merge into the existing entity instead of replacing it")
	ifMatch := fs.String("if-match", "", "update only the entity with this `ETAG` (* for any existing entity)")
	pos, err := c.parse(e, fs, args, 1, -1)
	if err != nil {
		return err
	}
	var ent localtable.Entity
	if *jsonArg != "" {
		if len(pos) != 1 {
			return usagef(c, "with --json, give only the table")
		}
		data := []byte(*jsonArg)
		switch {
		case *jsonArg == "-":
			data, err = io.ReadAll(e.stdin)
		case !strings.HasPrefix(strings.TrimSpace(*jsonArg), "{"):
			data, err = os.ReadFile(*jsonArg)
		}
		if err != nil {
			return err
		}
		if ent, err = entityjson.Decode(data, false); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	} else {
		if len(pos) < 3 {
			return usagef(c, "give TABLE PARTITIONKEY ROWKEY and properties, or TABLE --json")
		}
		ent = localtable.Entity{PartitionKey: pos[1], RowKey: pos[2]}
		for _, kv := range pos[3:] {
			name, val, ok := strings.Cut(kv, "=")
			if !ok {
				return usagef(c, "property %q: want NAME=VALUE or NAME@Edm.Type=VALUE", kv)
			}
			col, err := tableio.ParseColumn(name)
			if err != nil {
				return usagef(c, "property %q: %v", kv, err)
			}
			v, err := entityjson.ParseValueText(col.Name, val, col.Kind)
			if err != nil {
				return fmt.Errorf("property %s: %w", col.Name, err)
			}
			ent.Set(col.Name, v)
		}
	}
	act := localtable.Action{Entity: ent, Type: localtable.ActionUpsertReplace}
	switch {
	case *insert && (*merge || *ifMatch != ""):
		return usagef(c, "--insert excludes --merge and --if-match")
	case *insert:
		act.Type = localtable.ActionInsert
	case *ifMatch != "" && *merge:
		act.Type, act.IfMatch = localtable.ActionUpdateMerge, localtable.ETag(*ifMatch)
	case *ifMatch != "":
		act.Type, act.IfMatch = localtable.ActionUpdateReplace, localtable.ETag(*ifMatch)
	case *merge:
		act.Type = localtable.ActionUpsertMerge
	}
	st, err := src.open(ctx, e, c, openOpts{write: true})
	if err != nil {
		return err
	}
	defer st.Close()
	tag, err := st.Write(ctx, pos[0], act)
	if err != nil {
		return tableHint(err, pos[0])
	}
	fmt.Fprintln(e.stdout, tag)
	return nil
}

func runDelete(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	var src sourceFlags
	src.register(fs)
	ifMatch := fs.String("if-match", "", "delete only if the entity has this `ETAG`")
	pos, err := c.parse(e, fs, args, 3, 3)
	if err != nil {
		return err
	}
	st, err := src.open(ctx, e, c, openOpts{write: true})
	if err != nil {
		return err
	}
	defer st.Close()
	act := localtable.Action{Type: localtable.ActionDelete, Entity: localtable.Entity{PartitionKey: pos[1], RowKey: pos[2]}, IfMatch: localtable.ETag(*ifMatch)}
	if _, err := st.Write(ctx, pos[0], act); err != nil {
		return tableHint(err, pos[0])
	}
	fmt.Fprintf(e.stdout, "deleted %s (%s, %s)\n", pos[0], pos[1], pos[2])
	return nil
}

// plural is "1 entity" or "n entities".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// took rounds a duration for a summary: to the millisecond, or to the
// microsecond below one.
func took(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
