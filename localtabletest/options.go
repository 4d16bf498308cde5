package localtabletest

import (
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

type config struct {
	clock       func() time.Time
	start       time.Time
	manual      bool
	middleware  []func(http.Handler) http.Handler
	serverOpts  server.Options
	serverEdits []func(*server.Options)
	accountOpts localtable.Options
	tls         bool
	clientOpts  []func(*aztables.ClientOptions)
	seed        uint64
	latency     []latencySetting
	deleteDelay time.Duration
	throttle    *Throttle
}

type latencySetting struct {
	l   Latency
	ops []Operation
}

// Option configures New and NewServer.
type Option func(*config)

// WithClock makes the server's Clock follow now instead of time.Now
// (Advance and Set shift it from there). It times entity Timestamps,
// request dates, SAS and token validity; the clients of Server.Client and
// Server.ClientOptions date their requests by it too.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.clock, c.manual = now, false }
}

// WithTime gives the server a manual Clock that starts at start and moves
// only when the test calls Clock.Advance or Clock.Set: every Timestamp,
// SAS check and quirk sees the same time until then, and delays wait for
// the test to move it.
func WithTime(start time.Time) Option {
	return func(c *config) { c.start, c.manual, c.clock = start, true, nil }
}

// WithMiddleware wraps the server's handler, outside the request log and
// fault rules, for example to watch raw traffic. Middleware given first
// is outermost.
func WithMiddleware(mw func(http.Handler) http.Handler) Option {
	return func(c *config) { c.middleware = append(c.middleware, mw) }
}

// WithoutAuth turns authentication off.
func WithoutAuth() Option {
	return func(c *config) { c.serverOpts.DisableAuth = true }
}

// WithTLS makes NewServer serve HTTPS with a certificate for 127.0.0.1
// that Server.ClientOptions (and Server.HTTP.Client) trust, and accept
// bearer tokens, as the command does with --cert: well-formed JWTs for
// Azure Storage from a Microsoft Entra ID issuer within their lifetime,
// such as those of Server.TokenCredential (their signatures are not
// verified). New always behaves so.
func WithTLS() Option {
	return func(c *config) {
		c.tls = true
		c.serverOpts.AcceptBearerTokens = true
	}
}

// WithAccountOptions sets the options the account is opened with (for
// example a storage engine); nil means the defaults. Their Clock is
// replaced by the server's.
func WithAccountOptions(opts *localtable.Options) Option {
	return func(c *config) {
		c.accountOpts = localtable.Options{}
		if opts != nil {
			c.accountOpts = *opts
		}
	}
}

// WithServerOptions edits the server's options before it starts, for
// what no other option covers. The Clock, and the account's name and key,
// are the harness's: leave them.
func WithServerOptions(edit func(*server.Options)) Option {
	return func(c *config) { c.serverEdits = append(c.serverEdits, edit) }
}

// WithClientOptions edits the options of the server's clients
// (Server.Client, Server.SecondaryClient and Server.ClientOptions) after
// the harness's defaults: retries that do not wait (Retry.RetryDelay
// 1 ns, MaxRetryDelay 1 ms; three retries, as the SDK), the in-process or TLS transport, and request
// dates by the server's Clock. Use it to choose the retry behaviour
// (o.Retry.MaxRetries = -1 for none), turn on SDK logging, or wrap the
// transport:
//
//	localtabletest.WithClientOptions(func(o *aztables.ClientOptions) {
//		o.Retry.MaxRetries = -1
//		o.Transport = myRecorder{next: o.Transport}
//	})
func WithClientOptions(edit func(*aztables.ClientOptions)) Option {
	return func(c *config) { c.clientOpts = append(c.clientOpts, edit) }
}

// WithSeed seeds the server's random source, which fault probabilities
// and latency distributions draw from. The default seed is 1: a test sees
// the same faults and delays on every run.
func WithSeed(seed uint64) Option {
	return func(c *config) { c.seed = seed }
}

// WithLatency delays the given operations (every operation if none is
// named) by delays drawn from l, before they are served. See
// Server.SetLatency.
func WithLatency(l Latency, ops ...Operation) Option {
	return func(c *config) { c.latency = append(c.latency, latencySetting{l, ops}) }
}

// Paging shapes query pages as the service may, so that a test proves
// its caller's paging loop. The zero Paging shapes nothing.
type Paging struct {
	// MaxPageSize caps the entities or tables of a page, below the
	// client's $top (the service's cap is 1000).
	MaxPageSize int
	// EmptyFirstPage answers the first page of every query with no
	// results and a continuation (NextPartitionKey alone for entities).
	EmptyFirstPage bool
	// PartitionBoundaries ends each page of an entity query with its
	// partition, with a continuation of NextPartitionKey and no
	// NextRowKey.
	PartitionBoundaries bool
	// ScanLimit bounds the entities one page reads, as the service's
	// five-second cut-off does: a filter that matches little yields short
	// and empty pages with continuations. 0 means the server's default.
	ScanLimit int
}

// WithPaging shapes the server's query pages (see Paging).
func WithPaging(p Paging) Option {
	return func(c *config) {
		c.serverOpts.MaxPageSize = p.MaxPageSize
		c.serverOpts.EmptyFirstPage = p.EmptyFirstPage
		c.serverOpts.PageAtPartitionBoundary = p.PartitionBoundaries
		c.serverOpts.QueryScanLimit = p.ScanLimit
	}
}

// WithDeleteTableDelay makes a deleted table "being deleted" for d of the
// server's Clock, as the service keeps one for 40 seconds or more: every
// operation naming it (creating it again, its entities, its ACL) is
// answered 409 TableBeingDeleted until then. Off by default. Advance the
// Clock rather than sleeping.
func WithDeleteTableDelay(d time.Duration) Option {
	return func(c *config) { c.deleteDelay = d }
}

// WithThrottle limits the request rate by the server's Clock (see
// Throttle).
func WithThrottle(t Throttle) Option {
	return func(c *config) { c.throttle = &t }
}
