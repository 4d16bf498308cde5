package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// The index command: a table's declared secondary indexes (index.go).

func init() {
	register(&command{
		name: "index", args: "list TABLE | create TABLE NAME PROPERTY... | drop TABLE NAME | repair TABLE NAME [flags]",
		summary: "list, create, drop or repair a table's secondary indexes (a localtable extension)",
		details: `An index keeps a table's entities in the order of up to 4 of their
properties, so that a query comparing the leading one reads only the
entities it selects instead of the whole table (query --explain names the
index a query uses, on a data directory or a server). list prints each index's name, properties and state:
ready, or building while the entities a table already held are indexed
(create waits for that); and whether it is covering, its entries holding
their entities' records (on the memory engine; on pebble only with the
library's Options.IndexRecords). create of an index the table already declares
on the same properties does nothing, or resumes its build if it stopped;
create of another name on exactly those properties is refused, naming the
index declared. Index names are case-insensitive (drop Orders bytotal
drops ByTotal), and keep the case they were declared with.
repair rebuilds an index from the table's entities, as create builds
one, while writes go on; queries do not read it until it is ready again
(check names an index that needs it: one with an entry missing, extra
or stale). Indexes are a localtable extension: the Azure Table service
has none, and a query gives the same entities with or without one.

On a running server (--endpoint, --connection-string or the environment) it
uses the server's index operations (GET, PUT, DELETE and, to repair,
POST /ACCOUNT/TABLE?comp=indexes, a localtable extension), signed with the account key: a SAS
or a bearer token does not grant them. serve --index declares indexes when
a server starts.` + "\n" + sourceHelp,
		examples: `
localtable index create Orders ByTotal Total --location ./data
localtable index create Orders ByStatus Status Total --location ./data
localtable index list Orders --location ./data
localtable index drop Orders ByTotal --location ./data
localtable index repair Orders ByStatus --location ./data
localtable index list Orders --endpoint http://127.0.0.1:10002/devstoreaccount1`,
		run: runIndex,
	})
}

func runIndex(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	var src sourceFlags
	src.register(fs)
	pos, err := c.parse(e, fs, args, 2, -1)
	if err != nil {
		return err
	}
	sub, table, rest := pos[0], pos[1], pos[2:]
	switch {
	case sub == "list" && len(rest) != 0:
		return usagef(c, "list takes a table name only")
	case sub == "create" && len(rest) < 2:
		return usagef(c, "create needs a table, an index name and its properties")
	case (sub == "drop" || sub == "repair") && len(rest) != 1:
		return usagef(c, "%s needs a table and an index name", sub)
	case sub != "list" && sub != "create" && sub != "drop" && sub != "repair":
		return usagef(c, "unknown subcommand %q: list, create, drop or repair", sub)
	}
	st, err := src.open(ctx, e, c, openOpts{readOnly: sub == "list"})
	if err != nil {
		return err
	}
	defer st.Close()
	ix, ok := st.(indexStore)
	if !ok {
		return fmt.Errorf("%s has no indexes", st.Describe())
	}
	switch sub {
	case "list":
		idx, err := ix.Indexes(ctx, table)
		if err != nil {
			return err
		}
		printIndexes(e, idx)
	case "create":
		if err := ix.CreateIndex(ctx, table, rest[0], rest[1:]); err != nil {
			if errors.Is(err, localtable.ErrIndexExists) || isCode(err, string(localtable.CodeInvalidInput)) {
				return fmt.Errorf("index %s of %s: %w", rest[0], table, err)
			}
			return err
		}
		fmt.Fprintf(e.stdout, "created index %s on %s (%s)\n", rest[0], table, strings.Join(rest[1:], ", "))
	case "drop":
		if err := ix.DropIndex(ctx, table, rest[0]); err != nil {
			return fmt.Errorf("index %s of %s: %w", rest[0], table, err)
		}
		fmt.Fprintf(e.stdout, "dropped index %s of %s\n", rest[0], table)
	case "repair":
		if err := ix.RebuildIndex(ctx, table, rest[0]); err != nil {
			return fmt.Errorf("index %s of %s: %w", rest[0], table, err)
		}
		fmt.Fprintf(e.stdout, "rebuilt index %s of %s\n", rest[0], table)
	}
	return nil
}

// indexStore is a store whose tables declare indexes: a data directory,
// or a running server through its comp=indexes operations.
type indexStore interface {
	Indexes(ctx context.Context, table string) ([]localtable.IndexInfo, error)
	CreateIndex(ctx context.Context, table, name string, props []string) error
	DropIndex(ctx context.Context, table, name string) error
	RebuildIndex(ctx context.Context, table, name string) error
}

func (l *localStore) Indexes(ctx context.Context, table string) ([]localtable.IndexInfo, error) {
	return l.acct.Table(table).Indexes(ctx)
}

func (l *localStore) CreateIndex(ctx context.Context, table, name string, props []string) error {
	return l.acct.Table(table).CreateIndex(ctx, name, props...)
}

func (l *localStore) DropIndex(ctx context.Context, table, name string) error {
	return l.acct.Table(table).DropIndex(ctx, name)
}

func (l *localStore) RebuildIndex(ctx context.Context, table, name string) error {
	return l.acct.Table(table).RebuildIndex(ctx, name)
}

// indexRequest sends one of the server's index operations on table,
// signed with the account key, and decodes a 200 answer's body into out.
func (r *remoteStore) indexRequest(ctx context.Context, method, table string, q url.Values, body any, out any) error {
	q.Set("comp", "indexes")
	return r.extensionRequest(ctx, method, table, q, body, out)
}

func (r *remoteStore) Indexes(ctx context.Context, table string) ([]localtable.IndexInfo, error) {
	var got struct{ Value []server.IndexDefinition }
	if err := r.indexRequest(ctx, http.MethodGet, table, url.Values{}, nil, &got); err != nil {
		return nil, err
	}
	out := make([]localtable.IndexInfo, len(got.Value))
	for i, d := range got.Value {
		out[i] = localtable.IndexInfo{Name: d.Name, Properties: d.Properties, Ready: d.Ready, Covering: d.Covering}
	}
	return out, nil
}

func (r *remoteStore) CreateIndex(ctx context.Context, table, name string, props []string) error {
	return r.indexRequest(ctx, http.MethodPut, table, url.Values{}, server.IndexDefinition{Name: name, Properties: props}, nil)
}

func (r *remoteStore) DropIndex(ctx context.Context, table, name string) error {
	return r.indexRequest(ctx, http.MethodDelete, table, url.Values{"name": {name}}, nil, nil)
}

func (r *remoteStore) RebuildIndex(ctx context.Context, table, name string) error {
	return r.indexRequest(ctx, http.MethodPost, table, url.Values{"name": {name}}, nil, nil)
}

// printIndexes prints a table's indexes, one a line: name, properties,
// state, and whether its entries hold their entities' records (covering).
func printIndexes(e *env, idx []localtable.IndexInfo) {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROPERTIES\tSTATE\tCOVERING")
	for _, ix := range idx {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ix.Name, strings.Join(ix.Properties, ","), indexState(ix), yesNo(ix.Covering))
	}
	tw.Flush()
}

// yesNo is "yes" or "no".
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// indexState is "ready" or "building".
func indexState(ix localtable.IndexInfo) string {
	if ix.Ready {
		return "ready"
	}
	return "building"
}

// indexSpec is one serve --index Table:Prop[,Prop…]: an index the server
// declares on each account it serves at start.
type indexSpec struct {
	table string
	props []string
}

// name is the index's name: its properties joined by '_'.
func (s indexSpec) name() string { return strings.Join(s.props, "_") }

// indexFlags collects repeated --index flags.
type indexFlags []indexSpec

// String is the flag's default text: none.
func (f *indexFlags) String() string { return "" }

// Set adds one Table:Prop[,Prop…].
func (f *indexFlags) Set(v string) error {
	table, list, ok := strings.Cut(v, ":")
	props := splitList(list)
	if !ok || table == "" || len(props) == 0 {
		return errors.New("want Table:Property[,Property…]")
	}
	if err := localtable.ValidateTableName(table); err != nil {
		return err
	}
	// Checked here, before serve creates the table it names.
	s := indexSpec{table: table, props: props}
	if err := localtable.ValidateIndex(s.name(), props...); err != nil {
		return err
	}
	*f = append(*f, s)
	return nil
}

// declareIndexes declares the indexes of specs on acct at serve's start:
// it creates a table that does not exist, and an index its table lacks
// (waiting for its build), does nothing for an index the table already
// declares and has built on the same properties, under any name, resumes
// the build of one not ready (stopped by a crash, or a repair that
// stopped), and fails naming the conflict for a name the table uses for
// other properties.
func declareIndexes(ctx context.Context, acct *localtable.Account, account string, specs []indexSpec, log *slog.Logger) error {
	for _, s := range specs {
		flag := s.table + ":" + strings.Join(s.props, ",")
		t := acct.Table(s.table)
		have, err := t.Indexes(ctx)
		if errors.Is(err, localtable.ErrTableNotFound) {
			if _, err = acct.CreateTable(ctx, s.table); err != nil && !errors.Is(err, localtable.ErrTableExists) {
				return fmt.Errorf("--index %s: account %s: creating the table: %w", flag, account, err)
			}
			log.Info("created table for --index", "account", account, "table", s.table)
			have, err = t.Indexes(ctx)
		}
		if err != nil {
			return fmt.Errorf("--index %s: account %s: %w", flag, account, err)
		}
		name, msg := s.name(), "declared index"
		for _, ix := range have {
			if slices.Equal(ix.Properties, s.props) {
				name, msg = ix.Name, "resumed the build of index"
				if ix.Ready {
					name = ""
				}
				break
			}
			if strings.EqualFold(ix.Name, s.name()) {
				return fmt.Errorf("--index %s: account %s: table %s already has an index %s on %s", flag, account, s.table, ix.Name, strings.Join(ix.Properties, ","))
			}
		}
		if name == "" {
			continue // declared and built
		}
		// CreateIndex of an index declared on the same properties resumes
		// its build (a server stopped during it, or a repair).
		if err := t.CreateIndex(ctx, name, s.props...); err != nil {
			return fmt.Errorf("--index %s: account %s: %w", flag, account, err)
		}
		log.Info(msg, "account", account, "table", s.table, "index", name)
	}
	return nil
}
