package explorer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/browsertest"
	"github.com/localtable/localtable/internal/explorer"
	"github.com/localtable/localtable/server"
)

// TestBrowserExplorerTraps clicks through what issue 23 found wrong, in
// headless Chromium: the emulator's account opens in one click on
// loopback; the page has a favicon; a wide, long grid scrolls in one box
// whose scrollbar shows in the window; Previous goes back page by page;
// unchecked columns are honoured by Query; a filter comparing a Double
// with a String explains why it matches nothing; counts say "1 entity";
// an editor's error names its code once.
func TestBrowserExplorerTraps(t *testing.T) {
	b := browsertest.Start(t, "the explorer's traps test", chromedp.WindowSize(1280, 860))
	hs, acct := newServer(t, false, nil)
	ctx := context.Background()
	do := stepper(t, b, "explorer-traps")
	text := func(sel string) string {
		t.Helper()
		var s string
		do("reading "+sel, chromedp.TextContent(sel, &s, chromedp.ByQuery))
		return strings.Join(strings.Fields(s), " ")
	}
	heads := func() string {
		t.Helper()
		var s string
		do("reading the header", chromedp.Evaluate(`[...document.querySelectorAll("#entities thead th")].map((th) => th.textContent).join(" ")`, &s))
		return s
	}
	// next runs actions that load a page, and waits for it.
	next := func(step string, actions ...chromedp.Action) {
		t.Helper()
		do(step, append(append([]chromedp.Action{chromedp.Evaluate(`document.body.dataset.stale = "1"`, nil)}, actions...),
			chromedp.WaitVisible("body:not([data-stale]) main", chromedp.ByQuery))...)
	}

	// One click opens the emulator's account from this machine.
	next("login page", chromedp.Navigate(hs.URL+"/-/explorer/login"))
	next("one click", chromedp.Click("#one-click-submit", chromedp.ByQuery))
	do("tables page", chromedp.WaitVisible("#create-table", chromedp.ByQuery))

	// The favicon is served.
	var icon string
	do("favicon", chromedp.Evaluate(`fetch(document.querySelector('link[rel="icon"]').href).then((r) => r.status + " " + r.headers.get("Content-Type"))`, &icon,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if icon != "200 image/svg+xml" {
		t.Fatalf("favicon: %q", icon)
	}

	// A wide table of 60 entities.
	wide, _ := acct.CreateTable(ctx, "Wide")
	for i := range 60 {
		props := localtable.Properties{"Total": localtable.DoubleValue(float64(i) + 0.5)}
		for c := range 12 {
			props[fmt.Sprintf("Column%02d", c)] = localtable.StringValue(strings.Repeat(string(rune('a'+c)), 40))
		}
		if _, err := wide.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i), Properties: props}); err != nil {
			t.Fatal(err)
		}
	}
	one, _ := acct.CreateTable(ctx, "One")
	one.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"})
	next("tables", chromedp.Reload())
	if got := text(`[data-delete-table="One"]`); got != "Delete table One and its 1 entity" {
		t.Errorf("one entity: %q", got)
	}
	if got := text(`[data-delete-table="Wide"]`); got != "Delete table Wide and its 60 entities" {
		t.Errorf("60 entities: %q", got)
	}

	next("wide table", chromedp.Navigate(hs.URL+"/-/explorer/a/devstoreaccount1/t/Wide?top=25"))
	var box struct {
		ScrollW, ClientW, DocW, WinW int
		Height, WinH, Bottom         float64
		HeadLeft, CellLeft           float64
	}
	do("the grid's box", chromedp.Evaluate(`(() => {
		const el = document.querySelector(".scroll");
		el.scrollIntoView({block: "end"});
		el.scrollLeft = 400;
		const r = el.getBoundingClientRect();
		return {ScrollW: el.scrollWidth, ClientW: el.clientWidth, DocW: document.documentElement.scrollWidth, WinW: innerWidth,
			Height: r.height, WinH: innerHeight, Bottom: r.bottom,
			HeadLeft: el.querySelector("thead th:nth-child(5)").getBoundingClientRect().left,
			CellLeft: el.querySelector("tbody tr:nth-child(20) td:nth-child(5)").getBoundingClientRect().left};
	})()`, &box))
	if box.ScrollW <= box.ClientW || box.DocW > box.WinW {
		t.Errorf("the grid does not scroll in its box: %+v", box)
	}
	if box.Height > float64(box.WinH) || box.Bottom > float64(box.WinH)+1 {
		t.Errorf("the grid's box (and its scrollbar) is taller than the window: %+v", box)
	}
	if box.HeadLeft != box.CellLeft {
		t.Errorf("the header and the rows scroll apart: %+v", box)
	}

	// Next, Next, Previous, Previous.
	firstRow := func() string { return text("#entities tbody tr:first-child td:nth-child(2)") }
	if got := firstRow(); got != "000" {
		t.Fatalf("page 1 starts at %q", got)
	}
	next("page 2", chromedp.Click("#next-page", chromedp.ByQuery))
	next("page 3", chromedp.Click("#next-page", chromedp.ByQuery))
	if got := firstRow(); got != "050" {
		t.Fatalf("page 3 starts at %q", got)
	}
	next("back to 2", chromedp.Click("#prev-page", chromedp.ByQuery))
	if got := firstRow(); got != "025" {
		t.Fatalf("Previous from page 3 shows %q, want 025", got)
	}
	next("back to 1", chromedp.Click("#prev-page", chromedp.ByQuery))
	var prevs int
	do("no previous", chromedp.Evaluate(`document.querySelectorAll("#prev-page").length`, &prevs))
	if got := firstRow(); got != "000" || prevs != 0 {
		t.Fatalf("Previous from page 2 shows %q, with %d Previous link(s)", got, prevs)
	}

	// Uncheck columns, then Query: they go, and stay gone on the next query.
	do("open columns", chromedp.Click("#columns summary", chromedp.ByQuery))
	for c := 1; c < 12; c++ {
		do("uncheck", chromedp.Click(fmt.Sprintf(`.col-choice[value="Column%02d"]`, c), chromedp.ByQuery))
	}
	next("query", chromedp.Click("#run-query", chromedp.ByQuery))
	if got := heads(); got != "PartitionKey RowKey Timestamp Column00 Total" {
		t.Fatalf("after unchecking columns and Query: %q", got)
	}
	next("filter", chromedp.SetValue("#filter", "Total gt 10.0", chromedp.ByQuery), chromedp.Click("#run-query", chromedp.ByQuery))
	if got := heads(); got != "PartitionKey RowKey Timestamp Column00 Total" || text("#returned") != "25" {
		t.Fatalf("the next query: %q, returned %s", got, text("#returned"))
	}

	// A String for a Double: nothing, and why.
	next("mistyped filter", chromedp.SetValue("#filter", "Total eq '12.5'", chromedp.ByQuery), chromedp.Click("#run-query", chromedp.ByQuery))
	if got, r := text("#hints"), text("#returned"); r != "0" || got != "Total is Edm.Double in the entities scanned (0.5, for one); the filter compares it with a String ('12.5'), and values of different types never match: write a Double literal, such as 0.5." {
		t.Fatalf("hint: %q (returned %s)", got, r)
	}
	next("right filter", chromedp.SetValue("#filter", "Total eq 12.5", chromedp.ByQuery), chromedp.Click("#run-query", chromedp.ByQuery))
	var hints int
	do("no hint", chromedp.Evaluate(`document.querySelectorAll("#hints").length`, &hints))
	if hints != 0 || text("#returned") != "1" {
		t.Fatalf("a right filter: %d hint lists, returned %s", hints, text("#returned"))
	}
	// The same mistake on an indexed Total: the String finds no entry of
	// the index and the query reads no entity, but the hint is there.
	if err := wide.CreateIndex(ctx, "byTotal", "Total"); err != nil {
		t.Fatal(err)
	}
	next("mistyped filter, indexed", chromedp.SetValue("#filter", "Total eq '12.5'", chromedp.ByQuery), chromedp.Click("#run-query", chromedp.ByQuery))
	if got, r, ix := text("#hints"), text("#returned"), text("#index-used"); r != "0" || ix != "byTotal" || !strings.Contains(got, "write a Double literal, such as 0.5") {
		t.Fatalf("hint through the index: %q (returned %s, through index %q)", got, r, ix)
	}
	if err := wide.DropIndex(ctx, "byTotal"); err != nil {
		t.Fatal(err)
	}

	// A bad Int32 in the editor: its code once.
	next("new entity", chromedp.Navigate(hs.URL+"/-/explorer/a/devstoreaccount1/t/One/e?new=1"))
	next("save", chromedp.SendKeys("#pk", "p", chromedp.ByQuery), chromedp.SendKeys("#rk", "x", chromedp.ByQuery),
		chromedp.SetValue("#props tbody tr:nth-child(1) .pname", "N", chromedp.ByQuery),
		chromedp.SetValue("#props tbody tr:nth-child(1) .ptype", "Edm.Int32", chromedp.ByQuery),
		chromedp.SetValue("#props tbody tr:nth-child(1) .pvalue", "abc", chromedp.ByQuery),
		chromedp.Click("#save", chromedp.ByQuery))
	if got := text("#error"); strings.Count(got, "InvalidInput") != 1 || strings.Contains(got, "localtable:") {
		t.Fatalf("the editor's error: %q", got)
	}
	if ex := b.Exceptions(); len(ex) > 0 {
		t.Fatalf("JavaScript exceptions: %q", ex)
	}
}

// TestOneClickLoginOnlyForTheEmulatorOnLoopback: the login offers (and
// accepts) a login without a key for devstoreaccount1 under the
// well-known key, over loopback, and never otherwise: not from another
// address, not through a proxy, not for another key or account.
func TestOneClickLoginOnlyForTheEmulatorOnLoopback(t *testing.T) {
	a1, _ := localtable.Open(nil)
	t.Cleanup(func() { a1.Close() })
	serve := func(key []byte, remote string, header http.Header) *httptest.Server {
		x := explorer.New(explorer.Options{Accounts: []explorer.Account{
			{Name: server.DevAccountName, Key: key, Data: a1}, {Name: "other", Key: devKey, Data: a1}}})
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if remote != "" {
				r.RemoteAddr = remote
			}
			for k, v := range header {
				r.Header[k] = v
			}
			x.ServeHTTP(w, r)
		}))
		t.Cleanup(hs.Close)
		return hs
	}
	for _, tc := range []struct {
		name   string
		key    []byte
		remote string
		header http.Header
		offer  bool
	}{
		{"loopback", devKey, "", nil, true},
		{"IPv6 loopback", devKey, "[::1]:5000", nil, true},
		{"another address", devKey, "192.0.2.7:5000", nil, false},
		{"through a proxy", devKey, "", http.Header{"X-Forwarded-For": {"192.0.2.7"}}, false},
		{"another key", []byte("not-the-well-known-key"), "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := serve(tc.key, tc.remote, tc.header)
			c := client(t)
			_, body, tok := get(t, c, hs.URL+"/-/explorer/login")
			if offered := strings.Contains(body, `id="one-click"`); offered != tc.offer {
				t.Fatalf("one click offered: %v, want %v", offered, tc.offer)
			}
			for _, account := range []string{server.DevAccountName, "other"} {
				resp := post(t, c, hs.URL+"/-/explorer/login", hs.URL, url.Values{"csrf": {tok}, "account": {account}, "oneclick": {"1"}})
				want := http.StatusForbidden
				if tc.offer && account == server.DevAccountName {
					want = http.StatusSeeOther
				}
				if resp.StatusCode != want {
					t.Fatalf("one click into %s: %d, want %d", account, resp.StatusCode, want)
				}
			}
		})
	}
}
