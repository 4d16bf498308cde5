// Package localtabletest runs a localtable server for a Go test in one
// line and hands back an aztables client connected to it:
//
//	srv := localtabletest.New(t)                // in-process: the clients go through no network
//	table := srv.Client.NewClient("orders")
//
//	srv := localtabletest.NewServer(t)          // on 127.0.0.1, for code that needs a URL
//
// Code that builds its own client from a connection string works with
// either: New's ConnectionString names a loopback port that serves the same
// server (see New).
//
// Both serve a fresh in-memory account, closed with t.Cleanup, with the
// service's wire behaviour, and hand back the same Server. On it a test
// can:
//
//   - inject faults shaped like the service's (Inject with a Rule: a
//     503 ServerBusy, a dropped connection, a timeout, a truncated body,
//     once, n times or with a seeded probability, before or after the
//     write is applied), and read every request in the log (Log);
//   - add latency per operation (WithLatency, SetLatency);
//   - shape query pages as the service may (WithPaging);
//   - move time (Clock.Advance) for Timestamps, SAS expiry, request dates
//     and the time-based quirks (WithDeleteTableDelay, WithThrottle);
//   - seed tables from Go values or JSONL (Seed, SeedJSONL), snapshot and
//     restore the account (Snapshot, Restore, Reset), and compare a table
//     with what it should hold (AssertTable, Dump);
//   - wait for a change instead of sleeping (WaitForChange): the account
//     keeps a change feed (DefaultFeedChanges), also served at
//     GET URL/$changes, which NewServer streams (New's in-process
//     Transport sends a body only when its handler ends).
//
// Nothing sleeps in real time unless the test asks for latency: the
// clients' retries do not wait (WithClientOptions changes that).
package localtabletest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net"
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
	// URL is the table endpoint without a trailing slash, for joining
	// paths (URL + "/Tables"): https://localtable.test/devstoreaccount1
	// for New, http://127.0.0.1:PORT/devstoreaccount1 for NewServer.
	URL string
	// ServiceURL is URL with the trailing slash that aztables' URL
	// helpers need (Client.GetTableSASURL appends the table name to the
	// endpoint as it is): give it to aztables constructors. Client,
	// SecondaryClient and ConnectionString use it.
	ServiceURL string
	// SecondaryURL is the read-only secondary endpoint over the same data,
	// URL + "-secondary": reads work there, writes fail with 403
	// InsufficientAccountPermissions, and it alone answers
	// ServiceClient.GetStatistics.
	SecondaryURL string
	// ConnectionString connects the SDKs (aztables.NewServiceClientFromConnectionString,
	// @azure/data-tables, .NET, Python) to the server's primary endpoint;
	// the SDKs that reach the secondary on their own derive it from
	// there. For NewServer its endpoint is ServiceURL. For New it is
	// http://127.0.0.1:PORT/devstoreaccount1/, a loopback port serving
	// the same server, so that code that makes its own client from a
	// connection string, with its own transport, reaches it; a client
	// given ClientOptions still goes in-process (see New).
	ConnectionString string
	// SecondaryConnectionString connects the SDKs to the secondary
	// endpoint (see server.SecondaryConnectionString).
	SecondaryConnectionString string
	// Client is an aztables client authorized with the account's shared
	// key, made with ClientOptions.
	Client *aztables.ServiceClient
	// SecondaryClient is an aztables client of the secondary endpoint,
	// authorized with the account's shared key.
	SecondaryClient *aztables.ServiceClient
	// Credential is the account's shared key credential, for making more
	// clients or SAS URLs.
	Credential *aztables.SharedKeyCredential
	// Account is the served account, for direct inspection.
	Account *localtable.Account
	// Clock is the server's time (see Clock).
	Clock *Clock
	// HTTP is the underlying httptest server of NewServer; nil for New.
	HTTP *httptest.Server
	// listener is New's loopback server, for ConnectionString.
	listener *httptest.Server
	// Transport is the in-process transport of New; nil for NewServer.
	Transport *Transport

	kit        *kit
	clientOpts []func(*aztables.ClientOptions)
	initial    *localtable.Checkpoint // the empty account, for Reset
	endStreams context.CancelFunc     // NewServer: ends the requests in flight
}

// New starts a server in-process over a new account for the test and
// returns it ready to use: requests go from the clients to the server's
// handler through Transport, with no network. Its URL is
// https://localtable.test/devstoreaccount1, reachable only through
// Transport (Server.ClientOptions carry it); the server sees the
// requests as HTTPS, so bearer tokens (Server.TokenCredential) and SAS
// restricted to HTTPS work. t.Cleanup closes the server and the account.
//
// Code under test that builds its own client from a connection string
// uses its own transport, which dials: no in-process transport can reach
// it, nor a fake host name, which no resolver knows. So New also serves
// the same server (faults, latency, log and clock included) over HTTP on a
// loopback port, and ConnectionString names that port: such code works
// unchanged. Transport serves that host too, in-process, so a client made
// from ConnectionString with ClientOptions still uses no network. Use
// NewServer when the code needs the server's URL itself (ServiceURL, URL)
// or HTTPS over a network (WithTLS).
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	return start(t, opts, true)
}

// NewServer starts a server over a new account for the test on an
// httptest server at 127.0.0.1 (HTTPS with WithTLS), for code that needs
// a URL or another process, and returns it ready to use; t.Cleanup closes
// the server and the account.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	return start(t, opts, false)
}

func start(t testing.TB, opts []Option, inProcess bool) *Server {
	t.Helper()
	c := config{seed: 1}
	for _, o := range opts {
		o(&c)
	}
	var clock *Clock
	switch {
	case c.manual:
		clock = newManualClock(c.start)
	case c.clock != nil:
		clock = newClock(c.clock)
	default:
		clock = newClock(time.Now)
	}
	c.accountOpts.Clock = clock.Now
	c.serverOpts.Clock = clock.Now
	if inProcess {
		c.serverOpts.AcceptBearerTokens = true
	}
	for _, edit := range c.serverEdits {
		edit(&c.serverOpts)
	}
	c.serverOpts.Clock = clock.Now
	if c.accountOpts.Feed == nil {
		// The change feed, for WaitForChange and GET $changes: in memory
		// it costs a copy of each change.
		c.accountOpts.Feed = &localtable.FeedOptions{KeepChanges: DefaultFeedChanges}
	}
	acct, err := localtable.Open(&c.accountOpts)
	if err != nil {
		t.Fatalf("localtabletest: opening account: %v", err)
	}
	s := &Server{Account: acct, Clock: clock, clientOpts: c.clientOpts}
	if s.initial, err = acct.Checkpoint(context.Background()); err != nil {
		acct.Close()
		t.Fatalf("localtabletest: %v", err)
	}
	k := newKit(server.New(acct, &c.serverOpts), clock, c.seed)
	k.quirks.deleteDelay = c.deleteDelay
	k.quirks.throttle = c.throttle
	s.kit = k
	for _, l := range c.latency {
		s.SetLatency(l.l, l.ops...)
	}
	var h http.Handler = k
	for i := len(c.middleware) - 1; i >= 0; i-- {
		h = c.middleware[i](h)
	}
	connURL := ""
	if inProcess {
		s.listener = httptest.NewUnstartedServer(h)
		base, endStreams := context.WithCancel(context.Background())
		s.listener.Config.BaseContext = func(net.Listener) context.Context { return base }
		s.endStreams = endStreams
		s.listener.Start()
		s.Transport = &Transport{h: h, host: FakeHost, alt: s.listener.Listener.Addr().String()}
		s.URL = "https://" + FakeHost + "/" + server.DevAccountName
		connURL = s.listener.URL + "/" + server.DevAccountName
	} else {
		s.HTTP = httptest.NewUnstartedServer(h)
		// A $changes stream lasts until its client goes: closing the
		// server ends it (its request's context) rather than waiting.
		base, endStreams := context.WithCancel(context.Background())
		s.HTTP.Config.BaseContext = func(net.Listener) context.Context { return base }
		s.endStreams = endStreams
		if c.tls {
			s.HTTP.StartTLS()
		} else {
			s.HTTP.Start()
		}
		s.URL = s.HTTP.URL + "/" + server.DevAccountName
	}
	s.ServiceURL = s.URL + "/"
	s.SecondaryURL = server.SecondaryEndpoint(s.URL, server.DevAccountName)
	if connURL == "" {
		connURL = s.URL
	}
	s.ConnectionString = server.ConnectionString(connURL+"/", server.DevAccountName, server.DevAccountKey)
	s.SecondaryConnectionString = server.ConnectionString(server.SecondaryEndpoint(connURL, server.DevAccountName)+"/", server.DevAccountName, server.DevAccountKey)
	stop := func() {
		close(k.closed)
		for _, hs := range []*httptest.Server{s.HTTP, s.listener} {
			if hs != nil {
				s.endStreams()
				hs.Close()
			}
		}
		s.initial.Close()
		acct.Close()
	}
	s.Credential, err = aztables.NewSharedKeyCredential(server.DevAccountName, server.DevAccountKey)
	if err == nil {
		s.Client, err = aztables.NewServiceClientWithSharedKey(s.ServiceURL, s.Credential, s.ClientOptions())
	}
	if err == nil {
		s.SecondaryClient, err = aztables.NewServiceClientWithSharedKey(s.SecondaryURL+"/", s.Credential, s.ClientOptions())
	}
	if err != nil {
		stop()
		t.Fatalf("localtabletest: making client: %v", err)
	}
	t.Cleanup(stop)
	return s
}

// ClientOptions returns aztables client options for the server: the
// in-process Transport (New) or a transport that trusts the server's
// certificate (WithTLS); retries that do not wait between attempts
// (Retry.RetryDelay 1 ns, MaxRetryDelay 1 ms; the SDK's default of three
// retries); and a policy
// that dates each request (x-ms-date) by the server's Clock, so that the
// server, which refuses a Shared Key request dated more than 15 minutes
// from its clock, accepts it whatever the test did to the Clock. Then
// WithClientOptions' edits apply. Use them to make more clients:
//
//	c, err := aztables.NewServiceClient(srv.ServiceURL, srv.TokenCredential(), srv.ClientOptions())
func (s *Server) ClientOptions() *aztables.ClientOptions {
	o := &aztables.ClientOptions{}
	// Retries at once. Not RetryDelay -1: azcore 1.20's overflow check
	// turns a zero delay into MaxRetryDelay (60 s).
	o.Retry.RetryDelay = time.Nanosecond
	o.Retry.MaxRetryDelay = time.Millisecond
	switch {
	case s.Transport != nil:
		o.Transport = s.Transport
	case s.HTTP.TLS != nil:
		o.Transport = s.HTTP.Client()
	}
	o.PerCallPolicies = []policy.Policy{clockDate{s.Clock.Now}}
	for _, edit := range s.clientOpts {
		edit(o)
	}
	return o
}

// TableURL returns the URL of a table, ServiceURL + name, for the
// aztables.NewClient constructors.
func (s *Server) TableURL(name string) string { return s.ServiceURL + name }

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
// for TokenLifetime from the server's Clock. They are not signed: the
// server checks a token's claims, not its signature. Clients send tokens
// only over HTTPS: use New, or NewServer WithTLS:
//
//	srv := localtabletest.New(t)
//	c, err := aztables.NewServiceClient(srv.ServiceURL, srv.TokenCredential(), srv.ClientOptions())
//
// The credential is safe for concurrent use.
func (s *Server) TokenCredential() azcore.TokenCredential {
	return NewTokenCredential(s.Clock.Now)
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

// Key returns the account key, decoded.
func (s *Server) Key() []byte {
	k, _ := base64.StdEncoding.DecodeString(server.DevAccountKey)
	return k
}
