package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

// sendRaw sends a request with a body to srv, dated by its clock, with
// auth's credentials, and returns its status, error code and body.
func sendRaw(t *testing.T, srv *localtabletest.Server, hc *http.Client, method, url, body string, auth func(*http.Request)) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("x-ms-date", srv.Clock.Now().UTC().Format(http.TimeFormat))
	auth(req)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("X-Ms-Error-Code"), string(b)
}

// recordControls records the controls the server hands on.
type recordControls struct {
	mu  sync.Mutex
	got []*server.TestControl
}

func (r *recordControls) TestControl(_ context.Context, c *server.TestControl) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, c)
	return map[string]string{"control": c.Name}, nil
}

func (r *recordControls) handed() []*server.TestControl {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

// TestTestControlsCredentials: the server hands a test control on only
// when it is signed with the account key (over HTTPS, where bearer tokens
// are otherwise accepted): a bearer token and a SAS are refused 403
// AuthorizationFailure; it hands on the control's name, verb, account,
// query and body.
func TestTestControlsCredentials(t *testing.T) {
	rec := &recordControls{}
	srv := localtabletest.New(t, localtabletest.WithServerOptions(func(o *server.Options) { o.TestControls = rec }))
	hc := &http.Client{Transport: srv.Transport}
	url := srv.URL + "/$test?comp=faults&x=1"
	send := func(auth func(*http.Request)) (int, string) {
		t.Helper()
		status, code, _ := sendRaw(t, srv, hc, "POST", url, `{"a":1}`, auth)
		return status, code
	}
	tk, err := srv.TokenCredential().GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{"https://storage.azure.com/.default"}})
	if err != nil {
		t.Fatal(err)
	}
	if status, code := send(func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tk.Token) }); status != 403 || code != "AuthorizationFailure" {
		t.Errorf("a bearer token: %d %s, want 403 AuthorizationFailure", status, code)
	}
	sas, err := srv.Client.GetAccountSASURL(aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
		aztables.AccountSASPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true, Process: true},
		time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	url += "&" + sas[strings.IndexByte(sas, '?')+1:]
	if status, code := send(func(*http.Request) {}); status != 403 || code != "AuthorizationFailure" {
		t.Errorf("an account SAS with every permission: %d %s, want 403 AuthorizationFailure", status, code)
	}
	if got := rec.handed(); len(got) != 0 {
		t.Fatalf("refused controls were handed on: %+v", got)
	}
	url = srv.URL + "/$test?comp=faults&x=1"
	status, code := send(func(r *http.Request) {
		toSign := r.Header.Get("x-ms-date") + "\n/" + server.DevAccountName + "/" + server.DevAccountName + "/$test?comp=faults"
		r.Header.Set("Authorization", "SharedKeyLite "+server.DevAccountName+":"+hmacSign(srv.Key(), toSign))
	})
	if status != 200 {
		t.Fatalf("Shared Key Lite: %d %s, want 200", status, code)
	}
	got := rec.handed()
	if len(got) != 1 {
		t.Fatalf("%d controls handed on, want 1", len(got))
	}
	if c := got[0]; c.Name != "faults" || c.Method != "POST" || c.Account != server.DevAccountName || c.Data != srv.Account || c.Query.Get("x") != "1" || string(c.Body) != `{"a":1}` {
		t.Errorf("handed on %+v", c)
	}
}
