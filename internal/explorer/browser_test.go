package explorer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/browsertest"
	"github.com/localtable/localtable/server"
)

// artifactDir is where screenshots go: $LOCALTABLE_ARTIFACTS if set, or
// a directory of the test's.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("LOCALTABLE_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// stepper returns a function that runs a step's actions in b, each step
// within 30s, and fails t if one fails, with the page's JavaScript
// exceptions and a screenshot (name-failure.png in artifactDir).
func stepper(t *testing.T, b *browsertest.Browser, name string) func(step string, actions ...chromedp.Action) {
	art := artifactDir(t)
	return func(step string, actions ...chromedp.Action) {
		t.Helper()
		tctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Run(tctx, actions...); err != nil {
			var shot []byte
			chromedp.Run(b.Ctx, chromedp.FullScreenshot(&shot, 100))
			p := filepath.Join(art, name+"-failure.png")
			os.WriteFile(p, shot, 0o644)
			t.Fatalf("%s: %v (JavaScript exceptions %q; screenshot in %s)", step, err, b.Exceptions(), p)
		}
	}
}

// TestBrowserExplorer clicks through the explorer in headless Chromium:
// log in, create a table, insert two entities with typed properties,
// filter (reading the plan and the counts), edit one, meet an ETag
// conflict, delete an entity and the table. It saves screenshots.
func TestBrowserExplorer(t *testing.T) {
	b := browsertest.Start(t, "the explorer's browser test", chromedp.WindowSize(1280, 860))
	hs, acct := newServer(t, false, nil)
	ctx := context.Background()
	art := artifactDir(t)

	do := stepper(t, b, "explorer")
	text := func(sel string) string {
		t.Helper()
		var s string
		do("reading "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
		return strings.TrimSpace(s)
	}
	shot := func(name string) {
		t.Helper()
		var b []byte
		do("screenshot", chromedp.FullScreenshot(&b, 100))
		p := filepath.Join(art, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
	// fillProp fills the i-th property row (from 1).
	fillProp := func(i int, name, typ, value string) chromedp.Action {
		row := "#props tbody tr:nth-child(" + string(rune('0'+i)) + ") "
		return chromedp.Tasks{
			chromedp.SetValue(row+".pname", name, chromedp.ByQuery),
			chromedp.SetValue(row+".ptype", typ, chromedp.ByQuery),
			chromedp.SetValue(row+".pvalue", value, chromedp.ByQuery),
		}
	}

	// The start lists the accounts; opening one asks for its key.
	do("login", chromedp.Navigate(hs.URL+"/"), chromedp.Click(`a[href$="/a/devstoreaccount1/"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#login-key", chromedp.ByQuery),
		chromedp.SendKeys("#login-key", server.DevAccountKey, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery), chromedp.WaitVisible("#create-table", chromedp.ByQuery))
	if got := text("#tables tbody"); !strings.Contains(got, "No tables yet") {
		t.Fatalf("tables page: %q", got)
	}

	// Create a table: its (empty) browse page opens.
	do("create table", chromedp.SendKeys("#new-table-name", "Orders", chromedp.ByQuery),
		chromedp.Click("#create-table-submit", chromedp.ByQuery), chromedp.WaitVisible("#query", chromedp.ByQuery))
	if got := text("#entities tbody"); !strings.Contains(got, "No entities") {
		t.Fatalf("new table: %q", got)
	}

	// Insert two entities with typed properties.
	insert := func(pk, rk, status, total string) {
		t.Helper()
		do("insert "+pk, chromedp.Click("#new-entity", chromedp.ByQuery), chromedp.WaitVisible("#entity", chromedp.ByQuery),
			chromedp.SendKeys("#pk", pk, chromedp.ByQuery), chromedp.SendKeys("#rk", rk, chromedp.ByQuery),
			fillProp(1, "Status", "Edm.String", status),
			chromedp.Click("#add-prop", chromedp.ByQuery), fillProp(2, "Total", "Edm.Double", total),
			chromedp.Click("#add-prop", chromedp.ByQuery), fillProp(3, "Items", "Edm.Int64", "3"),
			chromedp.Click("#save", chromedp.ByQuery), chromedp.WaitVisible("#notice", chromedp.ByQuery))
		if got := text("#notice"); !strings.HasPrefix(got, "Saved: ETag W/") {
			t.Fatalf("after inserting %s: %q", pk, got)
		}
		do("back to the table", chromedp.Click("#crumb-table", chromedp.ByQuery), chromedp.WaitVisible("#query", chromedp.ByQuery))
	}
	insert("smith", "0001", "open", "12.5")
	insert("jones", "0001", "closed", "7")
	tb := acct.Table("Orders")
	e, err := tb.Get(ctx, "jones", "0001", nil)
	if err != nil || e.Properties["Total"].Kind() != localtable.KindDouble || e.Properties["Items"].Kind() != localtable.KindInt64 || e.Properties["Items"].Int64() != 3 {
		t.Fatalf("inserted through the page: %v %+v", err, e.Properties)
	}
	if got := text("#entities tbody"); !strings.Contains(got, "jones") || !strings.Contains(got, "smith") {
		t.Fatalf("browse: %q", got)
	}

	// A filter on a property scans everything and returns one; the plan
	// says so.
	filterBy := func(f string) {
		t.Helper()
		// Mark the page, so that the wait is for the next one.
		do("filter "+f, chromedp.Evaluate(`document.body.dataset.stale = "1"`, nil),
			chromedp.SetValue("#filter", f, chromedp.ByQuery), chromedp.Click("#run-query", chromedp.ByQuery),
			chromedp.WaitVisible("body:not([data-stale]) #plan", chromedp.ByQuery))
		var got string
		do("filter shown", chromedp.Value("#filter", &got, chromedp.ByQuery))
		if got != f {
			t.Fatalf("the filter box shows %q after querying %q", got, f)
		}
	}
	filterBy("Status eq 'open'")
	if plan, s, r := text("#plan"), text("#scanned"), text("#returned"); !strings.Contains(plan, "full scan") || s != "2" || r != "1" {
		t.Fatalf("property filter: plan %q, scanned %s, returned %s", plan, s, r)
	}
	if got := text("#entities tbody"); !strings.Contains(got, "smith") || strings.Contains(got, "jones") {
		t.Fatalf("property filter rows: %q", got)
	}
	// A PartitionKey filter reads one partition.
	filterBy("PartitionKey eq 'smith'")
	if plan, s := text("#plan"), text("#scanned"); !strings.Contains(plan, "1 key range") || s != "1" {
		t.Fatalf("key filter: plan %q, scanned %s", plan, s)
	}
	// More entities, written directly, for a page worth a screenshot.
	for i, name := range []string{"adams", "baker", "clark", "davis", "evans", "fisher"} {
		g, _ := localtable.ParseGUID("6f1c2a9e-4b7d-4c1a-9e3f-0a1b2c3d4e5" + string(rune('0'+i)))
		if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: name, RowKey: "000" + string(rune('1'+i)), Properties: localtable.Properties{
			"Status": localtable.StringValue([]string{"open", "shipped", "closed"}[i%3]), "Total": localtable.DoubleValue(float64(10*i) + 0.5),
			"Items": localtable.Int64Value(int64(i + 1)), "Placed": localtable.DateTimeValue(time.Date(2024, 5, 1+i, 9, 30, 0, 0, time.UTC)),
			"Id": localtable.GUIDValue(g), "Gift": localtable.BoolValue(i%2 == 0),
		}}); err != nil {
			t.Fatal(err)
		}
	}
	filterBy("Total gt 10.0")
	if s, r := text("#scanned"), text("#returned"); s != "8" || r != "6" {
		t.Fatalf("Total gt 10.0: scanned %s, returned %s", s, r)
	}
	shot("explorer-browse.png")

	// The column chooser: keep Status and Total.
	do("choose columns", chromedp.Click("#columns summary", chromedp.ByQuery), chromedp.Evaluate(`document.body.dataset.stale = "1"`, nil),
		chromedp.Click(`.col-choice[value="Gift"]`, chromedp.ByQuery), chromedp.Click(`.col-choice[value="Id"]`, chromedp.ByQuery),
		chromedp.Click(`.col-choice[value="Items"]`, chromedp.ByQuery), chromedp.Click(`.col-choice[value="Placed"]`, chromedp.ByQuery),
		chromedp.Click("#apply-columns", chromedp.ByQuery), chromedp.WaitVisible("body:not([data-stale]) #entities", chromedp.ByQuery))
	if got := strings.Join(strings.Fields(text("#entities thead")), " "); got != "PartitionKey RowKey Timestamp Status Total" {
		t.Fatalf("after choosing columns: %q", got)
	}
	if got := text("#returned"); got != "6" {
		t.Fatalf("choosing columns kept the filter? returned %s", got)
	}
	filterBy("PartitionKey eq 'smith'")

	// Edit: the entity page shows typed values; change Status and save.
	do("open entity", chromedp.Click(".entity-link", chromedp.ByQuery), chromedp.WaitVisible("#entity", chromedp.ByQuery))
	var typ string
	do("read type", chromedp.Value("#props tbody tr:nth-child(1) .ptype", &typ, chromedp.ByQuery)) // sorted: Items first
	if typ != "Edm.Int64" {
		t.Fatalf("Items shown as %q", typ)
	}
	do("edit", chromedp.SetValue("#props tbody tr:nth-child(2) .pvalue", "shipped", chromedp.ByQuery),
		chromedp.Click("#save", chromedp.ByQuery), chromedp.WaitVisible("#notice", chromedp.ByQuery))
	e, err = tb.Get(ctx, "smith", "0001", nil)
	if err != nil || e.Properties["Status"].String() != "shipped" || e.Properties["Total"].Double() != 12.5 {
		t.Fatalf("after editing: %v %+v", err, e.Properties)
	}

	// A conflict: someone else writes after the page loaded.
	e.Properties["Status"] = localtable.StringValue("returned")
	if _, err := tb.Update(ctx, e, &localtable.UpdateOptions{IfMatch: e.ETag}); err != nil {
		t.Fatal(err)
	}
	do("edit stale", chromedp.SetValue("#props tbody tr:nth-child(2) .pvalue", "lost", chromedp.ByQuery),
		chromedp.Click("#save", chromedp.ByQuery), chromedp.WaitVisible("#error", chromedp.ByQuery))
	if got := text("#error"); !strings.Contains(got, "Conflict: this entity was changed after you loaded it") || !strings.Contains(got, "Nothing was saved") {
		t.Fatalf("conflict message: %q", got)
	}
	if got := text("#save"); got != "Save anyway" {
		t.Fatalf("conflict button: %q", got)
	}
	shot("explorer-conflict.png")
	if cur, _ := tb.Get(ctx, "smith", "0001", nil); cur.Properties["Status"].String() != "returned" {
		t.Fatalf("the stale save wrote: %v", cur.Properties["Status"])
	}

	// Delete the entity (after a fresh load).
	do("reload", chromedp.Reload(), chromedp.WaitVisible("#entity", chromedp.ByQuery))
	do("delete entity", chromedp.Click("#entity details.danger summary", chromedp.ByQuery),
		chromedp.Click("#delete-entity", chromedp.ByQuery), chromedp.WaitVisible("#notice", chromedp.ByQuery))
	if got := text("#notice"); !strings.Contains(got, "Deleted entity smith / 0001") {
		t.Fatalf("after delete: %q", got)
	}
	if _, err := tb.Get(ctx, "smith", "0001", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
		t.Fatalf("deleted entity: %v", err)
	}

	// Delete the table.
	do("delete table", chromedp.Click("details.danger summary", chromedp.ByQuery),
		chromedp.Click("#delete-table", chromedp.ByQuery), chromedp.WaitVisible("#create-table", chromedp.ByQuery))
	if got := text("#notice"); got != "Deleted table Orders." {
		t.Fatalf("after deleting the table: %q", got)
	}
	if _, err := acct.GetTable(ctx, "Orders"); !errors.Is(err, localtable.ErrTableNotFound) {
		t.Fatalf("deleted table: %v", err)
	}
	if exceptions := b.Exceptions(); len(exceptions) > 0 {
		t.Fatalf("JavaScript exceptions: %q", exceptions)
	}
}
