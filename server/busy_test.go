package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// TestMaxConcurrentRequests: a request over Options.MaxConcurrentRequests
// is answered at once 503 ServerBusy in the service's error shape; the
// health check is not counted; a place given back serves the next one.
func TestMaxConcurrentRequests(t *testing.T) {
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	ts := httptest.NewServer(server.New(acct, &server.Options{DisableAuth: true, MaxConcurrentRequests: 2}))
	defer ts.Close()

	// Two requests held in flight by their bodies, which never end.
	var bodies []*io.PipeWriter
	held := make(chan *http.Response, 2)
	for range 2 {
		pr, pw := io.Pipe()
		bodies = append(bodies, pw)
		req, _ := http.NewRequest("POST", ts.URL+"/devstoreaccount1/Tables", pr)
		req.Header.Set("Content-Type", "application/json")
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
			}
			held <- resp
		}()
		pw.Write([]byte(`{"TableName":`)) // returns once the client has sent it
	}

	get := func(path string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	// The client sending a body does not mean the handler took its place
	// yet: ask until the cap answers (a request that is served gives its
	// place back at once, so asking cannot hold one).
	var resp *http.Response
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		resp, body = get("/devstoreaccount1/Tables")
		if resp.StatusCode != 200 || time.Now().After(deadline) {
			break
		}
	}
	if resp.StatusCode != 503 || resp.Header.Get("x-ms-error-code") != "ServerBusy" ||
		!strings.HasPrefix(body, `{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"The server is busy.`) {
		t.Errorf("a third request: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if resp, body := get(server.HealthPath); resp.StatusCode != 200 {
		t.Errorf("health over the cap: %d %s", resp.StatusCode, body)
	}

	bodies[0].Write([]byte(`"one"}`))
	bodies[0].Close()
	if r := <-held; r == nil || r.StatusCode != 201 {
		t.Fatalf("a held request: %v", r)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body := get("/devstoreaccount1/Tables")
		if resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a place is given back: %d %s", resp.StatusCode, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	bodies[1].Close()
	<-held
}
