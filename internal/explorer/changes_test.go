package explorer_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/browsertest"
	"github.com/localtable/localtable/internal/explorer"
	"github.com/localtable/localtable/server"
)

// newFeedServer serves the explorer over devstoreaccount1 with a change
// feed keeping keep changes (0: the default), and "other" (key
// "other-key") without one.
func newFeedServer(t *testing.T, keep int) (*httptest.Server, *localtable.Account, *localtable.Account) {
	t.Helper()
	a1, err := localtable.Open(&localtable.Options{Feed: &localtable.FeedOptions{KeepChanges: keep}})
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := localtable.Open(nil)
	x := explorer.New(explorer.Options{
		Accounts: []explorer.Account{{Name: server.DevAccountName, Key: devKey, Data: a1}, {Name: "other", Key: []byte("other-key"), Data: a2}},
		Prefix:   "/-/explorer/",
	})
	hs := httptest.NewServer(x)
	t.Cleanup(func() {
		a1.Close() // ends the streams, which hs.Close waits for
		a2.Close()
		hs.Close()
	})
	return hs, a1, a2
}

// changeRow is a row of the Changes view.
type changeRow struct {
	Revision int    `json:"revision"`
	Kind     string `json:"kind"`
	PK       string `json:"pk"`
	RK       string `json:"rk"`
	Props    string `json:"props"`
}

const readChangeRows = `[...document.querySelectorAll("#changes tbody tr.change")].map((tr) => ({
	revision: Number(tr.dataset.revision), kind: tr.dataset.kind,
	pk: tr.querySelector(".pk").textContent, rk: tr.querySelector(".rk").textContent,
	props: [...tr.querySelectorAll(".cprop")].map((s) => s.dataset.name + "=" + s.lastChild.textContent + ":" + s.title).join(" "),
}))`

// TestBrowserChanges watches a table's changes in headless Chromium:
// inserts, a merge, a delete and a transaction written through the Go
// API appear in order, newest on top, with their properties and types;
// another table's do not; after the connection breaks, and after Pause
// and Resume, the view resumes from the last revision shown, with
// nothing missed or repeated; a feed compacted past it is said so; and an
// account without a feed says that it has none.
func TestBrowserChanges(t *testing.T) {
	b := browsertest.Start(t, "the explorer's Changes view", chromedp.WindowSize(1280, 860))
	hs, acct, other := newFeedServer(t, 1)
	ctx := context.Background()
	do := stepper(t, b, "explorer-changes")
	rows := func() []changeRow {
		t.Helper()
		var r []changeRow
		do("reading the changes", chromedp.Evaluate(readChangeRows, &r))
		return r
	}
	// waitRows waits for n rows.
	waitRows := func(n int) []changeRow {
		t.Helper()
		do(fmt.Sprintf("waiting for %d changes", n), chromedp.WaitReady(fmt.Sprintf("#changes tbody tr.change:nth-child(%d)", n), chromedp.ByQuery))
		return rows()
	}
	waitState := func(state string) {
		t.Helper()
		do("waiting for "+state, chromedp.WaitVisible(`#changes-status[data-state="`+state+`"]`, chromedp.ByQuery))
	}
	// checkRows checks that the rows are newest on top, each once, and
	// (unless want is nil) are want's changes.
	checkRows := func(got []changeRow, want ...string) {
		t.Helper()
		var kinds []string
		for i, r := range got {
			kinds = append(kinds, r.Kind+" "+r.PK+"/"+r.RK)
			if i > 0 && r.Revision >= got[i-1].Revision {
				t.Fatalf("rows out of order or repeated: %+v", got)
			}
		}
		if want != nil && strings.Join(kinds, ", ") != strings.Join(want, ", ") {
			t.Fatalf("the view shows\n  %s\nwant\n  %s", strings.Join(kinds, ", "), strings.Join(want, ", "))
		}
	}

	tb, err := acct.CreateTable(ctx, "Orders")
	if err != nil {
		t.Fatal(err)
	}
	others, _ := acct.CreateTable(ctx, "Others")
	do("login", chromedp.Navigate(hs.URL+"/-/explorer/login"),
		chromedp.SendKeys("#login-key", server.DevAccountKey, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery), chromedp.WaitVisible("#create-table", chromedp.ByQuery),
		chromedp.Click(`a.table-link[href$="/t/Orders"]`, chromedp.ByQuery), chromedp.WaitVisible("#tab-changes", chromedp.ByQuery),
		chromedp.Click("#tab-changes", chromedp.ByQuery))
	waitState("live")
	if got := rows(); len(got) != 0 {
		t.Fatalf("a new view shows past changes: %+v", got)
	}
	var nowShown bool
	do("watch from now hidden", chromedp.Evaluate(`document.getElementById("changes-now").offsetParent !== null`, &nowShown))
	if nowShown {
		t.Fatal("Watch from now shows while the view is live")
	}

	// Insert, merge, delete, a change to another table, a transaction.
	if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "smith", RowKey: "1", Properties: localtable.Properties{
		"Status": localtable.StringValue("open"), "Total": localtable.DoubleValue(12), "Items": localtable.Int64Value(3)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Update(ctx, localtable.Entity{PartitionKey: "smith", RowKey: "1", Properties: localtable.Properties{
		"Status": localtable.StringValue("shipped")}}, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	if _, err := others.Insert(ctx, localtable.Entity{PartitionKey: "x", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := tb.Delete(ctx, "smith", "1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "jones", RowKey: "1", Properties: localtable.Properties{"Gift": localtable.BoolValue(true)}}},
		{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "jones", RowKey: "2", Properties: localtable.Properties{"Count": localtable.Int32Value(1)}}},
	}); err != nil {
		t.Fatal(err)
	}
	got := waitRows(5)
	checkRows(got, "Insert jones/2", "Insert jones/1", "Delete smith/1", "Merge smith/1", "Insert smith/1")
	if p := got[4].Props; p != "Items=3:Edm.Int64 Status=open:Edm.String Total=12.0:Edm.Double" {
		t.Errorf("the insert's properties: %q", p)
	}
	if p := got[3].Props; !strings.Contains(p, "Status=shipped:Edm.String") || !strings.Contains(p, "Total=12.0:Edm.Double") {
		t.Errorf("the merge shows the entity after it: %q", p)
	}
	if p := got[0].Props + " " + got[1].Props; p != "Count=1:Edm.Int32 Gift=true:Edm.Boolean" {
		t.Errorf("the transaction's properties: %q", p)
	}
	var url string
	do("url", chromedp.Location(&url))
	if want := fmt.Sprintf("from=%d", got[0].Revision); !strings.HasSuffix(url, want) {
		t.Errorf("the page's URL %q does not remember %s", url, want)
	}

	// The connection breaks; a change comes meanwhile: the view resumes
	// from the last revision shown.
	hs.CloseClientConnections()
	if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "king", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	waitRows(6)
	waitState("live")
	if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "lee", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	checkRows(waitRows(7), "Insert lee/1", "Insert king/1", "Insert jones/2", "Insert jones/1", "Delete smith/1", "Merge smith/1", "Insert smith/1")

	// Pause, a change, Resume: it comes, once.
	do("pause", chromedp.Click("#changes-pause", chromedp.ByQuery))
	waitState("paused")
	if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "moore", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	do("resume", chromedp.Click("#changes-pause", chromedp.ByQuery))
	got = waitRows(8)
	checkRows(got[:2], "Insert moore/1", "Insert lee/1")
	checkRows(got, nil...)
	var shot []byte
	do("screenshot", chromedp.FullScreenshot(&shot, 100))
	if p := filepath.Join(artifactDir(t), "explorer-changes.png"); os.WriteFile(p, shot, 0o644) == nil {
		t.Logf("screenshot: %s", p)
	}

	// Paused while the feed drops what follows (it keeps the latest
	// change, pruned every 1,024 revisions): resuming says so.
	do("pause", chromedp.Click("#changes-pause", chromedp.ByQuery))
	waitState("paused")
	for i := range 11 {
		var acts []localtable.Action
		for j := range 100 {
			acts = append(acts, localtable.Action{Type: localtable.ActionUpsertReplace,
				Entity: localtable.Entity{PartitionKey: "bulk", RowKey: fmt.Sprintf("%02d-%03d", i, j)}})
		}
		if _, err := others.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	do("resume", chromedp.Click("#changes-pause", chromedp.ByQuery))
	waitState("compacted")
	var msg string
	do("compacted", chromedp.Text("#changes-status", &msg, chromedp.ByQuery), chromedp.WaitVisible("#changes-now", chromedp.ByQuery))
	if !strings.Contains(msg, fmt.Sprintf("no longer keeps the changes after revision %d", got[0].Revision)) {
		t.Fatalf("compacted: %q", msg)
	}
	// Watching from now shows the next change only.
	do("from now", chromedp.Click("#changes-now", chromedp.ByQuery))
	waitState("live")
	if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "nash", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	checkRows(waitRows(1), "Insert nash/1")

	// An account without a feed says so.
	if _, err := other.CreateTable(ctx, "Plain"); err != nil {
		t.Fatal(err)
	}
	do("login other", chromedp.Navigate(hs.URL+"/-/explorer/login?account=other"),
		chromedp.SendKeys("#login-key", base64.StdEncoding.EncodeToString([]byte("other-key")), chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery), chromedp.WaitVisible("#create-table", chromedp.ByQuery),
		chromedp.Navigate(hs.URL+"/-/explorer/a/other/t/Plain/changes"), chromedp.WaitVisible("#feed-off", chromedp.ByQuery))
	do("feed off", chromedp.Text("#feed-off", &msg, chromedp.ByQuery))
	if !strings.Contains(msg, "without --feed") || !strings.Contains(msg, "localtable serve --feed") {
		t.Fatalf("feed off: %q", msg)
	}
	if ex := b.Exceptions(); len(ex) > 0 {
		t.Fatalf("JavaScript exceptions: %q", ex)
	}
}

// TestChangesStream: the stream needs the session; a revision beyond the
// account's is refused; an account without a feed answers 404 FeedOff;
// and a change is one line of the feed's format.
func TestChangesStream(t *testing.T) {
	hs, acct, other := newFeedServer(t, 0)
	ctx := context.Background()
	tb, _ := acct.CreateTable(ctx, "Orders")
	other.CreateTable(ctx, "Plain")
	c := client(t)
	stream := hs.URL + "/-/explorer/a/devstoreaccount1/t/Orders/changes/stream"
	if code, _, _ := get(t, c, stream+"?from=0"); code != http.StatusSeeOther {
		t.Fatalf("without a session: %d", code)
	}
	login(t, hs, c, "devstoreaccount1", server.DevAccountKey)
	if code, body, _ := get(t, c, stream+"?from=99"); code != http.StatusBadRequest || !strings.Contains(body, `"code":"InvalidInput"`) {
		t.Fatalf("from beyond: %d %s", code, body)
	}
	rev, _ := acct.Revision(ctx)
	tb.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"N": localtable.Int32Value(1)}})
	resp, err := c.Get(fmt.Sprintf("%s?from=%d", stream, rev))
	if err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	if resp.Header.Get("Content-Type") != "application/x-ndjson" ||
		!strings.HasPrefix(got, fmt.Sprintf(`{"revision":%d,"commit":%d,"last":true,"kind":"Insert","table":"Orders","entity":{"PartitionKey":"p","RowKey":"r",`, rev+1, rev+1)) ||
		!strings.Contains(got, `"N@odata.type":"Edm.Int32","N":1}}`) {
		t.Fatalf("the stream: %s %q", resp.Header.Get("Content-Type"), got)
	}
	c2 := client(t)
	login(t, hs, c2, "other", base64.StdEncoding.EncodeToString([]byte("other-key")))
	if code, body, _ := get(t, c2, hs.URL+"/-/explorer/a/other/t/Plain/changes/stream"); code != http.StatusNotFound || !strings.Contains(body, `"code":"FeedOff"`) {
		t.Fatalf("feed off: %d %s", code, body)
	}
}
