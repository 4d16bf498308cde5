// Package localtabletest starts a localtable server for a Go test in one
// line and hands back an aztables client connected to it:
//
//	srv := localtabletest.NewServer(t)
//	table := srv.Client.NewClient("orders")
//
// The server runs on an httptest server over a fresh in-memory account,
// and is closed with t.Cleanup. WithTLS serves HTTPS instead, with a
// certificate that ClientOptions trusts, and accepts bearer tokens, so
// that clients made with an azcore.TokenCredential work too.
package localtabletest

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// Server is a running test server.
type Server struct {
	// URL is the table endpoint, http://127.0.0.1:PORT/devstoreaccount1.
	URL string
	// ConnectionString connects the SDKs (aztables.NewServiceClientFromConnectionString,
	// @azure/data-tables, .NET, Python) to the server.
	ConnectionString string
	// Client is an aztables client authorized with the account's shared key.
	Client *aztables.ServiceClient
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
//	c, err := aztables.NewServiceClient(srv.URL, cred, srv.ClientOptions())
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
// the server (request dates, SAS validity). The clients of
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
// tokens without verifying them, as the command does with --cert.
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
	s.ConnectionString = server.ConnectionString(s.URL, server.DevAccountName, server.DevAccountKey)
	s.Credential, err = aztables.NewSharedKeyCredential(server.DevAccountName, server.DevAccountKey)
	if err == nil {
		s.Client, err = aztables.NewServiceClientWithSharedKey(s.URL, s.Credential, s.ClientOptions())
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
