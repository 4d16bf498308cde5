package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/chromedp/chromedp"
	"github.com/localtable/localtable/internal/browsertest"
	"github.com/localtable/localtable/localtabletest"
)

// browserCase is one fetch the page makes; browserResult what the page
// could read of it, or the error the browser gave instead.
type browserCase struct {
	Name        string            `json:"name"`
	Method      string            `json:"method"`
	URL         string            `json:"url"`
	Headers     map[string]string `json:"headers,omitempty"`
	Body        string            `json:"body,omitempty"`
	Credentials string            `json:"credentials,omitempty"`
}

type browserResult struct {
	Name    string             `json:"name"`
	Status  int                `json:"status"`
	Body    string             `json:"body"`
	Headers map[string]*string `json:"headers"`
	Error   string             `json:"error"`
}

// browserPage runs the cases in order with fetch and leaves their results
// in window.results, as JSON.
const browserPage = `<!doctype html><html><head><title>localtable CORS</title></head><body><script>
const CASES = %s;
const READ = ["etag", "x-ms-request-id", "x-ms-version", "x-ms-error-code", "content-type", "x-content-type-options"];
(async () => {
  const out = [];
  for (const c of CASES) {
    try {
      const init = {method: c.method, headers: c.headers || {}};
      if (c.body) init.body = c.body;
      if (c.credentials) init.credentials = c.credentials;
      const r = await fetch(c.url, init);
      const headers = {};
      for (const n of READ) headers[n] = r.headers.get(n);
      out.push({name: c.name, status: r.status, body: await r.text(), headers});
    } catch (e) {
      out.push({name: c.name, error: String(e)});
    }
  }
  window.results = JSON.stringify(out);
})();
</script></body></html>`

// TestBrowserCORS loads a page from a second origin in headless Chromium;
// the page calls the server with fetch and a SAS URL. The browser, not this
// code, decides what the page may read: it must accept the server's
// Access-Control headers where a rule matches, and refuse the response
// where none does.
func TestBrowserCORS(t *testing.T) {
	b := browsertest.Start(t, "the real-browser CORS test")
	bctx := b.Ctx
	ctx := context.Background()

	var mu sync.Mutex
	var served []string // "METHOD path status" for each request the server answered
	record := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			mu.Lock()
			served = append(served, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, sw.status))
			mu.Unlock()
		})
	}
	srv := localtabletest.NewServer(t, localtabletest.WithMiddleware(record))
	table := newTable(t, srv, "browser")
	if _, err := table.AddEntity(ctx, ent("p", "r"), nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	u, err := srv.Client.NewClient("browser").GetTableSASURL(aztables.SASPermissions{Read: true, Add: true, Update: true, Delete: true}, now.Add(-time.Minute), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	sas := pu.RawQuery // the SDK joins the table to a path-style endpoint wrongly: keep the query
	tableURL := srv.URL + "/browser?" + sas
	entityURL := func(rk string) string { return srv.URL + "/browser(PartitionKey='p',RowKey='" + rk + "')?" + sas }

	phases := map[string][]browserCase{}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cases, ok := phases[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		js, _ := json.Marshal(cases) // escapes <, > and &
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, browserPage, js)
	}))
	defer page.Close()
	origin := page.URL // http://127.0.0.1:PORT, another port than the server's: another origin

	jsonHeaders := map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=nometadata", "x-ms-version": "2019-02-02"}
	accept := map[string]string{"Accept": "application/json;odata=nometadata"} // a simple request: no preflight
	phases["rules"] = []browserCase{
		{Name: "insert", Method: "POST", URL: tableURL, Headers: jsonHeaders, Body: `{"PartitionKey":"p","RowKey":"new","N":1}`},
		{Name: "get", Method: "GET", URL: entityURL("r"), Headers: accept},
		{Name: "get with credentials", Method: "GET", URL: entityURL("r"), Headers: accept, Credentials: "include"},
		{Name: "missing", Method: "GET", URL: entityURL("missing"), Headers: accept},
		{Name: "patch", Method: "PATCH", URL: entityURL("r"), Headers: map[string]string{"Content-Type": "application/json", "If-Match": "*"}, Body: `{"M":2}`},
		{Name: "merge", Method: "MERGE", URL: entityURL("r"), Headers: map[string]string{"Content-Type": "application/json", "If-Match": "*"}, Body: `{"M":3}`},
		{Name: "header not allowed", Method: "PUT", URL: entityURL("r"), Headers: map[string]string{"Content-Type": "application/json", "x-custom": "1"}, Body: `{}`},
		{Name: "method not allowed", Method: "DELETE", URL: entityURL("r"), Headers: map[string]string{"If-Match": "*"}},
	}
	phases["other-origin"] = []browserCase{
		{Name: "get, no rule for the origin", Method: "GET", URL: entityURL("r"), Headers: accept},
	}
	phases["any-origin"] = []browserCase{
		{Name: "get, rule for every origin", Method: "GET", URL: entityURL("r"), Headers: accept},
		{Name: "get with credentials, rule for every origin", Method: "GET", URL: entityURL("r"), Headers: accept, Credentials: "include"},
	}

	run := func(phase string) map[string]browserResult {
		t.Helper()
		mu.Lock()
		served = nil
		mu.Unlock()
		tctx, cancel := context.WithTimeout(bctx, 60*time.Second)
		defer cancel()
		var raw string
		if err := chromedp.Run(tctx, chromedp.Navigate(page.URL+"/"+phase), chromedp.Poll("window.results", &raw)); err != nil {
			t.Fatalf("%s: running the page in chromium: %v (exceptions: %q)", phase, err, b.Exceptions())
		}
		var list []browserResult
		if err := json.Unmarshal([]byte(raw), &list); err != nil {
			t.Fatalf("%s: results %q: %v", phase, raw, err)
		}
		out := map[string]browserResult{}
		for _, r := range list {
			out[r.Name] = r
			t.Logf("%s: %s: status %d error %q headers %v", phase, r.Name, r.Status, r.Error, deref(r.Headers))
		}
		return out
	}
	servedWith := func(prefix string) []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, s := range served {
			if strings.HasPrefix(s, prefix) {
				out = append(out, s)
			}
		}
		return out
	}
	accepted := func(r browserResult, status int) {
		t.Helper()
		if r.Error != "" || r.Status != status {
			t.Errorf("%s: the browser gave status %d, error %q; want status %d", r.Name, r.Status, r.Error, status)
		}
	}
	refused := func(r browserResult) {
		t.Helper()
		if r.Error == "" || !strings.Contains(r.Error, "TypeError") {
			t.Errorf("%s: the browser let the page read status %d; want a refusal", r.Name, r.Status)
		}
	}
	readable := func(r browserResult, header string, want bool) {
		t.Helper()
		if got := r.Headers[header] != nil; got != want {
			t.Errorf("%s: the page can read %s: %v, want %v", r.Name, header, got, want)
		}
	}

	// Phase 1: a rule for the page's origin.
	setCORSRules(t, srv, &aztables.CorsRule{
		AllowedOrigins: to.Ptr(origin), AllowedMethods: to.Ptr("GET,POST,PUT,PATCH,MERGE"),
		AllowedHeaders: to.Ptr("content-type,if-match,x-ms-*"), ExposedHeaders: to.Ptr("etag,x-ms-*"), MaxAgeInSeconds: to.Ptr(int32(60)),
	})
	res := run("rules")
	accepted(res["insert"], 201)
	readable(res["insert"], "etag", true)
	readable(res["insert"], "x-ms-request-id", true)
	accepted(res["get"], 200)
	if !strings.Contains(res["get"].Body, `"RowKey":"r"`) {
		t.Errorf("get: body %q", res["get"].Body)
	}
	readable(res["get"], "etag", true)
	readable(res["get"], "x-ms-version", true)
	readable(res["get"], "x-content-type-options", false) // sent, not exposed
	accepted(res["get with credentials"], 200)
	accepted(res["missing"], 404)
	readable(res["missing"], "x-ms-error-code", true)
	if !strings.Contains(res["missing"].Body, "ResourceNotFound") {
		t.Errorf("missing: body %q", res["missing"].Body)
	}
	accepted(res["patch"], 204)
	accepted(res["merge"], 204)
	refused(res["header not allowed"])
	refused(res["method not allowed"])
	if got := servedWith("OPTIONS"); len(got) != 5 || !strings.HasSuffix(got[3], " 403") || !strings.HasSuffix(got[4], " 403") {
		t.Errorf("preflights: %q, want insert, patch and merge allowed, then two refused", got)
	}
	if got := append(servedWith("PUT"), servedWith("DELETE")...); len(got) != 0 {
		t.Errorf("requests sent after a refused preflight: %q", got)
	}
	e, err := table.GetEntity(ctx, "p", "r", nil)
	if err != nil || !strings.Contains(string(e.Value), `"M":3`) {
		t.Errorf("after the page: %v %s", err, e.Value)
	}

	// Phase 2: a rule for another origin only. The server answers, the
	// browser refuses to hand the response to the page.
	setCORSRules(t, srv, &aztables.CorsRule{
		AllowedOrigins: to.Ptr("http://other.example"), AllowedMethods: to.Ptr("GET"),
		AllowedHeaders: to.Ptr(""), ExposedHeaders: to.Ptr(""), MaxAgeInSeconds: to.Ptr(int32(60)),
	})
	res = run("other-origin")
	refused(res["get, no rule for the origin"])
	if got := servedWith("GET"); len(got) != 1 || !strings.HasSuffix(got[0], " 200") {
		t.Errorf("served: %q, want the GET answered 200", got)
	}

	// Phase 3: a rule for every origin answers "*", which a request with
	// credentials may not use.
	setCORSRules(t, srv, &aztables.CorsRule{
		AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("GET"),
		AllowedHeaders: to.Ptr(""), ExposedHeaders: to.Ptr("x-ms-request-id"), MaxAgeInSeconds: to.Ptr(int32(60)),
	})
	res = run("any-origin")
	accepted(res["get, rule for every origin"], 200)
	readable(res["get, rule for every origin"], "x-ms-request-id", true)
	readable(res["get, rule for every origin"], "etag", false)
	refused(res["get with credentials, rule for every origin"])
}

// setCORSRules puts rules in force through the SDK.
func setCORSRules(t *testing.T, srv *localtabletest.Server, rules ...*aztables.CorsRule) {
	t.Helper()
	if _, err := srv.Client.SetProperties(context.Background(), aztables.ServiceProperties{Cors: rules}, nil); err != nil {
		t.Fatal(err)
	}
}

func deref(m map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

// statusWriter records the status a handler sent.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}
