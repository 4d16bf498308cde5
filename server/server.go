package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/batch"
	"github.com/localtable/localtable/internal/reqclass"
	"github.com/localtable/localtable/server/internal/auth"
	"github.com/localtable/localtable/server/internal/cors"
)

// DevAccountName is the name of the emulator's well-known account.
const DevAccountName = "devstoreaccount1"

// DevAccountKey is the base64 key of the emulator's well-known account,
// the same as Azurite's.
const DevAccountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

// MaxQueryPageBytes bounds a page of query results (by
// localtable.PayloadSize): a page of large entities ends early with a
// continuation, so a response never holds a thousand 1 MiB entities.
const MaxQueryPageBytes = 8 << 20

// DefaultMaxPageBytesInFlight is the MaxPageBytesInFlight of Options
// that set none: eight of the largest pages.
const DefaultMaxPageBytesInFlight = 8 * MaxQueryPageBytes

// DefaultQueryScanLimit is the QueryScanLimit of Options that set none.
const DefaultQueryScanLimit = 100000

// Body limits.
const (
	// MaxBatchBody is the largest $batch request body: 4 MiB, the
	// service's documented limit, enforced by package batch.
	MaxBatchBody = batch.MaxBodySize
	// MaxEntityBody is the largest body of a single-entity or table
	// request. An entity is at most 1 MiB of data; its JSON (base64,
	// escapes, annotations) may be larger, so this allows 4 MiB too.
	MaxEntityBody = 4 << 20
	// MaxXMLBody is the largest access-policy or service-properties body.
	MaxXMLBody = 1 << 20
)

// AccountConfig names an account the server serves, its key, and the
// localtable.Account holding its data.
type AccountConfig struct {
	Name string // the account name in URLs, e.g. "devstoreaccount1"
	Key  []byte // the account key (decoded from base64)
	// SecondaryKey, if not nil, is the account's second key (key2, as
	// Azurite's AZURITE_ACCOUNTS gives it): requests and SAS signed with
	// either key are accepted.
	SecondaryKey []byte
	Account      *localtable.Account // the data
}

// Options configure a Server. The zero Options (or nil) serve the account
// passed to New as devstoreaccount1 with its well-known key, with
// authentication on.
type Options struct {
	// AccountName and AccountKey name the account passed to New and its
	// key. Empty: DevAccountName and DevAccountKey.
	AccountName string
	AccountKey  []byte

	// Accounts are further accounts to serve, each with its own data.
	Accounts []AccountConfig

	// DisableAuth accepts every request without checking its credentials,
	// except a browser's: a request with an Origin header is 403
	// AuthorizationFailure unless a CORS rule of the account (Set Table
	// Service Properties) allows its origin and method, so that a page on
	// another site cannot use the server.
	DisableAuth bool

	// AcceptBearerTokens accepts requests authorized with
	// "Authorization: Bearer …" (Microsoft Entra ID tokens) that arrive
	// over HTTPS (r.TLS set) and whose claims are valid: a well-formed
	// JWT for Azure Storage (aud) from a Microsoft Entra ID issuer (iss),
	// within its lifetime (nbf, exp) by Clock. The token's signature is
	// not verified, as by Azurite's --oauth basic: anyone who can reach
	// the server can forge a token, so this is emulator-style token
	// acceptance for clients that insist on a token credential, to be set
	// only when asked for (the command's --oauth basic), never because
	// the server has a certificate. A bearer token over plain HTTP is 403
	// AuthenticationFailed either way.
	AcceptBearerTokens bool

	// QueryScanLimit bounds the entities one page of a query reads, as
	// the service bounds a page to 5 seconds of work: a page that reaches
	// it ends early, perhaps empty, with a continuation, which the SDKs'
	// pagers follow. 0 means DefaultQueryScanLimit; negative, no bound.
	QueryScanLimit int

	// MaxPageSize caps the entities (or tables) one page of a query
	// holds, below the client's $top: a test sets it low to prove that a
	// caller follows continuations. 0 means no cap (1000, or $top).
	MaxPageSize int

	// EmptyFirstPage answers the first page of every query (one sent
	// without a continuation) with no results and a continuation, as the
	// service may: "It is possible for a query to return no results but
	// to still return a continuation header." Entity queries continue at
	// the partition of the first result, with NextPartitionKey alone.
	EmptyFirstPage bool

	// PageAtPartitionBoundary ends each page of an entity query where its
	// partition ends, with a continuation naming the next partition in
	// NextPartitionKey and no NextRowKey, as the service may when a query
	// crosses the boundary between partition ranges.
	PageAtPartitionBoundary bool

	// MaxPageBytesInFlight bounds the memory that the pages of query
	// results being built or written hold, across requests: a page is
	// built whole before it is sent (its continuation, a header, is
	// known only at its end), and a client that reads it slowly, or not
	// at all, holds it until it is written or the connection's write
	// deadline cuts it. A page that would take the total over it ends
	// 503 ServerBusy, which the SDKs retry, unless it is the only page
	// in flight. 0 means DefaultMaxPageBytesInFlight; negative, no bound.
	MaxPageBytesInFlight int64

	// MaxConcurrentRequests caps the requests answered at once: one over
	// it is answered at once 503 ServerBusy, as the service answers a
	// client over its account's limits, which the SDKs' retry policies
	// retry. GET /-/health is not counted, nor a change feed's stream
	// once it has begun. 0 means no cap.
	MaxConcurrentRequests int

	// AcceptAnyVersion serves a request whose x-ms-version the server
	// does not know, instead of answering it 400 InvalidHeaderValue, as
	// Azurite's --skipApiVersionCheck does: with the newest known version
	// not after it (LatestVersion for a version from the future or a
	// value that is no date, the oldest for one before 2009-04-14). For
	// clients newer than the server.
	AcceptAnyVersion bool

	// Clock is the time source for Shared Key request dates, SAS and
	// bearer token validity, and response dates. nil means time.Now.
	Clock func() time.Time

	// RequestDateClock, if set, is what Shared Key request dates are
	// checked against (MaxRequestDateSkew) instead of Clock: the command's
	// test controls move Clock, while the SDKs date their requests by the
	// system's clock.
	RequestDateClock func() time.Time

	// TestControls, if set, serves localtable's test controls at
	// /ACCOUNT/$test (see TestControls); nil answers them 404
	// ResourceNotFound.
	TestControls TestControls

	// Logger receives request errors and recovered panics. nil means
	// slog.Default().
	Logger *slog.Logger
}

// Server is the Azure Table REST protocol over localtable accounts. It is
// an http.Handler, safe for concurrent use.
type Server struct {
	accounts map[string]*account
	opts     Options
	now      func() time.Time
	log      *slog.Logger
	slots    chan struct{} // the requests being answered, at most MaxConcurrentRequests; nil: no cap
	pages    byteBudget    // the bytes of query pages in flight (MaxPageBytesInFlight)
}

// account is one served account.
type account struct {
	name string
	key  []byte
	key2 []byte // the secondary key; nil: none
	data *localtable.Account

	// The service properties are stored in the account, with its data
	// (localtable.Account.ServiceProperties): they survive a restart and
	// servers over one shared engine share them. cors caches their CORS
	// rules, which every request consults (see corsRules).
	mu       sync.Mutex   // serializes loads of cors, and sets
	cors     cors.Config  // the CORS rules in force; loaded under mu
	loadedAt atomic.Int64 // when cors was loaded: monotonic()+1; 0: never
}

// propsTTL is how long a server uses the CORS rules it loaded from the
// account before it reads them again: another server over a shared
// engine, or a Go caller of the Account (SetServiceProperties, Restore),
// may have changed them. A set through this server is in force at once.
const propsTTL = time.Second

// monoStart is the origin of monotonic.
var monoStart = time.Now()

// monotonic returns the monotonic time, in nanoseconds since monoStart.
func monotonic() int64 { return int64(time.Since(monoStart)) }

// corsRules returns the account's CORS rules for a request: those loaded
// less than propsTTL ago, else the stored ones, read now. Until the first
// load ends, requests wait for it; later, one request reloads and the
// others use the rules in force meanwhile. If the read fails, the rules in
// force stay (none, at first) until the next attempt, propsTTL later.
func (a *account) corsRules(ctx context.Context, log *slog.Logger) *cors.Config {
	if a.data == nil { // a misconfigured account: its requests fail, and their answers must not panic again
		return &a.cors
	}
	at := a.loadedAt.Load()
	switch {
	case at != 0 && monotonic()-(at-1) < int64(propsTTL):
		return &a.cors
	case at == 0:
		a.mu.Lock()
	case !a.mu.TryLock():
		return &a.cors
	}
	defer a.mu.Unlock()
	if a.loadedAt.Load() != at { // loaded while this request waited
		return &a.cors
	}
	p, err := a.data.ServiceProperties(ctx)
	if err == nil {
		err = a.cors.Load(p)
	}
	if err != nil {
		log.Warn("localtable server: reading the service properties", "account", a.name, "err", err)
	}
	a.loadedAt.Store(monotonic() + 1)
	return &a.cors
}

// New returns a Server serving acct (see Options for its name and key)
// and opts.Accounts. It panics if acct is nil and opts names no account.
func New(acct *localtable.Account, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Server{accounts: make(map[string]*account), opts: o, now: o.Clock, log: o.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	switch s.pages.max = o.MaxPageBytesInFlight; {
	case s.pages.max == 0:
		s.pages.max = DefaultMaxPageBytesInFlight
	case s.pages.max < 0:
		s.pages.max = math.MaxInt64
	}
	if o.MaxConcurrentRequests > 0 {
		s.slots = make(chan struct{}, o.MaxConcurrentRequests)
	}
	if acct != nil {
		name, key := o.AccountName, o.AccountKey
		if name == "" {
			name = DevAccountName
		}
		if key == nil {
			key, _ = base64.StdEncoding.DecodeString(DevAccountKey)
		}
		s.accounts[name] = &account{name: name, key: key, data: acct}
	}
	for _, c := range o.Accounts {
		s.accounts[c.Name] = &account{name: c.Name, key: c.Key, key2: c.SecondaryKey, data: c.Account}
	}
	if len(s.accounts) == 0 {
		panic("server: New: no account to serve")
	}
	return s
}

// HealthPath is the readiness endpoint: GET answers 200 "ok".
const HealthPath = "/-/health"

// ServeHTTP answers one request of the Table REST protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := s.startRequest(w, r)
	h := w.Header()
	rc.setVersion(LatestVersion) // until route reads the request's version
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("localtable server: panic", "method", r.Method, "url", r.URL.String(), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !rc.wrote {
				rc.fail(errInternal("internal error"))
			}
		}
	}()
	if r.URL.EscapedPath() == HealthPath {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("ok\n"))
		return
	}
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
			rc.slot = true
			defer rc.releaseSlot()
		default:
			s.WriteError(w, r, http.StatusServiceUnavailable, errServerBusy())
			return
		}
	}
	s.route(rc)
}

// errServerBusy is the answer to a request over MaxConcurrentRequests.
func errServerBusy() *localtable.Error {
	return &localtable.Error{Code: codeServerBusy, Message: "The server is busy."}
}

// releaseSlot gives back the request's place under
// MaxConcurrentRequests, if it holds one: at its end, or when a change
// feed's stream begins.
func (rc *reqCtx) releaseSlot() {
	if rc.slot {
		rc.slot = false
		<-rc.s.slots
	}
}

// startRequest begins the answer to a request from a client: its
// context, with a new request id, and the headers every answer carries.
func (s *Server) startRequest(w http.ResponseWriter, r *http.Request) *reqCtx {
	rc := &reqCtx{s: s, w: w, r: r, id: newRequestID(), start: s.now(), outer: true}
	h := w.Header()
	setHeader(h, hdrRequestID, rc.id)
	setHeader(h, hdrDate, rc.start.UTC().Format(http.TimeFormat))
	h[hdrNoSniff] = valNoSniff
	h[hdrCacheControl] = valNoCache
	return rc
}

// reqCtx is the state of one request.
type reqCtx struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	id    string
	start time.Time
	wrote bool
	outer bool // the request itself, not one inside a batch: CORS applies
	slot  bool // holds a place under MaxConcurrentRequests (releaseSlot)

	version   string // the x-ms-version the request is served with
	acct      *account
	acctName  string // the account as addressed: name, or name-secondary
	secondary bool   // addressed at the read-only secondary endpoint
	// doubledSecondary: the path was /account-secondary/account/…, the
	// Python SDK's form (stripDoubledSecondary).
	doubledSecondary bool
	xmlAPI           bool // an XML operation (ACL, service properties, stats)
	// cls is the request's classification: its operation and what it
	// addresses.
	cls    reqclass.Request
	query  url.Values
	method string      // the verb, after X-HTTP-Method tunnelling
	grant  *auth.Grant // what the credentials allow; nil: everything
	// errPrefix begins the message of an error answered in JSON: "0:" for
	// a GET sent alone in a batch, as the service answers it.
	errPrefix string
}

// baseURL returns the account's URL as the client addressed it, such as
// http://127.0.0.1:10002/devstoreaccount1 (or …/devstoreaccount1-secondary).
func (rc *reqCtx) baseURL() string {
	scheme := "http"
	if rc.r.TLS != nil {
		scheme = "https"
	}
	name := rc.acctName
	if name == "" {
		name = rc.acct.name
	}
	return scheme + "://" + rc.r.Host + "/" + name
}

// writeHeader sends the status, once.
func (rc *reqCtx) writeHeader(status int) {
	rc.wrote = true
	rc.addCORSHeaders()
	rc.w.WriteHeader(status)
}

func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return localtable.GUID(b).String()
}

// limitBody bounds the request body to n bytes.
func (rc *reqCtx) limitBody(n int64) {
	rc.r.Body = http.MaxBytesReader(rc.w, rc.r.Body, n)
}

func hasToken(list, token string) bool {
	for _, f := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(f), token) {
			return true
		}
	}
	return false
}
