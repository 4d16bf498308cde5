package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

func policyScopes(scopes ...string) policy.TokenRequestOptions {
	return policy.TokenRequestOptions{Scopes: scopes}
}

// httptestTLS serves a new account over HTTPS with opts.
func httptestTLS(t *testing.T, opts server.Options) *httptest.Server {
	t.Helper()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewTLSServer(server.New(acct, &opts))
	t.Cleanup(func() { hs.Close(); acct.Close() })
	return hs
}

const testTenant = "0e2a6d2c-9b7f-4f8e-a1c3-5d4b3a291807"

// jwt encodes a header and claims as an (unsigned) JWT with signature sig.
func jwt(header, claims any, sig string) string {
	enc := func(v any) string {
		if s, ok := v.(string); ok {
			return base64.RawURLEncoding.EncodeToString([]byte(s))
		}
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(header) + "." + enc(claims) + "." + base64.RawURLEncoding.EncodeToString([]byte(sig))
}

var rs256 = map[string]any{"typ": "JWT", "alg": "RS256", "kid": "k1"}

// tokenClaims returns the claims of a valid token at now, changed by edit.
func tokenClaims(now time.Time, edit func(map[string]any)) map[string]any {
	c := map[string]any{
		"aud": "https://storage.azure.com",
		"iss": "https://sts.windows.net/" + testTenant + "/",
		"tid": testTenant,
		"iat": now.Unix(),
		"nbf": now.Unix(),
		"exp": now.Add(time.Hour).Unix(),
		"oid": "5f1c0a4e-7d2b-4c9a-8e36-0b1d2f3a4c5e",
	}
	if edit != nil {
		edit(c)
	}
	return c
}

// Each claim a bearer token is checked on, raw: the token must be a
// well-formed JWT for Azure Storage from a Microsoft Entra ID issuer
// within its lifetime (5 minutes of skew). A bad token gets 403
// AuthenticationFailed before version 2020-12-06 and 401
// InvalidAuthenticationInfo with a bearer challenge from it; the message
// names the claim, and nothing is written.
func TestWireBearerClaims(t *testing.T) {
	now := time.Date(2032, 7, 8, 9, 10, 11, 0, time.UTC)
	srv := localtabletest.NewServer(t, localtabletest.WithTLS(), localtabletest.WithClock(func() time.Time { return now }))
	client := srv.HTTP.Client()
	n := 0
	try := func(token, version string) (*http.Response, string, string) {
		t.Helper()
		n++
		table := "bearer" + strconv.Itoa(n)
		req, _ := http.NewRequest("POST", srv.URL+"/Tables", strings.NewReader(`{"TableName":"`+table+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-ms-version", version)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b), table
	}
	created := func(table string) bool {
		_, err := srv.Account.GetTable(context.Background(), table)
		return err == nil
	}
	claims := func(edit func(map[string]any)) string { return jwt(rs256, tokenClaims(now, edit), "sig") }
	set := func(k string, v any) func(map[string]any) { return func(c map[string]any) { c[k] = v } }
	del := func(k string) func(map[string]any) { return func(c map[string]any) { delete(c, k) } }

	for _, c := range []struct {
		what, token string
	}{
		{"a token of the helper", ""},
		{"aud with a trailing slash", claims(set("aud", "https://storage.azure.com/"))},
		{"aud of the account's table endpoint", claims(set("aud", "https://devstoreaccount1.table.core.windows.net"))},
		{"aud of the account's table endpoint, slash", claims(set("aud", "https://devstoreaccount1.table.core.windows.net/"))},
		{"aud of a national cloud's table endpoint", claims(set("aud", "https://devstoreaccount1.table.core.chinacloudapi.cn"))},
		{"aud as Azure Storage's application ID", claims(set("aud", "e406a681-f3d4-42a8-90b6-c2b029497af1"))},
		{"aud as an array", claims(set("aud", []string{"https://example.com", "https://storage.azure.com"}))},
		{"v2.0 issuer", claims(set("iss", "https://login.microsoftonline.com/"+testTenant+"/v2.0"))},
		{"US Government v2.0 issuer", claims(set("iss", "https://login.microsoftonline.us/"+testTenant+"/v2.0"))},
		{"China v1.0 issuer", claims(set("iss", "https://sts.chinacloudapi.cn/"+testTenant+"/"))},
		{"China v2.0 issuer", claims(set("iss", "https://login.chinacloudapi.cn/"+testTenant+"/v2.0"))},
		{"Germany v1.0 issuer", claims(set("iss", "https://sts.microsoftonline.de/"+testTenant+"/"))},
		{"Germany v2.0 issuer", claims(set("iss", "https://login.microsoftonline.de/"+testTenant+"/v2.0"))},
		{"expired 4 minutes ago (skew)", claims(set("exp", now.Add(-4*time.Minute).Unix()))},
		{"valid from 4 minutes on (skew)", claims(set("nbf", now.Add(4*time.Minute).Unix()))},
		{"no nbf", claims(del("nbf"))},
		{"fractional exp", claims(set("exp", float64(now.Add(time.Hour).Unix())+0.5))},
	} {
		token := c.token
		if token == "" {
			tk, err := srv.TokenCredential().GetToken(context.Background(), policyScopes("https://storage.azure.com/.default"))
			if err != nil {
				t.Fatal(err)
			}
			token = tk.Token
		}
		for _, v := range []string{"2019-02-02", "2020-12-06"} {
			resp, got, table := try(token, v)
			wantStatus(t, c.what+" ("+v+")", resp, got, 201, "")
			if !created(table) {
				t.Errorf("%s: table not created", c.what)
			}
		}
	}

	for _, c := range []struct {
		what, token, detail string
	}{
		{"two parts", "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJ4In0", "three dot-separated parts"},
		{"four parts", claims(nil) + ".x", "three dot-separated parts"},
		{"header not base64url", "!!!." + strings.SplitN(claims(nil), ".", 2)[1], "header is not base64url"},
		{"padded base64", strings.Replace(claims(nil), ".", "==.", 1), "header is not base64url"},
		{"header not JSON", jwt("not json", tokenClaims(now, nil), "sig"), "header is not a JSON object"},
		{"claims not an object", jwt(rs256, "[1,2]", "sig"), "claims are not a JSON object"},
		{"claims not JSON", jwt(rs256, "{", "sig"), "claims are not a JSON object"},
		{"no alg", jwt(map[string]any{"typ": "JWT"}, tokenClaims(now, nil), "sig"), "no signing algorithm"},
		{"alg none", jwt(map[string]any{"typ": "JWT", "alg": "none"}, tokenClaims(now, nil), "sig"), "no signing algorithm"},
		{"no signature", strings.TrimSuffix(claims(nil), base64.RawURLEncoding.EncodeToString([]byte("sig"))), "signature is empty"},
		{"no exp", claims(del("exp")), "has no exp claim"},
		{"exp not a number", claims(set("exp", "tomorrow")), "exp claim is not a NumericDate"},
		{"expired 6 minutes ago", claims(set("exp", now.Add(-6*time.Minute).Unix())), "The token is expired"},
		{"valid from 6 minutes on", claims(set("nbf", now.Add(6*time.Minute).Unix())), "The token is not yet valid"},
		{"nbf not a number", claims(set("nbf", true)), "nbf claim is not a NumericDate"},
		{"no aud", claims(del("aud")), "Audience validation failed"},
		{"aud of another resource", claims(set("aud", "https://vault.azure.net")), "Audience validation failed"},
		{"aud of another account", claims(set("aud", "https://otheraccount.table.core.windows.net")), "Audience validation failed"},
		{"aud of the account's blob endpoint", claims(set("aud", "https://devstoreaccount1.blob.core.windows.net")), "Audience validation failed"},
		{"aud over http", claims(set("aud", "http://storage.azure.com")), "Audience validation failed"},
		{"aud not a string", claims(set("aud", 7)), "aud claim is not a string"},
		{"no iss", claims(del("iss")), "Issuer validation failed"},
		{"iss of another provider", claims(set("iss", "https://accounts.google.com")), "Issuer validation failed"},
		{"iss without a tenant ID", claims(set("iss", "https://sts.windows.net/contoso/")), "Issuer validation failed"},
		{"v2.0 iss without /v2.0", claims(set("iss", "https://login.microsoftonline.com/"+testTenant+"/")), "Issuer validation failed"},
		{"iss on a look-alike host", claims(set("iss", "https://sts.windows.net.example.com/"+testTenant+"/")), "Issuer validation failed"},
		{"iss not a string", claims(set("iss", 1)), "iss claim is not a string"},
	} {
		resp, got, table := try(c.token, "2019-02-02")
		wantStatus(t, c.what, resp, got, 403, "AuthenticationFailed")
		if resp.Header.Get("WWW-Authenticate") != "" {
			t.Errorf("%s: a challenge before version 2020-12-06", c.what)
		}
		if !strings.Contains(got, c.detail) {
			t.Errorf("%s: message lacks %q: %s", c.what, c.detail, got)
		}
		if created(table) {
			t.Errorf("%s: a refused token created a table", c.what)
		}
		resp, got, table = try(c.token, "2020-12-06")
		wantStatus(t, c.what+" (2020-12-06)", resp, got, 401, "InvalidAuthenticationInfo")
		if !strings.Contains(got, "Please refer to the information in the www-authenticate header.") || !strings.Contains(got, c.detail) {
			t.Errorf("%s (2020-12-06): message lacks %q: %s", c.what, c.detail, got)
		}
		wa := resp.Header.Get("WWW-Authenticate")
		if !strings.HasPrefix(wa, "Bearer authorization_uri=https://login.microsoftonline.com/") || !strings.HasSuffix(wa, "/oauth2/authorize resource_id=https://storage.azure.com") {
			t.Errorf("%s: WWW-Authenticate %q", c.what, wa)
		}
		if created(table) {
			t.Errorf("%s (2020-12-06): a refused token created a table", c.what)
		}
	}
	// The challenge names the token's tenant.
	resp, _, _ := try(claims(set("exp", now.Add(-time.Hour).Unix())), "2021-02-12")
	if wa := resp.Header.Get("WWW-Authenticate"); !strings.Contains(wa, "/"+testTenant+"/oauth2/authorize") {
		t.Errorf("challenge for an expired token: %q", wa)
	}
	// An anonymous request gets the challenge too from 2020-12-06.
	resp, got, table := try("", "2020-12-06")
	wantStatus(t, "anonymous (2020-12-06)", resp, got, 401, "NoAuthenticationInformation")
	if wa := resp.Header.Get("WWW-Authenticate"); !strings.Contains(wa, "resource_id=https://storage.azure.com") {
		t.Errorf("anonymous: WWW-Authenticate %q", wa)
	}
	if created(table) {
		t.Error("an anonymous request created a table")
	}
	resp, got, _ = try("", "2019-02-02")
	wantStatus(t, "anonymous (2019-02-02)", resp, got, 403, "AuthenticationFailed")
}

// A token that the server accepts over HTTPS is refused over HTTP, and by
// a server that does not accept tokens.
func TestWireBearerNeedsHTTPSAndOption(t *testing.T) {
	tls := localtabletest.NewServer(t, localtabletest.WithTLS())
	tk, err := tls.TokenCredential().GetToken(context.Background(), policyScopes("https://storage.azure.com/.default"))
	if err != nil {
		t.Fatal(err)
	}
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	plain := httptest.NewServer(server.New(acct, &server.Options{AcceptBearerTokens: true}))
	t.Cleanup(func() { plain.Close(); acct.Close() })
	req, _ := http.NewRequest("GET", plain.URL+"/devstoreaccount1/Tables", nil)
	req.Header.Set("Authorization", "Bearer "+tk.Token)
	req.Header.Set("x-ms-version", "2019-02-02") // unversioned authenticated requests are refused first
	resp, got := send(t, req)
	wantStatus(t, "valid token over HTTP", resp, got, 403, "AuthenticationFailed")
	if !strings.Contains(got, "not allowed with HTTP") {
		t.Errorf("message: %s", got)
	}
	off := httptestTLS(t, server.Options{})
	req, _ = http.NewRequest("GET", off.URL+"/devstoreaccount1/Tables", nil)
	req.Header.Set("Authorization", "Bearer "+tk.Token)
	req.Header.Set("x-ms-version", "2019-02-02") // unversioned authenticated requests are refused first
	resp, err = off.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Fatalf("valid token without AcceptBearerTokens: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}
