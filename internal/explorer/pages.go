package explorer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/edmfmt"
	"github.com/localtable/localtable/internal/tableio"
	"github.com/localtable/localtable/server"
)

// page is what every template reads.
type page struct {
	Prefix     string
	NoAuth     bool
	CSRF       string
	Title      string
	Error      string
	Notice     string
	Accounts   []string
	Selected   string // the login form's account
	OneClick   string // the account the login opens without a key (see oneClick)
	Account    string
	AccountURL string

	Tables []tableRow // the tables page

	Table       string // the table and entity pages
	Query       queryView
	Rows        []entityRow
	Columns     []string // shown
	AllCols     []string // for the column chooser
	Plan        string
	Hints       []string // comparisons that cannot hold for their types (filter.TypeCheck)
	Stats       localtable.QueryStats
	Indexes     []localtable.IndexInfo // the table's declared indexes
	Expiry      string                 // the table's expiry property; "": none
	NextURL     string
	PrevURL     string
	FirstURL    string
	ExportJSONL string
	ExportCSV   string
	NewURL      string

	Entity   entityForm // the entity page
	Conflict bool

	FeedOff   string // the changes page: why the account has no feed
	From      uint64 // the revision the changes page watches after
	StreamURL string // the changes page's stream
}

type tableRow struct {
	Name  string
	Count int
	URL   string
	Err   string
}

type queryView struct {
	Filter string
	Select string
	Top    int
}

type entityRow struct {
	PK, RK    string
	Timestamp string
	Cells     []string
	URL       string
}

// entityForm is an entity as the editor shows and submits it.
type entityForm struct {
	New       bool
	PK, RK    string
	ETag      string
	Timestamp string
	Props     []propForm
	URL       string // where the form posts
}

type propForm struct {
	Name, Type, Value string
}

// edmKinds are the types the editor offers.
var edmKinds = []string{"Edm.String", "Edm.Int32", "Edm.Int64", "Edm.Double", "Edm.Boolean", "Edm.DateTime", "Edm.Guid", "Edm.Binary"}

func valueText(v localtable.Value) string { return entityjson.FormatValueText(v) }

// shortText cuts a value for a table cell.
func shortText(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		return string([]rune(s)[:59]) + "…"
	}
	return s
}

// serveAccount serves the pages of one account: sub is what follows
// a/{account}/.
func (x *Explorer) serveAccount(w http.ResponseWriter, r *http.Request, acct *Account, sub, token string) {
	base := &page{CSRF: token, Account: acct.Name, Accounts: x.names}
	switch {
	case sub == "":
		x.serveTables(w, r, acct, base)
		return
	case sub == "tables" && r.Method == http.MethodPost:
		name := strings.TrimSpace(r.PostForm.Get("name"))
		if _, err := acct.Data.CreateTable(r.Context(), name); err != nil {
			base.Error = "Creating table " + strconv.Quote(name) + ": " + errText(err)
			x.serveTablesStatus(w, r, acct, base, statusOf(err))
			return
		}
		http.Redirect(w, r, x.tableURL(acct.Name, name, nil), http.StatusSeeOther)
		return
	}
	// t/{table}[/…]
	rest, ok := strings.CutPrefix(sub, "t/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	table, action, _ := strings.Cut(rest, "/")
	table, err := url.PathUnescape(table)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	t, err := acct.Data.GetTable(r.Context(), table)
	if err != nil {
		base.Error = errText(err)
		x.render(w, r, statusOf(err), "error", base)
		return
	}
	base.Table = t.Name()
	switch {
	case action == "" && r.Method == http.MethodGet:
		x.serveBrowse(w, r, acct, t, base)
	case action == "delete" && r.Method == http.MethodPost:
		if err := acct.Data.DeleteTable(r.Context(), t.Name()); err != nil {
			base.Error = errText(err)
			x.render(w, r, statusOf(err), "error", base)
			return
		}
		http.Redirect(w, r, x.accountURL(acct.Name)+"?deleted="+url.QueryEscape(t.Name()), http.StatusSeeOther)
	case action == "e":
		x.serveEntity(w, r, acct, t, base)
	case action == "export" && r.Method == http.MethodGet:
		x.serveExport(w, r, t)
	case action == "changes" && r.Method == http.MethodGet:
		x.serveChangesPage(w, r, acct, t, base)
	case action == "changes/stream" && r.Method == http.MethodGet:
		x.serveChangesStream(w, r, acct, t)
	default:
		http.NotFound(w, r)
	}
}

func (x *Explorer) serveTables(w http.ResponseWriter, r *http.Request, acct *Account, p *page) {
	if d := r.URL.Query().Get("deleted"); d != "" {
		p.Notice = "Deleted table " + d + "."
	}
	x.serveTablesStatus(w, r, acct, p, http.StatusOK)
}

func (x *Explorer) serveTablesStatus(w http.ResponseWriter, r *http.Request, acct *Account, p *page, status int) {
	ctx := r.Context()
	p.Title = acct.Name
	for info, err := range acct.Data.Tables(ctx, nil) {
		if err != nil {
			p.Error = errText(err)
			break
		}
		row := tableRow{Name: info.Name, URL: x.tableURL(acct.Name, info.Name, nil)}
		n, err := acct.Data.Table(info.Name).Count(ctx, nil)
		if err != nil {
			row.Err = errText(err)
		}
		row.Count = n
		p.Tables = append(p.Tables, row)
	}
	x.render(w, r, status, "tables", p)
}

// tableURL is a table's browse page with query q.
func (x *Explorer) tableURL(account, table string, q url.Values) string {
	u := x.accountURL(account) + "t/" + url.PathEscape(table)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// queryOf reads the browse page's query from the URL.
func queryOf(r *http.Request) (queryView, localtable.QueryOptions, *filter.Filter, error) {
	q := r.URL.Query()
	v := queryView{Filter: q.Get("filter"), Select: q.Get("select"), Top: 50}
	if t, err := strconv.Atoi(q.Get("top")); err == nil && t >= 1 && t <= localtable.MaxPageSize {
		v.Top = t
	}
	opts := localtable.QueryOptions{PageSize: v.Top, Select: splitList(v.Select)}
	if q.Get("npk") != "" || q.Get("nrk") != "" {
		opts.Continuation = localtable.Continuation{NextPartitionKey: q.Get("npk"), NextRowKey: q.Get("nrk")}
	}
	var f *filter.Filter
	if strings.TrimSpace(v.Filter) != "" {
		var err error
		if f, err = filter.Parse(v.Filter); err != nil {
			return v, opts, nil, err
		}
		opts.Filter = f
	}
	return v, opts, f, nil
}

// pagesBefore reads the stack of the continuation tokens of the pages
// before the browse page's (its ppk and prk, paired in order).
func pagesBefore(q url.Values) []localtable.Continuation {
	pks, rks := q["ppk"], q["prk"]
	back := make([]localtable.Continuation, min(len(pks), len(rks)))
	for i := range back {
		back[i] = localtable.Continuation{NextPartitionKey: pks[i], NextRowKey: rks[i]}
	}
	return back
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (x *Explorer) serveBrowse(w http.ResponseWriter, r *http.Request, acct *Account, t *localtable.Table, p *page) {
	p.Title = t.Name()
	if d := r.URL.Query().Get("deleted"); d != "" {
		p.Notice = "Deleted entity " + d + "."
	}
	view, opts, f, err := queryOf(r)
	p.Query = view
	p.NewURL = x.entityURL(acct.Name, t.Name(), "", "", true)
	if err != nil {
		p.Error = "The filter is not valid: " + errText(err)
		x.render(w, r, http.StatusBadRequest, "table", p)
		return
	}
	// The planner's plan of this page: it names the index the page reads
	// (the filter's own plan would say "full scan" next to it).
	plan, err := t.Explain(r.Context(), &opts)
	if err != nil {
		p.Error = errText(err)
		x.render(w, r, statusOf(err), "table", p)
		return
	}
	p.Plan = plan
	var check *filter.TypeCheck
	if f != nil {
		check = f.TypeCheck()
		opts.Filter = check
	}
	res, err := t.Query(r.Context(), &opts)
	if err != nil {
		p.Error = errText(err)
		x.render(w, r, statusOf(err), "table", p)
		return
	}
	p.Stats = res.Stats
	if p.Indexes, err = t.Indexes(r.Context()); err == nil {
		p.Expiry, err = t.Expiry(r.Context())
	}
	if err != nil {
		p.Error = errText(err)
		x.render(w, r, statusOf(err), "table", p)
		return
	}
	if check != nil {
		// A query read through an index may note no entity: the hints
		// then come from a probe of the table.
		if err := check.Probe(r.Context(), t, 0); err != nil {
			p.Error = errText(err)
			x.render(w, r, statusOf(err), "table", p)
			return
		}
		p.Hints = check.Hints()
	}
	seen := map[string]bool{}
	for _, e := range res.Entities {
		for name := range e.Properties {
			seen[name] = true
		}
	}
	for _, s := range opts.Select {
		seen[s] = true
	}
	for name := range seen {
		p.AllCols = append(p.AllCols, name)
	}
	slices.Sort(p.AllCols)
	p.Columns = p.AllCols
	if opts.Select != nil {
		p.Columns = opts.Select
	}
	for _, e := range res.Entities {
		row := entityRow{PK: e.PartitionKey, RK: e.RowKey, Timestamp: edmfmt.DateTime7(e.Timestamp), URL: x.entityURL(acct.Name, t.Name(), e.PartitionKey, e.RowKey, false)}
		for _, c := range p.Columns {
			v, ok := e.Properties[c]
			if !ok {
				row.Cells = append(row.Cells, "")
				continue
			}
			row.Cells = append(row.Cells, shortText(valueText(v)))
		}
		p.Rows = append(p.Rows, row)
	}
	q := url.Values{}
	if view.Filter != "" {
		q.Set("filter", view.Filter)
	}
	if view.Select != "" {
		q.Set("select", view.Select)
	}
	if view.Top != 50 {
		q.Set("top", strconv.Itoa(view.Top))
	}
	// The pages before this one are a stack of continuation tokens in
	// the URL (ppk and prk, the first page's empty): Next pushes this
	// page's, Previous pops.
	back := pagesBefore(r.URL.Query())
	at := func(c localtable.Continuation, stack []localtable.Continuation) string {
		n := url.Values{}
		for k, v := range q {
			n[k] = v
		}
		for _, b := range stack {
			n.Add("ppk", b.NextPartitionKey)
			n.Add("prk", b.NextRowKey)
		}
		if !c.IsZero() {
			n.Set("npk", c.NextPartitionKey)
			n.Set("nrk", c.NextRowKey)
		}
		return x.tableURL(acct.Name, t.Name(), n)
	}
	if !opts.Continuation.IsZero() {
		p.FirstURL = at(localtable.Continuation{}, nil)
		if len(back) > 0 {
			p.PrevURL = at(back[len(back)-1], back[:len(back)-1])
		}
	}
	if !res.Continuation.IsZero() {
		p.NextURL = at(res.Continuation, append(back[:len(back):len(back)], opts.Continuation))
	}
	eq := url.Values{}
	for _, k := range []string{"filter", "select"} {
		if v := q.Get(k); v != "" {
			eq.Set(k, v)
		}
	}
	eq.Set("format", "jsonl")
	p.ExportJSONL = x.tableURL(acct.Name, t.Name(), nil) + "/export?" + eq.Encode()
	eq.Set("format", "csv")
	p.ExportCSV = x.tableURL(acct.Name, t.Name(), nil) + "/export?" + eq.Encode()
	x.render(w, r, http.StatusOK, "table", p)
}

// entityURL is an entity's editor, or the insert form.
func (x *Explorer) entityURL(account, table, pk, rk string, isNew bool) string {
	q := url.Values{}
	if isNew {
		q.Set("new", "1")
	} else {
		q.Set("pk", pk)
		q.Set("rk", rk)
	}
	return x.tableURL(account, table, nil) + "/e?" + q.Encode()
}

// formOf shows an entity in the editor.
func formOf(e *localtable.Entity) entityForm {
	f := entityForm{PK: e.PartitionKey, RK: e.RowKey, ETag: string(e.ETag)}
	if !e.Timestamp.IsZero() {
		f.Timestamp = edmfmt.DateTime7(e.Timestamp)
	}
	names := make([]string, 0, len(e.Properties))
	for n := range e.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		v := e.Properties[n]
		f.Props = append(f.Props, propForm{Name: n, Type: v.Kind().String(), Value: valueText(v)})
	}
	return f
}

// readForm reads the editor's submission: the form as submitted, and the
// entity it describes or why it does not.
func readForm(r *http.Request) (entityForm, localtable.Entity, error) {
	pf := r.PostForm
	f := entityForm{New: pf.Get("new") == "1", PK: pf.Get("pk"), RK: pf.Get("rk"), ETag: pf.Get("etag")}
	names, types, values := pf["pname"], pf["ptype"], pf["pvalue"]
	e := localtable.Entity{PartitionKey: f.PK, RowKey: f.RK}
	var firstErr error
	for i := range names {
		name := strings.TrimSpace(names[i])
		typ, val := "Edm.String", ""
		if i < len(types) {
			typ = types[i]
		}
		if i < len(values) {
			val = values[i]
		}
		if name == "" && val == "" {
			continue
		}
		f.Props = append(f.Props, propForm{Name: name, Type: typ, Value: val})
		if firstErr != nil {
			continue
		}
		kind, ok := localtable.ParseKind(typ)
		if !ok || kind == localtable.KindNull {
			firstErr = fmt.Errorf("property %q: %q is not an Edm type", name, typ)
			continue
		}
		if name == "" {
			firstErr = fmt.Errorf("a property with the value %q has no name", val)
			continue
		}
		if _, dup := e.Properties[name]; dup {
			firstErr = fmt.Errorf("property %q appears twice", name)
			continue
		}
		v, err := entityjson.ParseValueText(name, val, kind)
		if err != nil {
			firstErr = err
			continue
		}
		e.Set(name, v)
	}
	return f, e, firstErr
}

func (x *Explorer) serveEntity(w http.ResponseWriter, r *http.Request, acct *Account, t *localtable.Table, p *page) {
	ctx := r.Context()
	self := x.tableURL(acct.Name, t.Name(), nil) + "/e"
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		if q.Get("new") == "1" {
			p.Title = "New entity in " + t.Name()
			p.Entity = entityForm{New: true, URL: self, Props: []propForm{{Type: "Edm.String"}}}
			x.render(w, r, http.StatusOK, "entity", p)
			return
		}
		e, err := t.Get(ctx, q.Get("pk"), q.Get("rk"), nil)
		if err != nil {
			p.Error = errText(err)
			x.render(w, r, statusOf(err), "error", p)
			return
		}
		p.Title = t.Name() + " (" + e.PartitionKey + ", " + e.RowKey + ")"
		p.Entity = formOf(&e)
		p.Entity.URL = self
		p.Notice = q.Get("notice")
		x.render(w, r, http.StatusOK, "entity", p)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	form, e, err := readForm(r)
	form.URL = self
	p.Entity = form
	p.Title = t.Name() + " (" + form.PK + ", " + form.RK + ")"
	fail := func(err error) {
		p.Error = errText(err)
		if errors.Is(err, localtable.ErrConditionNotMet) {
			p.Conflict = true
			cur, gerr := t.Get(ctx, form.PK, form.RK, nil)
			switch {
			case gerr == nil:
				p.Error = fmt.Sprintf("Conflict: this entity was changed after you loaded it. You loaded ETag %s; it now has ETag %s (written %s). Nothing was saved. Reload it to see the current version, or save again to overwrite it.",
					form.ETag, cur.ETag, edmfmt.DateTime7(cur.Timestamp))
				p.Entity.ETag = string(cur.ETag)
				p.Entity.Timestamp = edmfmt.DateTime7(cur.Timestamp)
			case errors.Is(gerr, localtable.ErrEntityNotFound):
				p.Error = "Conflict: this entity was deleted after you loaded it. Nothing was saved."
				p.Entity.New, p.Entity.ETag = true, ""
			}
		}
		x.render(w, r, statusOf(err), "entity", p)
	}
	switch r.PostForm.Get("action") {
	case "delete":
		if err := t.Delete(ctx, form.PK, form.RK, &localtable.DeleteOptions{IfMatch: localtable.ETag(form.ETag)}); err != nil {
			fail(err)
			return
		}
		http.Redirect(w, r, x.tableURL(acct.Name, t.Name(), url.Values{"deleted": {form.PK + " / " + form.RK}}), http.StatusSeeOther)
		return
	case "save":
	default:
		http.Error(w, "unknown action", http.StatusBadRequest)
		return
	}
	if err != nil {
		if le := (*localtable.Error)(nil); !errors.As(err, &le) { // a value's error has its code already
			err = &localtable.Error{Code: localtable.CodeInvalidInput, Message: err.Error()}
		}
		fail(err)
		return
	}
	var tag localtable.ETag
	if form.New {
		tag, err = t.Insert(ctx, e)
	} else {
		tag, err = t.Update(ctx, e, &localtable.UpdateOptions{IfMatch: localtable.ETag(form.ETag)})
	}
	if err != nil {
		fail(err)
		return
	}
	u := x.entityURL(acct.Name, t.Name(), e.PartitionKey, e.RowKey, false) + "&notice=" + url.QueryEscape("Saved: ETag "+string(tag))
	http.Redirect(w, r, u, http.StatusSeeOther)
}

func (x *Explorer) serveExport(w http.ResponseWriter, r *http.Request, t *localtable.Table) {
	_, opts, _, err := queryOf(r)
	if err != nil {
		http.Error(w, "The filter is not valid: "+errText(err), http.StatusBadRequest)
		return
	}
	opts.PageSize, opts.Continuation = 0, localtable.Continuation{}
	format := tableio.JSONL
	if r.URL.Query().Get("format") == "csv" {
		format = tableio.CSV
	}
	ctx := r.Context()
	var tw tableio.Writer
	if format == tableio.CSV {
		var cols tableio.ColumnSet
		for e, err := range t.QueryAll(ctx, &opts) {
			if err != nil {
				http.Error(w, errText(err), statusOf(err))
				return
			}
			cols.Add(&e)
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+t.Name()+`.csv"`)
		cw, err := tableio.NewCSVWriter(w, cols.Columns())
		if err != nil {
			return
		}
		tw = cw
	} else {
		w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+t.Name()+`.jsonl"`)
		tw = tableio.NewJSONLWriter(w, nil)
	}
	for e, err := range t.QueryAll(ctx, &opts) {
		if err != nil {
			x.log.Error("explorer: export", "table", t.Name(), "err", err)
			return // the download ends short; the status is sent
		}
		if err := tw.Write(&e); err != nil {
			return
		}
	}
	tw.Flush()
}

// errText is an error as the pages show it.
func errText(err error) string {
	var le *localtable.Error
	if errors.As(err, &le) {
		return string(le.Code) + ": " + le.Message
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	return err.Error()
}

// statusOf is the HTTP status of an error.
func statusOf(err error) int {
	var le *localtable.Error
	if errors.As(err, &le) {
		return server.HTTPStatus(le.Code)
	}
	return http.StatusInternalServerError
}
