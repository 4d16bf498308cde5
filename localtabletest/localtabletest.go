// Package localtabletest starts a localtable server for a Go test in one
// line and hands back an aztables client connected to it:
//
//	srv := localtabletest.NewServer(t)
//	table := srv.Client.NewClient("orders")
//
// The server runs on an httptest server over a fresh in-memory account,
// and is closed with t.Cleanup. WithTLS serves HTTPS instead, with a
// certificate that ClientOptions trusts, and accepts bearer tokens, so
// that clients made with an azcore.TokenCredential work too:
// Server.TokenCredential hands out tokens the server accepts.
package localtabletest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// Server is a running test server.
type Server struct {
	// URL is the table endpoint, http://127.0.0.1:PORT/devstoreaccount1.
	URL string
	// SecondaryURL is the read-only secondary endpoint over the same data,
	// http://127.0.0.1:PORT/devstoreaccount1-secondary: reads work there,
	// writes fail with 403 InsufficientAccountPermissions, and it alone
	// answers ServiceClient.GetStatistics.
	SecondaryURL string
	// ConnectionString connects the SDKs (aztables.NewServiceClientFromConnectionString,
	// @azure/data-tables, .NET, Python) to the server's primary endpoint;
	// the SDKs that reach the secondary on their own derive it from there.
	ConnectionString string
	// SecondaryConnectionString connects the SDKs to the secondary
	// endpoint (see server.SecondaryConnectionString).
	SecondaryConnectionString string
	// Client is an aztables client authorized with the account's shared key.
	Client *aztables.ServiceClient
	// SecondaryClient is an aztables client of the secondary endpoint,
	// authorized with the account's shared key.
	SecondaryClient *aztables.ServiceClient
	// Credential is the account's shared key credential, for making more
	// clients or SAS URLs.
	Credential *aztables.SharedKeyCredential
	// Account is the served account, for direct inspection.
	Account *localtable.Account
	// HTTP is the underlying httptest server.
	HTTP *httptest.Server

	clock func() time.Time // WithClock's, or nil
}

// ClientOptions returns aztables client options for the server: with
// WithTLS, a transport that trusts the server's certificate; with
// WithClock, a policy that dates each request (x-ms-date) by the server's
// clock, so that the server, which refuses a Shared Key request dated more
// than 15 minutes from its clock, accepts it. Use them to make more
// clients, for example with a token credential:
//
//	c, err := aztables.NewServiceClient(srv.URL, srv.TokenCredential(), srv.ClientOptions())
func (s *Server) ClientOptions() *aztables.ClientOptions {
	o := &aztables.ClientOptions{}
	if s.HTTP.TLS != nil {
		o.Transport = s.HTTP.Client()
	}
	if s.clock != nil {
		o.PerCallPolicies = []policy.Policy{clockDate{s.clock}}
	}
	return o
}

// clockDate dates requests by a clock; aztables' Shared Key policy signs
// the x-ms-date it finds.
type clockDate struct{ now func() time.Time }

func (p clockDate) Do(req *policy.Request) (*http.Response, error) {
	req.Raw().Header.Set("x-ms-date", p.now().UTC().Format(http.TimeFormat))
	return req.Next()
}

// TenantID is the Microsoft Entra ID tenant that the tokens of
// Server.TokenCredential come from, unless the token request names one.
const TenantID = "4c6f6361-6c74-4162-8c65-746573740001"

// TokenLifetime is how long, by the server's clock, a token of
// Server.TokenCredential is valid.
const TokenLifetime = time.Hour

// TokenCredential returns an azcore.TokenCredential whose tokens the
// server accepts, as azidentity's credentials would hand them out: JWTs
// for the requested scope's resource (https://storage.azure.com for the
// Table service), issued by https://sts.windows.net/{TenantID}/ and valid
// for TokenLifetime from the server's clock (WithClock's, or the time
// now). They are not signed: the server checks a token's claims, not its
// signature. Clients send tokens only over HTTPS, so start the server
// WithTLS:
//
//	srv := localtabletest.NewServer(t, localtabletest.WithTLS())
//	c, err := aztables.NewServiceClient(srv.URL, srv.TokenCredential(), srv.ClientOptions())
//
// The credential is safe for concurrent use.
func (s *Server) TokenCredential() azcore.TokenCredential {
	return NewTokenCredential(s.clock)
}

// NewTokenCredential returns a credential like Server.TokenCredential's
// for a server whose clock is now (nil: time.Now), such as the localtable
// command serving HTTPS (--cert and --key), which accepts its tokens too.
func NewTokenCredential(now func() time.Time) azcore.TokenCredential {
	if now == nil {
		now = time.Now
	}
	return tokenCredential{now}
}

type tokenCredential struct{ now func() time.Time }

// GetToken mints a token for the first of opts.Scopes.
func (c tokenCredential) GetToken(_ context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	aud := server.StorageAudience
	if len(opts.Scopes) > 0 {
		aud = strings.TrimSuffix(opts.Scopes[0], "/.default")
	}
	tenant := TenantID
	if opts.TenantID != "" {
		tenant = opts.TenantID
	}
	now := c.now().UTC().Truncate(time.Second)
	var oid [16]byte
	rand.Read(oid[:])
	claims, err := json.Marshal(map[string]any{
		"aud": aud,
		"iss": "https://sts.windows.net/" + tenant + "/",
		"tid": tenant,
		"iat": now.Unix(),
		"nbf": now.Unix(),
		"exp": now.Add(TokenLifetime).Unix(),
		"oid": localtable.GUID(oid).String(),
		"sub": "localtabletest",
		"ver": "1.0",
	})
	if err != nil {
		return azcore.AccessToken{}, err
	}
	enc := base64.RawURLEncoding
	token := enc.EncodeToString([]byte(`{"typ":"JWT","alg":"RS256","kid":"localtabletest"}`)) + "." +
		enc.EncodeToString(claims) + "." + enc.EncodeToString([]byte("localtabletest: not signed"))
	// azcore refreshes a token by its ExpiresOn, in real time.
	return azcore.AccessToken{Token: token, ExpiresOn: time.Now().Add(TokenLifetime)}, nil
}

type config struct {
	clock       func() time.Time
	middleware  []func(http.Handler) http.Handler
	serverOpts  server.Options
	accountOpts localtable.Options
	tls         bool
}

// Option configures NewServer.
type Option func(*config)

// WithClock makes now the clock of the account (entity Timestamps) and of
// the server (request dates, SAS and token validity). The clients of
// Server.Client and Server.ClientOptions date their requests by it too.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.clock = now }
}

// WithMiddleware wraps the server's handler, for example to inject faults
// or latency. Middleware given first is outermost.
func WithMiddleware(mw func(http.Handler) http.Handler) Option {
	return func(c *config) { c.middleware = append(c.middleware, mw) }
}

// WithoutAuth turns authentication off.
func WithoutAuth() Option {
	return func(c *config) { c.serverOpts.DisableAuth = true }
}

// WithTLS serves HTTPS with a certificate for 127.0.0.1 that
// Server.ClientOptions (and Server.HTTP.Client) trust, and accepts bearer
// tokens, as the command does with --cert: well-formed JWTs for Azure
// Storage from a Microsoft Entra ID issuer within their lifetime, such as
// those of Server.TokenCredential (their signatures are not verified).
func WithTLS() Option {
	return func(c *config) {
		c.tls = true
		c.serverOpts.AcceptBearerTokens = true
	}
}

// WithAccountOptions sets the options the account is opened with (for
// example a storage engine).
func WithAccountOptions(opts localtable.Options) Option {
	return func(c *config) { c.accountOpts = opts }
}

// NewServer starts a server over a new account for the test and returns it
// ready to use; t.Cleanup closes the server and the account.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.clock != nil {
		c.accountOpts.Clock = c.clock
		c.serverOpts.Clock = c.clock
	}
	acct, err := localtable.Open(&c.accountOpts)
	if err != nil {
		t.Fatalf("localtabletest: opening account: %v", err)
	}
	var h http.Handler = server.New(acct, &c.serverOpts)
	for i := len(c.middleware) - 1; i >= 0; i-- {
		h = c.middleware[i](h)
	}
	hs := httptest.NewUnstartedServer(h)
	if c.tls {
		hs.StartTLS()
	} else {
		hs.Start()
	}
	s := &Server{
		URL:     hs.URL + "/" + server.DevAccountName,
		Account: acct,
		HTTP:    hs,
		clock:   c.clock,
	}
	s.SecondaryURL = server.SecondaryEndpoint(s.URL, server.DevAccountName)
	s.ConnectionString = server.ConnectionString(s.URL, server.DevAccountName, server.DevAccountKey)
	s.SecondaryConnectionString = server.SecondaryConnectionString(s.URL, server.DevAccountName, server.DevAccountKey)
	s.Credential, err = aztables.NewSharedKeyCredential(server.DevAccountName, server.DevAccountKey)
	if err == nil {
		s.Client, err = aztables.NewServiceClientWithSharedKey(s.URL, s.Credential, s.ClientOptions())
	}
	if err == nil {
		s.SecondaryClient, err = aztables.NewServiceClientWithSharedKey(s.SecondaryURL, s.Credential, s.ClientOptions())
	}
	if err != nil {
		hs.Close()
		acct.Close()
		t.Fatalf("localtabletest: making client: %v", err)
	}
	t.Cleanup(func() {
		hs.Close()
		acct.Close()
	})
	return s
}

// Key returns the account key, decoded.
func (s *Server) Key() []byte {
	k, _ := base64.StdEncoding.DecodeString(server.DevAccountKey)
	return k
}
