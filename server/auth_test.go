package server_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

func hmacSign(key []byte, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// sharedKeyRequest signs a request with SharedKey (not Lite), as the
// Python, .NET and JS SDKs do (docs/protocol.md §8):
// VERB\nContent-MD5\nContent-Type\nx-ms-date\nCanonicalizedResource.
func sharedKeyRequest(t *testing.T, account string, key []byte, method, rawURL, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	cr := "/" + account + req.URL.EscapedPath()
	if c := req.URL.Query().Get("comp"); c != "" {
		cr += "?comp=" + c
	}
	toSign := method + "\n\n" + req.Header.Get("Content-Type") + "\n" + req.Header.Get("x-ms-date") + "\n" + cr
	req.Header.Set("Authorization", "SharedKey "+account+":"+hmacSign(key, toSign))
	return req
}

func send(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func wantStatus(t *testing.T, what string, resp *http.Response, body string, status int, code string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("x-ms-error-code") != code {
		t.Errorf("%s: %d %q, want %d %q: %s", what, resp.StatusCode, resp.Header.Get("x-ms-error-code"), status, code, body)
	}
}

func TestWireSharedKey(t *testing.T) {
	srv := localtabletest.NewServer(t)
	key := srv.Key()
	acct := server.DevAccountName
	// Create, insert, get, query with comp-less and comp URLs.
	resp, got := send(t, sharedKeyRequest(t, acct, key, "POST", srv.URL+"/Tables", `{"TableName":"skt"}`))
	wantStatus(t, "create table", resp, got, 201, "")
	resp, got = send(t, sharedKeyRequest(t, acct, key, "POST", srv.URL+"/skt", `{"PartitionKey":"a b","RowKey":"it's"}`))
	wantStatus(t, "insert", resp, got, 201, "")
	resp, got = send(t, sharedKeyRequest(t, acct, key, "GET", srv.URL+"/skt(PartitionKey='a%20b',RowKey='it''s')", ""))
	wantStatus(t, "get", resp, got, 200, "")
	resp, got = send(t, sharedKeyRequest(t, acct, key, "GET", srv.URL+"/skt()?$filter="+url.QueryEscape("RowKey eq 'it''s'"), ""))
	wantStatus(t, "query", resp, got, 200, "")
	if !strings.Contains(got, `"RowKey":"it's"`) {
		t.Errorf("query: %s", got)
	}
	resp, got = send(t, sharedKeyRequest(t, acct, key, "GET", srv.URL+"/skt?comp=acl", ""))
	wantStatus(t, "get acl", resp, got, 200, "")
	resp, got = send(t, sharedKeyRequest(t, acct, key, "GET", srv.URL+"/?restype=service&comp=properties", ""))
	wantStatus(t, "service properties", resp, got, 200, "")

	// Tampering with any signed part fails.
	req := sharedKeyRequest(t, acct, key, "POST", srv.URL+"/skt", `{"PartitionKey":"p","RowKey":"r"}`)
	req.Header.Set("Content-Type", "application/json;odata=nometadata")
	resp, got = send(t, req)
	wantStatus(t, "changed Content-Type", resp, got, 403, "AuthenticationFailed")
	req = sharedKeyRequest(t, acct, key, "GET", srv.URL+"/skt()", "")
	req.Header.Set("x-ms-date", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
	resp, got = send(t, req)
	wantStatus(t, "changed date", resp, got, 403, "AuthenticationFailed")
	req = sharedKeyRequest(t, acct, key, "DELETE", srv.URL+"/Tables('skt')", "")
	req.Method = "GET"
	resp, got = send(t, req)
	wantStatus(t, "changed verb", resp, got, 403, "AuthenticationFailed")
	// A wrong key, a wrong account name in the header, and a signature of
	// another account's resource fail.
	resp, got = send(t, sharedKeyRequest(t, acct, []byte("wrong key"), "GET", srv.URL+"/skt()", ""))
	wantStatus(t, "wrong key", resp, got, 403, "AuthenticationFailed")
	resp, got = send(t, sharedKeyRequest(t, "otheraccount", key, "GET", srv.URL+"/skt()", ""))
	wantStatus(t, "wrong account in header", resp, got, 403, "AuthenticationFailed")
	req = sharedKeyRequest(t, acct, key, "GET", srv.URL+"/skt()", "")
	req.Header.Set("Authorization", strings.Replace(req.Header.Get("Authorization"), "SharedKey ", "SharedKeyLite ", 1))
	resp, got = send(t, req)
	wantStatus(t, "SharedKey signature sent as Lite", resp, got, 403, "AuthenticationFailed")
	// No Authorization at all.
	req, _ = http.NewRequest("GET", srv.URL+"/skt()", nil)
	resp, got = send(t, req)
	wantStatus(t, "no Authorization", resp, got, 403, "AuthenticationFailed")
	for _, a := range []string{"SharedKey", "SharedKey devstoreaccount1", "Basic Zm9vOmJhcg==", "SharedKey :"} {
		req, _ = http.NewRequest("GET", srv.URL+"/skt()", nil)
		req.Header.Set("Authorization", a)
		resp, got = send(t, req)
		wantStatus(t, "Authorization "+a, resp, got, 403, "AuthenticationFailed")
	}
	// An account the server does not serve.
	resp, got = send(t, sharedKeyRequest(t, "other", key, "GET", strings.Replace(srv.URL, acct, "other", 1)+"/skt()", ""))
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("unknown account: %d %s", resp.StatusCode, got)
	}
	// Without auth, anything goes.
	open := localtabletest.NewServer(t, localtabletest.WithoutAuth())
	req, _ = http.NewRequest("POST", open.URL+"/Tables", strings.NewReader(`{"TableName":"free"}`))
	resp, got = send(t, req)
	wantStatus(t, "auth off", resp, got, 201, "")
}

// serviceSAS builds a service SAS query for table, signed as
// docs/protocol.md §8 says, including the key range that aztables leaves out
// of its URLs.
func serviceSAS(key []byte, table, perms string, start, expiry time.Time, rng [4]string) string {
	q := url.Values{}
	q.Set("sv", "2019-02-02")
	q.Set("tn", table)
	q.Set("sp", perms)
	if !start.IsZero() {
		q.Set("st", start.UTC().Format(time.RFC3339))
	}
	q.Set("se", expiry.UTC().Format(time.RFC3339))
	for i, k := range []string{"spk", "srk", "epk", "erk"} {
		if rng[i] != "" {
			q.Set(k, rng[i])
		}
	}
	toSign := strings.Join([]string{perms, q.Get("st"), q.Get("se"), "/table/" + server.DevAccountName + "/" + strings.ToLower(table),
		"", "", "", q.Get("sv"), rng[0], rng[1], rng[2], rng[3]}, "\n")
	q.Set("sig", hmacSign(key, toSign))
	return q.Encode()
}

func TestWireServiceSASValidityAndRange(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	srv := localtabletest.NewServer(t, localtabletest.WithClock(func() time.Time { return now }))
	tbl, err := srv.Account.CreateTable(ctx, "Ranged")
	if err != nil {
		t.Fatal(err)
	}
	for _, pk := range []string{"a", "b", "c", "d"} {
		for _, rk := range []string{"1", "2", "3"} {
			if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: pk, RowKey: rk}); err != nil {
				t.Fatal(err)
			}
		}
	}
	key := srv.Key()
	get := func(sas, path string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", srv.URL+"/"+path+"?"+sas, nil)
		req.Header.Set("Accept", "application/json;odata=nometadata")
		return send(t, req)
	}
	write := func(sas string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/Ranged?"+sas, strings.NewReader(`{"PartitionKey":"b","RowKey":"9"}`))
		return send(t, req)
	}
	hour := time.Hour
	var none [4]string

	valid := serviceSAS(key, "Ranged", "r", now.Add(-hour), now.Add(hour), none)
	resp, got := get(valid, "Ranged()")
	wantStatus(t, "valid SAS", resp, got, 200, "")
	resp, got = get(serviceSAS(key, "Ranged", "r", now.Add(-2*hour), now.Add(-hour), none), "Ranged()")
	wantStatus(t, "expired SAS", resp, got, 403, "AuthenticationFailed")
	resp, got = get(serviceSAS(key, "Ranged", "r", now.Add(hour), now.Add(2*hour), none), "Ranged()")
	wantStatus(t, "not-yet-valid SAS", resp, got, 403, "AuthenticationFailed")
	resp, got = get(serviceSAS(key, "Ranged", "r", time.Time{}, now.Add(hour), none), "Ranged()")
	wantStatus(t, "SAS without start", resp, got, 200, "")
	resp, got = get(serviceSAS([]byte("other key"), "Ranged", "r", now.Add(-hour), now.Add(hour), none), "Ranged()")
	wantStatus(t, "SAS with a wrong key", resp, got, 403, "AuthenticationFailed")
	resp, got = get(strings.Replace(valid, "sp=r", "sp=raud", 1), "Ranged()")
	wantStatus(t, "SAS with changed permissions", resp, got, 403, "AuthenticationFailed")
	resp, got = write(valid)
	wantStatus(t, "sp=r insert", resp, got, 403, "AuthorizationPermissionMismatch")
	req, _ := http.NewRequest("DELETE", srv.URL+"/Ranged(PartitionKey='a',RowKey='1')?"+valid, nil)
	req.Header.Set("If-Match", "*")
	resp, got = send(t, req)
	wantStatus(t, "sp=r delete", resp, got, 403, "AuthorizationPermissionMismatch")
	resp, got = get(valid, "Tables")
	wantStatus(t, "service SAS lists tables", resp, got, 403, "AuthorizationFailure")
	resp, got = write(serviceSAS(key, "Ranged", "a", now.Add(-hour), now.Add(hour), none))
	wantStatus(t, "sp=a insert", resp, got, 201, "")

	// A key range: queries see only the range, point reads and writes
	// outside it are refused.
	for _, c := range []struct {
		rng  [4]string
		want string
	}{
		{[4]string{"b", "", "c", ""}, "b1,b2,b3,b9,c1,c2,c3"},
		{[4]string{"b", "2", "c", "1"}, "b2,b3,b9,c1"},
		{[4]string{"c", "", "", ""}, "c1,c2,c3,d1,d2,d3"},
		{[4]string{"", "", "a", "2"}, "a1,a2"},
	} {
		sas := serviceSAS(key, "Ranged", "raud", now.Add(-hour), now.Add(hour), c.rng)
		for _, filter := range []string{"", "&$filter=" + url.QueryEscape("PartitionKey ge 'a'"), "&$filter=" + url.QueryEscape("RowKey ne '0'")} {
			resp, got := get(sas+filter+"&$top=2", "Ranged()")
			var keys []string
			for {
				var page struct{ Value []map[string]any }
				if resp.StatusCode != 200 || json.Unmarshal([]byte(got), &page) != nil {
					t.Fatalf("range %v: %d %s", c.rng, resp.StatusCode, got)
				}
				for _, e := range page.Value {
					keys = append(keys, e["PartitionKey"].(string)+e["RowKey"].(string))
				}
				npk := resp.Header.Get("x-ms-continuation-NextPartitionKey")
				if npk == "" {
					break
				}
				resp, got = get(sas+filter+"&$top=2&NextPartitionKey="+url.QueryEscape(npk)+"&NextRowKey="+url.QueryEscape(resp.Header.Get("x-ms-continuation-NextRowKey")), "Ranged()")
			}
			if strings.Join(keys, ",") != c.want {
				t.Errorf("range %v filter %q: %v, want %s", c.rng, filter, keys, c.want)
			}
		}
		first := strings.Split(c.want, ",")[0]
		resp, got := get(sas, "Ranged(PartitionKey='"+first[:1]+"',RowKey='"+first[1:]+"')")
		wantStatus(t, "get inside the range", resp, got, 200, "")
		out := "d3"
		if strings.HasPrefix(first, "c") {
			out = "a1"
		}
		resp, got = get(sas, "Ranged(PartitionKey='"+out[:1]+"',RowKey='"+out[1:]+"')")
		wantStatus(t, "get outside the range", resp, got, 403, "AuthorizationPermissionMismatch")
		req, _ := http.NewRequest("PUT", srv.URL+"/Ranged(PartitionKey='"+out[:1]+"',RowKey='"+out[1:]+"')?"+sas, strings.NewReader(`{}`))
		resp, got = send(t, req)
		wantStatus(t, "upsert outside the range", resp, got, 403, "AuthorizationPermissionMismatch")
	}
}

// accountSAS builds an account SAS query. From version 2020-12-06 the
// string to sign has a signedEncryptionScope line (empty here), as the
// newer SDKs and the Azure CLI sign it.
func accountSAS(key []byte, sv, perms, resourceTypes string, start, expiry time.Time) string {
	q := url.Values{}
	q.Set("sv", sv)
	q.Set("ss", "t")
	q.Set("srt", resourceTypes)
	q.Set("sp", perms)
	q.Set("st", start.UTC().Format(time.RFC3339))
	q.Set("se", expiry.UTC().Format(time.RFC3339))
	q.Set("spr", "https,http")
	toSign := strings.Join([]string{server.DevAccountName, perms, "t", resourceTypes, q.Get("st"), q.Get("se"), "", q.Get("spr"), sv}, "\n") + "\n"
	if sv >= "2020-12-06" {
		toSign += "\n"
	}
	q.Set("sig", hmacSign(key, toSign))
	return q.Encode()
}

func TestWireAccountSASVersions(t *testing.T) {
	srv := localtabletest.NewServer(t)
	if _, err := srv.Account.CreateTable(context.Background(), "acctsas"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, sv := range []string{"2019-02-02", "2020-10-02", "2020-12-06", "2025-01-05"} {
		sas := accountSAS(srv.Key(), sv, "rl", "sco", now.Add(-time.Hour), now.Add(time.Hour))
		req, _ := http.NewRequest("GET", srv.URL+"/Tables?"+sas, nil)
		resp, got := send(t, req)
		wantStatus(t, "account SAS sv="+sv, resp, got, 200, "")
		req, _ = http.NewRequest("POST", srv.URL+"/acctsas?"+sas, strings.NewReader(`{"PartitionKey":"p","RowKey":"r"}`))
		resp, got = send(t, req)
		wantStatus(t, "account SAS sv="+sv+" without a", resp, got, 403, "AuthorizationPermissionMismatch")
	}
}

// datedRequest signs a request with scheme (SharedKey or SharedKeyLite)
// after setting the given date headers (an empty value is left out).
func datedRequest(t *testing.T, key []byte, scheme, method, rawURL, xmsDate, date string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("x-ms-version", "2019-02-02") // unversioned Shared Key requests are refused first
	if xmsDate != "" {
		req.Header.Set("x-ms-date", xmsDate)
	}
	if date != "" {
		req.Header.Set("Date", date)
	}
	signed := xmsDate
	if signed == "" {
		signed = date
	}
	cr := "/" + server.DevAccountName + req.URL.EscapedPath()
	toSign := signed + "\n" + cr
	if scheme == "SharedKey" {
		toSign = method + "\n\n\n" + toSign
	}
	req.Header.Set("Authorization", scheme+" "+server.DevAccountName+":"+hmacSign(key, toSign))
	return req
}

// A Shared Key request dated (x-ms-date, else Date) more than 15 minutes
// from the server's clock, either way, is refused as the service refuses
// it; so is one with no date or a date that is not an HTTP date. SAS
// requests are governed by st and se instead.
func TestWireRequestDate(t *testing.T) {
	now := time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)
	srv := localtabletest.NewServer(t, localtabletest.WithClock(func() time.Time { return now }))
	if _, err := srv.Account.CreateTable(context.Background(), "dated"); err != nil {
		t.Fatal(err)
	}
	key := srv.Key()
	at := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	for _, scheme := range []string{"SharedKey", "SharedKeyLite"} {
		for _, c := range []struct {
			what, xmsDate, date string
			ok                  bool
			detail              string
		}{
			{"x-ms-date now", at(0), "", true, ""},
			{"x-ms-date 14m old", at(-14 * time.Minute), "", true, ""},
			{"x-ms-date 14m ahead", at(14 * time.Minute), "", true, ""},
			{"x-ms-date 16m old", at(-16 * time.Minute), "", false, "Request date header too old: '" + at(-16*time.Minute) + "'"},
			{"x-ms-date 16m ahead", at(16 * time.Minute), "", false, "Request date header too far in the future"},
			{"x-ms-date a day old", at(-24 * time.Hour), "", false, "Request date header too old"},
			{"Date now", "", at(0), true, ""},
			{"Date 16m old", "", at(-16 * time.Minute), false, "Request date header too old"},
			{"Date 16m ahead", "", at(16 * time.Minute), false, "too far in the future"},
			{"fresh x-ms-date wins over a stale Date", at(0), at(-time.Hour), true, ""},
			{"stale x-ms-date loses to a fresh Date", at(-time.Hour), at(0), false, "Request date header too old"},
			{"no date", "", "", false, "Request date header not specified"},
			{"x-ms-date not a date", "yesterday", "", false, "The Date header in the request is incorrect"},
			{"x-ms-date in ISO 8601", now.Format(time.RFC3339), "", false, "The Date header in the request is incorrect"},
		} {
			resp, got := send(t, datedRequest(t, key, scheme, "GET", srv.URL+"/dated()", c.xmsDate, c.date))
			if c.ok {
				wantStatus(t, scheme+" "+c.what, resp, got, 200, "")
				continue
			}
			wantStatus(t, scheme+" "+c.what, resp, got, 403, "AuthenticationFailed")
			if !strings.Contains(got, "Server failed to authenticate the request.") || !strings.Contains(got, c.detail) {
				t.Errorf("%s %s: message lacks %q: %s", scheme, c.what, c.detail, got)
			}
		}
	}
	// A SAS request carries no date, and a stale Date does not matter.
	sas := serviceSAS(key, "dated", "r", now.Add(-time.Hour), now.Add(time.Hour), [4]string{})
	req, _ := http.NewRequest("GET", srv.URL+"/dated()?"+sas, nil)
	resp, got := send(t, req)
	wantStatus(t, "SAS without a date", resp, got, 200, "")
	req, _ = http.NewRequest("GET", srv.URL+"/dated()?"+sas, nil)
	req.Header.Set("Date", at(-48*time.Hour))
	resp, got = send(t, req)
	wantStatus(t, "SAS with a stale Date", resp, got, 200, "")
	// Nothing is written by a stale request.
	req = datedRequest(t, key, "SharedKeyLite", "POST", srv.URL+"/Tables", at(-20*time.Minute), "")
	req.Body = io.NopCloser(strings.NewReader(`{"TableName":"stale"}`))
	resp, got = send(t, req)
	wantStatus(t, "stale create table", resp, got, 403, "AuthenticationFailed")
	if _, err := srv.Account.GetTable(context.Background(), "stale"); err == nil {
		t.Error("a stale request created a table")
	}
}

// Through aztables: a client whose clock is more than 15 minutes from the
// server's is refused; ClientOptions date requests by the server's clock.
func TestSDKRequestDate(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		offset time.Duration
		ok     bool
	}{{20 * time.Minute, false}, {-20 * time.Minute, false}, {10 * time.Minute, true}, {-10 * time.Minute, true}} {
		srv := localtabletest.NewServer(t, localtabletest.WithClock(func() time.Time { return time.Now().Add(c.offset) }))
		plain, err := aztables.NewServiceClientWithSharedKey(srv.URL, srv.Credential, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = plain.CreateTable(ctx, "skewed", nil)
		if c.ok {
			if err != nil {
				t.Errorf("server clock %v ahead: %v", c.offset, err)
			}
		} else {
			wantCode(t, err, 403, "AuthenticationFailed")
			if _, err := srv.Account.GetTable(ctx, "skewed"); err == nil {
				t.Errorf("server clock %v ahead: the refused request created the table", c.offset)
			}
		}
		if _, err := srv.Client.CreateTable(ctx, "clientdated", nil); err != nil {
			t.Errorf("server clock %v ahead, client dated by it: %v", c.offset, err)
		}
	}
}

// A SAS with a repeated parameter is refused (403 AuthorizationFailure),
// whichever parameter repeats, even with the same value; a SAS naming a
// stored access policy the table lacks is 403 AuthenticationFailed, and
// the message names the policy.
func TestWireSASDuplicatesAndMissingPolicy(t *testing.T) {
	srv := localtabletest.NewServer(t)
	if _, err := srv.Account.CreateTable(context.Background(), "dups"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	get := func(query string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", srv.URL+"/dups()?"+query, nil)
		return send(t, req)
	}
	valid := serviceSAS(srv.Key(), "dups", "r", now.Add(-time.Hour), now.Add(time.Hour), [4]string{"a", "", "z", ""})
	resp, got := get(valid)
	wantStatus(t, "valid SAS", resp, got, 200, "")
	q, _ := url.ParseQuery(valid)
	for k := range q {
		resp, got := get(valid + "&" + k + "=" + url.QueryEscape(q.Get(k)))
		wantStatus(t, "SAS with "+k+" twice", resp, got, 403, "AuthorizationFailure")
		if !strings.Contains(got, "'"+k+"' is given more than once") {
			t.Errorf("%s twice: %s", k, got)
		}
	}
	// Other parameters may repeat as before (the SAS is not at stake).
	resp, got = get(valid + "&timeout=30&timeout=30")
	wantStatus(t, "repeated timeout", resp, got, 200, "")

	// si naming no policy: signed correctly, refused by name.
	qs := url.Values{"sv": {"2019-02-02"}, "tn": {"dups"}, "si": {"nosuchpolicy"}, "sp": {"r"}, "se": {now.Add(time.Hour).UTC().Format(time.RFC3339)}}
	toSign := strings.Join([]string{"r", "", qs.Get("se"), "/table/" + server.DevAccountName + "/dups", "nosuchpolicy", "", "", "2019-02-02", "", "", "", ""}, "\n")
	qs.Set("sig", hmacSign(srv.Key(), toSign))
	resp, got = get(qs.Encode())
	wantStatus(t, "SAS naming a missing policy", resp, got, 403, "AuthenticationFailed")
	if !strings.Contains(got, "'nosuchpolicy'") {
		t.Errorf("the message does not name the policy: %s", got)
	}
}

// An account with a secondary key (Azurite's key2) accepts Shared Key
// requests and SAS signed with either key, and refuses a third.
func TestWireSecondaryKey(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	key1, key2 := []byte("the first key of acct2, 32 bytes"), []byte("the second key of acct2, 32 byte")
	// Over HTTPS: an account SAS allows HTTPS only.
	hs := httptest.NewTLSServer(server.New(nil, &server.Options{Accounts: []server.AccountConfig{{Name: "acct2", Key: key1, SecondaryKey: key2, Account: acct}}}))
	t.Cleanup(func() { hs.Close(); acct.Close() })
	client := func(key []byte) *aztables.ServiceClient {
		cred, err := aztables.NewSharedKeyCredential("acct2", base64.StdEncoding.EncodeToString(key))
		if err != nil {
			t.Fatal(err)
		}
		c, err := aztables.NewServiceClientWithSharedKey(hs.URL+"/acct2/", cred, &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hs.Client()}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if _, err := client(key1).CreateTable(ctx, "signedwithkey1", nil); err != nil {
		t.Fatalf("key1: %v", err)
	}
	if _, err := client(key2).CreateTable(ctx, "signedwithkey2", nil); err != nil {
		t.Fatalf("key2: %v", err)
	}
	var re *azcore.ResponseError
	if _, err := client([]byte("a third key that the account lacks")).CreateTable(ctx, "signedwithkey3", nil); !errors.As(err, &re) || re.ErrorCode != "AuthenticationFailed" {
		t.Fatalf("a third key: %v, want AuthenticationFailed", err)
	}
	sas, err := client(key2).GetAccountSASURL(aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
		aztables.AccountSASPermissions{Read: true, List: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", strings.Replace(sas, "/acct2/?", "/acct2/Tables?", 1), nil)
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("x-ms-version", "2019-02-02")
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if got := string(b); resp.StatusCode != 200 || !strings.Contains(got, "signedwithkey2") {
		t.Fatalf("SAS signed with key2: %d %s", resp.StatusCode, got)
	}
}
