package explorer_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/explorer"
	"github.com/localtable/localtable/server"
)

var devKey, _ = base64.StdEncoding.DecodeString(server.DevAccountKey)

// newServer serves the explorer over two accounts: devstoreaccount1 (the
// emulator key) and other (key "other-key").
func newServer(t *testing.T, noAuth bool, clock func() time.Time) (*httptest.Server, *localtable.Account) {
	t.Helper()
	a1, _ := localtable.Open(nil)
	a2, _ := localtable.Open(nil)
	t.Cleanup(func() { a1.Close(); a2.Close() })
	x := explorer.New(explorer.Options{
		Accounts: []explorer.Account{{Name: server.DevAccountName, Key: devKey, Data: a1}, {Name: "other", Key: []byte("other-key"), Data: a2}},
		NoAuth:   noAuth, Prefix: "/-/explorer/", Clock: clock,
	})
	hs := httptest.NewServer(x)
	t.Cleanup(hs.Close)
	return hs, a1
}

// client is a browser-like client: cookies, no redirects followed.
func client(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// get fetches a page and returns its status, body and form token.
func get(t *testing.T, c *http.Client, u string) (int, string, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	tok := ""
	if m := csrfRE.FindStringSubmatch(string(b)); m != nil {
		tok = m[1]
	}
	return resp.StatusCode, string(b), tok
}

func post(t *testing.T, c *http.Client, u, origin string, form url.Values) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func login(t *testing.T, hs *httptest.Server, c *http.Client, account, key string) *http.Response {
	t.Helper()
	_, _, tok := get(t, c, hs.URL+"/-/explorer/login")
	return post(t, c, hs.URL+"/-/explorer/login", hs.URL, url.Values{"csrf": {tok}, "account": {account}, "key": {key}})
}

func TestPagesNeedALogin(t *testing.T) {
	hs, _ := newServer(t, false, nil)
	c := client(t)
	home := hs.URL + "/-/explorer/a/devstoreaccount1/"
	resp, err := c.Get(home)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "/-/explorer/login") {
		t.Fatalf("without a session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if r := login(t, hs, c, "devstoreaccount1", base64.StdEncoding.EncodeToString([]byte("wrong"))); r.StatusCode != http.StatusForbidden {
		t.Fatalf("wrong key: %d", r.StatusCode)
	}
	if code, _, _ := get(t, c, home); code != http.StatusSeeOther {
		t.Fatalf("after a wrong key: %d", code)
	}
	if r := login(t, hs, c, "devstoreaccount1", server.DevAccountKey); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("right key: %d", r.StatusCode)
	}
	if code, body, _ := get(t, c, home); code != http.StatusOK || !strings.Contains(body, "Tables of devstoreaccount1") {
		t.Fatalf("with a session: %d", code)
	}
	// The session opens its own account only.
	if code, _, _ := get(t, c, hs.URL+"/-/explorer/a/other/"); code != http.StatusSeeOther {
		t.Fatalf("another account with this session: %d", code)
	}
	// A tampered cookie is no session.
	u, _ := url.Parse(hs.URL + "/-/explorer/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "lt_session" {
			ck.Value = strings.Replace(ck.Value, ".", "x.", 1)
			ck.Path = "/-/explorer/"
			c.Jar.SetCookies(u, []*http.Cookie{ck})
		}
	}
	if code, _, _ := get(t, c, home); code != http.StatusSeeOther {
		t.Fatalf("tampered session: %d", code)
	}
}

func TestSessionsExpire(t *testing.T) {
	now := time.Now()
	hs, _ := newServer(t, false, func() time.Time { return now })
	c := client(t)
	login(t, hs, c, "other", base64.StdEncoding.EncodeToString([]byte("other-key")))
	if code, _, _ := get(t, c, hs.URL+"/-/explorer/a/other/"); code != http.StatusOK {
		t.Fatalf("fresh session: %d", code)
	}
	now = now.Add(explorer.SessionTTL + time.Second)
	if code, _, _ := get(t, c, hs.URL+"/-/explorer/a/other/"); code != http.StatusSeeOther {
		t.Fatalf("expired session: %d", code)
	}
}

// A form without the page's token, or from another origin, changes
// nothing, even without authentication.
func TestFormsNeedTokenAndOrigin(t *testing.T) {
	hs, acct := newServer(t, true, nil)
	c := client(t)
	_, body, tok := get(t, c, hs.URL+"/-/explorer/a/devstoreaccount1/")
	if tok == "" || !strings.Contains(body, "No tables yet") {
		t.Fatalf("no token on the page:\n%s", body)
	}
	create := hs.URL + "/-/explorer/a/devstoreaccount1/tables"
	if r := post(t, c, create, hs.URL, url.Values{"name": {"NoToken"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("no token: %d", r.StatusCode)
	}
	if r := post(t, c, create, hs.URL, url.Values{"name": {"BadToken"}, "csrf": {tok + "x"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("wrong token: %d", r.StatusCode)
	}
	if r := post(t, c, create, "http://evil.example", url.Values{"name": {"Foreign"}, "csrf": {tok}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("other origin: %d", r.StatusCode)
	}
	if r := post(t, c, create, hs.URL, url.Values{"name": {"Good"}, "csrf": {tok}}); r.StatusCode != http.StatusSeeOther {
		t.Errorf("good form: %d", r.StatusCode)
	}
	var names []string
	for ti, err := range acct.Tables(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ti.Name)
	}
	if strings.Join(names, ",") != "Good" {
		t.Fatalf("tables: %v", names)
	}
}

func TestSecurityHeadersAndEscaping(t *testing.T) {
	hs, acct := newServer(t, true, nil)
	ctx := context.Background()
	tb, _ := acct.CreateTable(ctx, "Things")
	if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "<script>alert(1)", RowKey: "r", Properties: localtable.Properties{"X": localtable.StringValue(`"><img src=x onerror=alert(1)>`)}}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(hs.URL + "/-/explorer/a/devstoreaccount1/t/Things")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if strings.Contains(string(b), "<script>alert") || strings.Contains(string(b), "<img src=x") {
		t.Errorf("an entity's text reached the page unescaped")
	}
	if !strings.Contains(string(b), "&lt;script&gt;alert(1)") {
		t.Errorf("the escaped key is missing:\n%s", b)
	}
}

// Export streams the current query in either format.
func TestExport(t *testing.T) {
	hs, acct := newServer(t, true, nil)
	ctx := context.Background()
	tb, _ := acct.CreateTable(ctx, "Things")
	for _, pk := range []string{"a", "b"} {
		tb.Insert(ctx, localtable.Entity{PartitionKey: pk, RowKey: "1", Properties: localtable.Properties{"N": localtable.Int64Value(7)}})
	}
	_, body, _ := get(t, client(t), hs.URL+"/-/explorer/a/devstoreaccount1/t/Things/export?format=jsonl&filter="+url.QueryEscape("PartitionKey eq 'b'"))
	if body != `{"PartitionKey":"b","RowKey":"1","N@odata.type":"Edm.Int64","N":"7"}`+"\n" {
		t.Errorf("jsonl: %q", body)
	}
	_, body, _ = get(t, client(t), hs.URL+"/-/explorer/a/devstoreaccount1/t/Things/export?format=csv")
	if body != "PartitionKey,RowKey,N@Edm.Int64\r\na,1,7\r\nb,1,7\r\n" {
		t.Errorf("csv: %q", body)
	}
}

// A table is browsed a page at a time, by continuation.
func TestBrowsePages(t *testing.T) {
	hs, acct := newServer(t, true, nil)
	ctx := context.Background()
	tb, _ := acct.CreateTable(ctx, "Many")
	for i := 0; i < 60; i++ {
		if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	c := client(t)
	_, body, _ := get(t, c, hs.URL+"/-/explorer/a/devstoreaccount1/t/Many")
	if n := strings.Count(body, `class="entity-link"`); n != 50 || !strings.Contains(body, ">r49<") || strings.Contains(body, ">r50<") {
		t.Fatalf("first page: %d rows", n)
	}
	m := regexp.MustCompile(`href="([^"]+)" id="next-page"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no next page link")
	}
	_, body, _ = get(t, c, hs.URL+html.UnescapeString(m[1]))
	if n := strings.Count(body, `class="entity-link"`); n != 10 || !strings.Contains(body, ">r50<") || strings.Contains(body, `id="next-page"`) || !strings.Contains(body, `id="first-page"`) {
		t.Fatalf("second page: %d rows", n)
	}
}

func TestTablePageListsIndexes(t *testing.T) {
	hs, acct := newServer(t, true, nil)
	ctx := context.Background()
	tb, _ := acct.CreateTable(ctx, "Orders")
	for i := range 40 {
		if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i), Properties: map[string]localtable.Value{"Total": localtable.DoubleValue(float64(i)), "Status": localtable.StringValue("open")}}); err != nil {
			t.Fatal(err)
		}
	}
	c := client(t)
	_, body, _ := get(t, c, hs.URL+"/-/explorer/a/devstoreaccount1/t/Orders")
	if strings.Contains(body, `id="indexes"`) {
		t.Fatal("a table without indexes shows an index list")
	}
	if err := tb.CreateIndex(ctx, "ByTotal", "Total"); err != nil {
		t.Fatal(err)
	}
	if err := tb.CreateIndex(ctx, "ByStatus", "Status", "Total"); err != nil {
		t.Fatal(err)
	}
	_, body, _ = get(t, c, hs.URL+"/-/explorer/a/devstoreaccount1/t/Orders?filter="+url.QueryEscape("Total gt 38.0"))
	rows := regexp.MustCompile(`<tr class="index"><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>`).FindAllStringSubmatch(body, -1)
	if len(rows) != 2 || rows[0][1] != "ByTotal" || rows[0][2] != "Total" || rows[0][3] != "ready" || rows[1][1] != "ByStatus" || rows[1][2] != "Status, Total" {
		t.Fatalf("index rows: %q", rows)
	}
	if !strings.Contains(body, `through index <b id="index-used">ByTotal</b>`) {
		t.Fatal("the stats do not name the index the query read")
	}
	// The plan shown above the stats is the planner's: it names the index
	// too, and says no "full scan".
	plan := regexp.MustCompile(`(?s)<pre id="plan">(.*?)</pre>`).FindStringSubmatch(body)
	if plan == nil || !strings.Contains(plan[1], "read through index ByTotal") || strings.Contains(plan[1], "full scan") {
		t.Fatalf("the plan contradicts the stats: %q", plan)
	}
	if strings.Contains(body, `id="expiry"`) {
		t.Fatal("a table without an expiry policy shows one")
	}
	if err := tb.SetExpiry(ctx, "ExpiresAt"); err != nil {
		t.Fatal(err)
	}
	_, body, _ = get(t, c, hs.URL+"/-/explorer/a/devstoreaccount1/t/Orders")
	if !strings.Contains(body, `<p id="expiry">Entities expire by <b>ExpiresAt</b>`) {
		t.Fatal("the table page does not show its expiry policy")
	}
}
