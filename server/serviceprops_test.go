package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/server"
)

// The service properties are stored in the account: a server over a
// reopened pebble store, and a server over a shared engine, answer with
// the CORS rules another server set.

// serveAccount serves acct (the dev account, Shared Key) until the test
// ends or the returned stop is called.
func serveAccount(t *testing.T, acct *localtable.Account) (url string, stop func()) {
	t.Helper()
	ts := httptest.NewServer(server.New(acct, nil))
	t.Cleanup(ts.Close)
	return ts.URL + "/" + server.DevAccountName, ts.Close
}

func devKeyRequest(t *testing.T, method, url, body string) (*http.Response, string) {
	t.Helper()
	return send(t, sharedKeyRequest(t, server.DevAccountName, devKey(t), method, url, body))
}

func setPropertiesAt(t *testing.T, url, body string) {
	t.Helper()
	resp, got := devKeyRequest(t, "PUT", url+"/?restype=service&comp=properties", `<?xml version="1.0" encoding="utf-8"?>`+body)
	if resp.StatusCode != 202 {
		t.Fatalf("set properties at %s: %d %s", url, resp.StatusCode, got)
	}
}

func getPropertiesAt(t *testing.T, url string) string {
	t.Helper()
	resp, got := devKeyRequest(t, "GET", url+"/?restype=service&comp=properties", "")
	if resp.StatusCode != 200 {
		t.Fatalf("get properties at %s: %d %s", url, resp.StatusCode, got)
	}
	return got
}

// preflightStatus is the status of a preflight from http://a.example for
// GET of the account's tables.
func preflightStatus(t *testing.T, url string) int {
	t.Helper()
	resp, _ := preflight(t, url+"/Tables", "http://a.example", "GET", "", nil)
	return resp.StatusCode
}

var propsRule = corsRuleXML("http://a.example", "GET", "x-ms-*", "x-ms-*", 60)

func TestServicePropertiesSurviveRestart(t *testing.T) {
	r := tabletest.NewReopener(t)
	url, stop := serveAccount(t, r.Open(nil))
	setPropertiesAt(t, url, `<StorageServiceProperties><Cors>`+propsRule+`</Cors></StorageServiceProperties>`)
	if got := preflightStatus(t, url); got != 200 {
		t.Fatalf("preflight before the restart: %d", got)
	}
	stop()
	url, _ = serveAccount(t, r.Open(nil))
	if got := preflightStatus(t, url); got != 200 {
		t.Errorf("preflight after the restart: %d, want 200", got)
	}
	if got := getPropertiesAt(t, url); !strings.Contains(got, "<AllowedOrigins>http://a.example</AllowedOrigins>") {
		t.Errorf("properties after the restart: %s", got)
	}
}

func TestServicePropertiesShared(t *testing.T) {
	s := sharedmem.New()
	open := func() *localtable.Account {
		a, err := localtable.Open(&localtable.Options{Engine: s.Open()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	}
	urlA, _ := serveAccount(t, open())
	urlB, _ := serveAccount(t, open())
	if got := preflightStatus(t, urlB); got != 403 { // B loads its rules: none
		t.Fatalf("preflight at B, no rules: %d", got)
	}
	setPropertiesAt(t, urlA, `<StorageServiceProperties><Cors>`+propsRule+`</Cors></StorageServiceProperties>`)
	if got := getPropertiesAt(t, urlB); !strings.Contains(got, "<AllowedOrigins>http://a.example</AllowedOrigins>") {
		t.Errorf("properties at B: %s", got)
	}
	// B's cached rules are at most a TTL old.
	waitStatus := func(url string, want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := preflightStatus(t, url)
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("preflight at %s: %d, want %d", url, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitStatus(urlB, 200)
	// A document without Cors, set at B, keeps the rules A set.
	setPropertiesAt(t, urlB, `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging></StorageServiceProperties>`)
	got := getPropertiesAt(t, urlA)
	if !strings.Contains(got, "<Delete>true</Delete>") || !strings.Contains(got, "<AllowedOrigins>http://a.example</AllowedOrigins>") {
		t.Errorf("properties at A after B's set: %s", got)
	}
	// Rules removed at B are soon out of force at A.
	setPropertiesAt(t, urlB, `<StorageServiceProperties><Cors/></StorageServiceProperties>`)
	if got := preflightStatus(t, urlB); got != 403 {
		t.Errorf("preflight at B just after its set: %d, want 403", got)
	}
	waitStatus(urlA, 403)
}
