package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/odata"
)

// This file validates OAuth 2.0 bearer tokens, the Microsoft Entra ID
// access tokens that azidentity credentials send, as the storage emulators
// do: the token must be a well-formed JWT whose claims name Azure Storage
// (or this account's table endpoint) as the audience, a Microsoft Entra ID
// issuer, and a lifetime that covers the server's clock. Its signature is
// not verified: there is no tenant whose keys could verify it. A valid
// token may perform every Table service operation, as the service's
// table of RBAC actions lists one for each (Get/Set Table ACL and the
// service properties included); roles are not emulated.

const (
	// StorageAudience is the resource ID of Azure Storage, the audience of
	// the tokens that Azure SDK clients request for the Table service.
	StorageAudience = "https://storage.azure.com"

	// storageAppID is Azure Storage's application ID, which a token
	// requested for it by ID carries as its audience.
	storageAppID = "e406a681-f3d4-42a8-90b6-c2b029497af1"

	// TokenClockSkew is the leeway allowed on a token's nbf and exp
	// claims against the server's clock, the default of Microsoft's token
	// validation.
	TokenClockSkew = 5 * time.Minute

	// bearerChallengeVersion is the first x-ms-version for which the Table
	// service answers a bad or missing token with a 401 bearer challenge;
	// earlier versions get 403 AuthenticationFailed.
	bearerChallengeVersion = "2020-12-06"

	challengeMessage = "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."
)

// tableHostSuffixes are the table endpoints' host suffixes in the public
// and national clouds: https://<account><suffix> is an audience too.
var tableHostSuffixes = []string{
	".table.core.windows.net",
	".table.core.chinacloudapi.cn",
	".table.core.usgovcloudapi.net",
	".table.core.cloudapi.de",
}

// entraIssuers are the forms of a Microsoft Entra ID issuer: prefix, tenant
// ID, suffix. v1.0 tokens name the security token service (sts.windows.net
// serves the global cloud and US Government), v2.0 tokens the login host.
var entraIssuers = []struct{ prefix, suffix string }{
	{"https://sts.windows.net/", "/"},
	{"https://sts.chinacloudapi.cn/", "/"},
	{"https://sts.microsoftonline.de/", "/"},
	{"https://login.microsoftonline.com/", "/v2.0"},
	{"https://login.microsoftonline.us/", "/v2.0"},
	{"https://login.chinacloudapi.cn/", "/v2.0"},
	{"https://login.partner.microsoftonline.cn/", "/v2.0"},
	{"https://login.microsoftonline.de/", "/v2.0"},
}

// tokenClaims are the claims of a bearer token that the server checks.
type tokenClaims struct {
	aud      []string
	iss, tid string
	exp, nbf *time.Time
}

// verifyBearer validates a bearer token for req.
func verifyBearer(req *Request, token string) error {
	if !req.AcceptBearerTokens {
		return errAuthentication("Bearer tokens are accepted only when the server serves HTTPS (--cert and --key) and Options.AcceptBearerTokens is set.")
	}
	if req.HTTP.TLS == nil {
		// As the service: a token must never travel in clear text.
		return errAuthentication("Authentication scheme Bearer is not allowed with HTTP: bearer tokens are accepted only over HTTPS.")
	}
	c, err := parseToken(token)
	if err != nil {
		return errToken(req, "common", "The bearer token is not a well-formed JWT: "+err.Error())
	}
	tenant := c.tenant()
	now := req.Arrived.UTC()
	switch {
	case c.exp == nil:
		return errToken(req, tenant, "Lifetime validation failed: the token has no exp claim.")
	case now.After(c.exp.Add(TokenClockSkew)):
		return errToken(req, tenant, "Lifetime validation failed. The token is expired: its exp claim is "+c.exp.Format(time.RFC3339)+
			" and the server's time is "+now.Format(time.RFC3339)+".")
	case c.nbf != nil && now.Before(c.nbf.Add(-TokenClockSkew)):
		return errToken(req, tenant, "Lifetime validation failed. The token is not yet valid: its nbf claim is "+c.nbf.Format(time.RFC3339)+
			" and the server's time is "+now.Format(time.RFC3339)+".")
	}
	if !audienceOK(c.aud, req.Account) {
		return errToken(req, tenant, "Audience validation failed: the token's aud claim "+odata.Quote(strings.Join(c.aud, " "))+
			" is none of "+StorageAudience+", "+StorageAudience+"/ and https://"+req.Account+".table.core.windows.net.")
	}
	if _, ok := issuerTenant(c.iss); !ok {
		return errToken(req, tenant, "Issuer validation failed: the token's iss claim "+odata.Quote(c.iss)+
			" is not a Microsoft Entra ID issuer such as https://sts.windows.net/<tenant ID>/ or https://login.microsoftonline.com/<tenant ID>/v2.0.")
	}
	return nil
}

// bearerChallenge reports whether the request's version gets a bearer
// challenge (401 and WWW-Authenticate) rather than a 403.
func bearerChallenge(r *http.Request) bool {
	return r.Header.Get("X-Ms-Version") >= bearerChallengeVersion // versions are dates
}

// challenge sets the WWW-Authenticate header of a bearer challenge: where
// to get a token (the tenant's authority) and for which resource.
func challenge(h http.Header, tenant string) {
	h.Set("WWW-Authenticate", "Bearer authorization_uri=https://login.microsoftonline.com/"+tenant+"/oauth2/authorize resource_id="+StorageAudience)
}

// errToken is the service's answer to an invalid token: from version
// 2020-12-06, 401 InvalidAuthenticationInfo with a bearer challenge;
// before it, 403 AuthenticationFailed. msg says which claim failed.
func errToken(req *Request, tenant, msg string) *localtable.Error {
	if !bearerChallenge(req.HTTP) {
		return errAuthentication(msg)
	}
	challenge(req.Header, tenant)
	return newError(codeInvalidAuthenticationIn, challengeMessage+" "+msg)
}

// parseToken decodes a JWT (without verifying its signature): three
// base64url parts without padding (RFC 7515), a JSON object header naming a signing algorithm, and
// a JSON object of claims.
func parseToken(token string) (*tokenClaims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("a JWT has three dot-separated parts, header.claims.signature")
	}
	var raw [3][]byte
	for i, name := range []string{"header", "claims", "signature"} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return nil, errors.New("its " + name + " is not base64url")
		}
		if len(b) == 0 {
			return nil, errors.New("its " + name + " is empty")
		}
		raw[i] = b
	}
	var header map[string]any
	if err := json.Unmarshal(raw[0], &header); err != nil || header == nil {
		return nil, errors.New("its header is not a JSON object")
	}
	if alg, _ := header["alg"].(string); alg == "" || strings.EqualFold(alg, "none") {
		return nil, errors.New("its header names no signing algorithm (alg)")
	}
	d := json.NewDecoder(bytes.NewReader(raw[1]))
	d.UseNumber()
	var claims map[string]any
	if err := d.Decode(&claims); err != nil || claims == nil || d.More() {
		return nil, errors.New("its claims are not a JSON object")
	}
	c := &tokenClaims{}
	switch aud := claims["aud"].(type) {
	case nil:
	case string:
		c.aud = []string{aud}
	case []any:
		for _, a := range aud {
			s, ok := a.(string)
			if !ok {
				return nil, errors.New("its aud claim is not a string or an array of strings")
			}
			c.aud = append(c.aud, s)
		}
	default:
		return nil, errors.New("its aud claim is not a string or an array of strings")
	}
	var ok bool
	if v, has := claims["iss"]; has {
		if c.iss, ok = v.(string); !ok {
			return nil, errors.New("its iss claim is not a string")
		}
	}
	c.tid, _ = claims["tid"].(string)
	for _, f := range []struct {
		name string
		dst  **time.Time
	}{{"exp", &c.exp}, {"nbf", &c.nbf}} {
		v, has := claims[f.name]
		if !has {
			continue
		}
		t, ok := numericDate(v)
		if !ok {
			return nil, errors.New("its " + f.name + " claim is not a NumericDate (seconds since 1970)")
		}
		*f.dst = &t
	}
	return c, nil
}

// numericDate reads a JWT NumericDate: seconds since the Unix epoch.
func numericDate(v any) (time.Time, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), true
}

// tenant returns the token's tenant ID for a bearer challenge: its tid
// claim, or the tenant of its issuer, or "common".
func (c *tokenClaims) tenant() string {
	if isTenantID(c.tid) {
		return c.tid
	}
	if t, ok := issuerTenant(c.iss); ok {
		return t
	}
	return "common"
}

// issuerTenant returns the tenant ID of a Microsoft Entra ID issuer.
func issuerTenant(iss string) (string, bool) {
	for _, f := range entraIssuers {
		if rest, ok := strings.CutPrefix(iss, f.prefix); ok {
			if t, ok := strings.CutSuffix(rest, f.suffix); ok && isTenantID(t) {
				return t, true
			}
		}
	}
	return "", false
}

// isTenantID reports whether s is a tenant ID: a GUID in 8-4-4-4-12 form.
func isTenantID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := localtable.ParseGUID(s)
	return err == nil
}

// audienceOK reports whether one of the token's audiences is Azure
// Storage or the account's table endpoint.
func audienceOK(auds []string, account string) bool {
	for _, a := range auds {
		switch a {
		case StorageAudience, StorageAudience + "/", storageAppID:
			return true
		}
		host, ok := strings.CutPrefix(strings.TrimSuffix(a, "/"), "https://")
		if !ok {
			continue
		}
		for _, suffix := range tableHostSuffixes {
			if host == account+suffix {
				return true
			}
		}
	}
	return false
}
