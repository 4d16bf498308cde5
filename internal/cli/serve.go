package cli

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/testkit"
	"github.com/localtable/localtable/server"
	"github.com/localtable/localtable/storage"
)

// accountFlags collects repeated --account name:base64key flags.
type accountFlags []server.AccountConfig

// String is the flag's default text: none.
func (a *accountFlags) String() string { return "" }

// Set adds one name:base64key account.
func (a *accountFlags) Set(v string) error {
	name, key, ok := strings.Cut(v, ":")
	if !ok || name == "" {
		return errors.New("want name:base64key")
	}
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return fmt.Errorf("key of %s is not base64: %v", name, err)
	}
	*a = append(*a, server.AccountConfig{Name: name, Key: k})
	return nil
}

func init() {
	register(&command{
		name:    "serve",
		args:    "[flags]",
		summary: "serve the Table REST API and the web explorer (the default command)",
		details: `
Serves the accounts' Table REST API at http://ADDR/ACCOUNT (and the read-only
secondary at http://ADDR/ACCOUNT-secondary), the web explorer at http://ADDR/,
and GET /-/health. Data is in memory unless --location names a directory,
where each account is a pebble store in DIR/ACCOUNT, or --etcd names an etcd
cluster, where each account's keys are under PREFIX/ACCOUNT/ and any number of
servers, on any machines, serve the same data consistently. --etcd needs the
build with etcd support:

  go install ` + EtcdCommand + `@latest

On start it prints a banner with the version, engine, data directory,
endpoints, authentication and each account's connection string. Each
request is logged at info (method, path, operation, table, status, error
code, duration, request id); request and response bodies at debug. SIGINT
or SIGTERM finish the requests in flight (for --shutdown-grace at most, then
their connections are closed) and close the stores; a second signal ends it
at once. Timeouts bound a request's headers, its body, its response and an
idle connection; --max-concurrent-requests and --max-page-bytes-in-flight
answer a request over them 503 ServerBusy, which the SDKs retry.

With --cert and --key it serves HTTPS; authentication stays what it is over
HTTP. --oauth basic also accepts bearer tokens (for clients that only take a
token credential) as Azurite's --oauth basic does: their claims are checked,
their signature is not, so anyone who can reach the server can forge one.

On a loopback address (the default) the API, the explorer and the admin
endpoints answer only requests whose Host is a loopback name (localhost,
*.localhost, 127.0.0.0/8, [::1]) or a name given with --allow-host, so that a
web site whose name resolves to 127.0.0.1 (DNS rebinding) cannot reach them;
--allow-host also turns the check on for other addresses.

The explorer asks for an account's key (a session cookie then holds the
login), unless --no-auth; devstoreaccount1 under the emulator's well-known
key opens in one click for a browser on this machine (loopback). While it serves, 'localtable backup --endpoint'
takes a consistent backup through it (GET /-/admin/backup, signed with the
account key): see 'localtable backup --help'.

With --feed each account keeps a change feed (the latest --feed-keep changes,
100000 by default; on disk it survives restarts), served at
GET /ACCOUNT/$changes as newline-delimited JSON, a localtable extension that no
Azure SDK calls: 'localtable watch --endpoint' reads it (see its help), with the
account key or an account SAS with r and resource types c and o; the
explorer's Changes tab shows a table's changes live.

It also takes the command line of Azurite's table service (azurite-table, and
azurite's): --tableHost and --tablePort (for --addr), --tableKeepAliveTimeout
(--idle-timeout), -l, -s/--silent, -L/--loose, -d/--debug FILE,
--skipApiVersionCheck, --inMemoryPersistence, --disableProductStyleUrl,
--disableTelemetry, and the environment variables AZURITE_ACCOUNTS
(name:key1[:key2];…) and AZURITE_SKIP_API_VERSION_CHECK=true. What cannot
mean what it means to Azurite is refused (--pwd: PFX) or named in the banner:
--location keeps localtable's layout, not Azurite's __azurite_db_table__.json;
without --location the data is in memory, not in the current directory; the
blob and queue flags are ignored.

With --test-controls a test suite in any language drives the server over
HTTP at /ACCOUNT/$test?comp=…, another localtable extension, signed with the
account key (Shared Key or Shared Key Lite; never a SAS): reset the account or
one table, save and restore named snapshots, inject faults (503 ServerBusy,
other service errors, delays, dropped connections; once, N times or with a
probability), add latency, set, advance or freeze the clock that stamps
entities and checks SAS and token expiry, and read or clear the request log.
See docs/test-controls.md, and the small clients in clients/js and
clients/python.`,
		examples: `
localtable                                        # in memory, Azurite's address and account
localtable serve --location ./data                # pebble on disk, one directory per account
localtable serve --etcd 10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379 --etcd-prefix orders/   # with etcd support
localtable --addr 127.0.0.1:0 --no-auth           # any free port, no credentials checked
localtable --account myacct:$(head -c32 /dev/urandom | base64) --log-format json --log-level debug
localtable --restore backup.ltbk                  # in memory, loaded from a backup
localtable --cert cert.pem --key key.pem          # HTTPS, account keys and SAS as over HTTP
localtable --cert cert.pem --key key.pem --oauth basic   # HTTPS, and bearer tokens (signature not checked)
localtable --max-page-size 2 --empty-first-page   # hostile paging, to prove clients' paging loops
localtable serve --location ./data --feed         # keep a change feed: 'localtable watch' follows it
localtable --tableHost 0.0.0.0 --tablePort 10002 --location /data   # Azurite's azurite-table command line
localtable serve --test-controls                  # faults, clock, snapshots and the request log over HTTP, for test suites`,
		run: runServe,
	})
}

// The defaults of serve's timeouts.
//
// DefaultWriteTimeout bounds a request from its headers read to its
// response written, so it must let a slow but honest client through: a
// 4 MiB page in 2 minutes needs 35 KiB/s (280 kbit/s), an 8 MiB page
// (server.MaxQueryPageBytes, the largest) 70 KiB/s; a 4 MiB batch
// body, read within it too, the same. A client slower than that is cut,
// and with it the memory its page holds.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 2 * time.Minute
	DefaultWriteTimeout      = 2 * time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultShutdownGrace     = 10 * time.Second
)

// DefaultMaxConcurrentRequests is serve's default cap on the requests
// answered at once (server.Options.MaxConcurrentRequests).
const DefaultMaxConcurrentRequests = 512

// serveConfig is what serve's flags say.
type serveConfig struct {
	addr, location, cert, keyFile string
	oauth                         string // "" or "basic"
	etcd, etcdPrefix              string
	etcdMaxRequestBytes           int
	accounts                      accountFlags
	indexes                       indexFlags  // --index: declared at start on each account
	expiries                      expiryFlags // --expiry: set at start on each account
	expiryInterval                time.Duration
	allowHosts                    hostFlags
	noAuth, noExplorer            bool
	restore                       string
	logLevel, logFormat           string
	testControls                  bool // --test-controls: serve /ACCOUNT/$test
	feed                          bool // --feed: each account keeps a change feed
	feedKeep                      int  // --feed-keep: the changes it keeps

	// Connection timeouts and the shutdown grace (see parseServe).
	readHeaderTimeout, readTimeout, writeTimeout, idleTimeout time.Duration
	shutdownGrace                                             time.Duration
	maxConcurrent                                             int   // --max-concurrent-requests
	maxPageBytes                                              int64 // --max-page-bytes-in-flight

	// Paging torture, for testing clients' paging loops.
	maxPageSize, queryScanLimit    int
	emptyFirstPage, partitionPages bool

	// azurite is what Azurite's flags say (azurite.go), and notes the
	// banner's lines on where they differ from Azurite.
	azurite azuriteConfig
	notes   []string
}

func runServe(ctx context.Context, e *env, c *command, args []string) error {
	cfg, err := parseServe(e, c, args)
	if err != nil {
		return err
	}
	console, err := newLogger(e.stderr, cfg.logLevel, cfg.logFormat)
	if err != nil {
		return usagef(c, "%v", err)
	}
	plan, err := planServe(c, cfg, e.engines, console)
	if err != nil {
		return err
	}
	log, access, closeLog, err := azuriteLoggers(console, &cfg.azurite)
	if err != nil {
		return err
	}
	defer closeLog()
	plan.opts.log, plan.accessLog = log, access
	accounts, engines, restored, err := openServed(ctx, plan)
	if err != nil {
		return err
	}
	defer closeServed(accounts, log)
	for _, a := range accounts {
		if err := declareIndexes(ctx, a.Account, a.Name, cfg.indexes, log); err != nil {
			return err
		}
		if err := setExpiries(ctx, a.Account, a.Name, cfg.expiries, log); err != nil {
			return err
		}
	}
	if plan.restore != "" && restored == nil {
		return fmt.Errorf("--restore %s: the backup's account is not served (add --account NAME:KEY)", plan.restore)
	}
	return serveHTTP(ctx, e, cfg, plan, accounts, engines, restored, log)
}

// parseServe reads serve's flags.
func parseServe(e *env, c *command, args []string) (*serveConfig, error) {
	var cfg serveConfig
	fs := serveFlags(c, &cfg)
	if _, err := c.parse(e, fs, args, 0, 0); err != nil {
		return nil, err
	}
	if cfg.azurite.version {
		fmt.Fprintln(e.stdout, versionString())
		return nil, errHelp
	}
	notes, err := applyAzurite(c, fs, &cfg, e.getenv)
	if err != nil {
		return nil, err
	}
	cfg.notes = notes
	return &cfg, nil
}

// serveFlags defines serve's flags, and Azurite's, on a new flag set.
func serveFlags(c *command, cfg *serveConfig) *flag.FlagSet {
	fs := c.flagSet()
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:10002", "listen address (loopback by default)")
	fs.StringVar(&cfg.location, "location", "", "directory for data on disk (pebble, one directory per account); empty: in memory")
	fs.StringVar(&cfg.etcd, "etcd", "", "data on an etcd cluster at these comma-separated `endpoints` (host:port or URLs), shared by every server given the same cluster and prefix; needs the build "+EtcdCommand)
	fs.StringVar(&cfg.etcdPrefix, "etcd-prefix", "localtable/", "with --etcd: the key `prefix`; each account's keys are under PREFIX + account + /")
	fs.IntVar(&cfg.etcdMaxRequestBytes, "etcd-max-request-bytes", 0, "with --etcd: the cluster's --max-request-bytes; 0: etcd's default (1.5 MiB), which refuses transactions over about 1.4 MiB; 6291456 lets 4 MiB transactions through")
	fs.Var(&cfg.accounts, "account", "account as name:base64key (repeatable); default devstoreaccount1 with the emulator key")
	fs.StringVar(&cfg.cert, "cert", "", "TLS certificate file: serve HTTPS (authentication is unchanged)")
	fs.StringVar(&cfg.oauth, "oauth", "", "with --cert: `basic` accepts bearer tokens (Microsoft Entra ID) as Azurite's --oauth basic does: claims checked, signature NOT checked, so anyone who can reach the server can forge one")
	fs.StringVar(&cfg.keyFile, "key", "", "TLS key file")
	fs.Var(&cfg.allowHosts, "allow-host", "also answer requests whose Host header is `NAME` (repeatable); on a loopback address (or with this flag) any other name but localhost, *.localhost, 127.0.0.0/8 and [::1] is refused, against DNS rebinding")
	fs.BoolVar(&cfg.noAuth, "no-auth", false, "accept requests (and open the explorer) without checking credentials; a browser's request only from an origin the account's CORS rules allow")
	fs.Var(&cfg.indexes, "index", "declare an index on `Table:Property[,Property…]` in each account at start (repeatable; a localtable extension): creates the table if need be, and the index, named after its properties joined by '_', unless the table has one on the same properties; see 'localtable index'")
	fs.Var(&cfg.expiries, "expiry", "set the expiry policy of `Table:Property` in each account at start (repeatable, one per table; a localtable extension): creates the table if need be; entities whose Property, an Edm.DateTime, is past are hidden at once and deleted by the sweeper; see 'localtable expiry'")
	fs.DurationVar(&cfg.expiryInterval, "expiry-interval", 0, "the time between two passes of the expiry sweeper, each deleting up to 1000 expired entities; 0: 1s; negative: no sweeper")
	fs.BoolVar(&cfg.noExplorer, "no-explorer", false, "do not serve the web explorer")
	fs.StringVar(&cfg.restore, "restore", "", "in memory only: load the backup `FILE` (localtable backup) into its account before serving")
	fs.IntVar(&cfg.maxPageSize, "max-page-size", 0, "paging torture: at most `N` entities (or tables) a page; 0: the service's 1000")
	fs.BoolVar(&cfg.emptyFirstPage, "empty-first-page", false, "paging torture: answer the first page of every query empty, with a continuation")
	fs.BoolVar(&cfg.partitionPages, "page-at-partition-boundary", false, "paging torture: end every page where its partition ends")
	fs.IntVar(&cfg.queryScanLimit, "query-scan-limit", 0, "entities one page may read before it ends early, perhaps empty (the service's 5-second cut-off); 0: 100000, negative: no bound")
	fs.BoolVar(&cfg.testControls, "test-controls", false, "serve test controls at /ACCOUNT/$test (a localtable extension, authorized with the account key): reset, snapshots, fault rules, latency, the clock, the request log; for test suites in any language (see docs/test-controls.md)")
	fs.BoolVar(&cfg.feed, "feed", false, "keep each account's change feed and serve it at GET /ACCOUNT/$changes (a localtable extension; 'localtable watch' reads it)")
	fs.IntVar(&cfg.feedKeep, "feed-keep", 0, "with --feed: keep at least the latest `N` changes; 0: 100000")
	fs.DurationVar(&cfg.readHeaderTimeout, "read-header-timeout", DefaultReadHeaderTimeout, "the longest a client may take to send a request's headers; 0: no limit")
	fs.DurationVar(&cfg.readTimeout, "read-timeout", DefaultReadTimeout, "the longest a client may take to send a whole request, headers and body (a 4 MiB batch); 0: no limit")
	fs.DurationVar(&cfg.writeTimeout, "write-timeout", DefaultWriteTimeout, "the longest a request may take from its headers read to its response written (a slow reader of a large page is cut then); the change feed is exempt; 0: no limit")
	fs.DurationVar(&cfg.idleTimeout, "idle-timeout", DefaultIdleTimeout, "the longest a keep-alive connection may wait idle for its next request; 0: no limit")
	fs.DurationVar(&cfg.shutdownGrace, "shutdown-grace", DefaultShutdownGrace, "on SIGINT or SIGTERM, the longest to wait for the requests in flight before closing their connections; 0: close them at once")
	fs.IntVar(&cfg.maxConcurrent, "max-concurrent-requests", DefaultMaxConcurrentRequests, "answer a request over `N` in flight at once 503 ServerBusy (which the SDKs retry); the change feed's streams and /-/health are not counted; 0: no cap")
	fs.Int64Var(&cfg.maxPageBytes, "max-page-bytes-in-flight", 0, "the bytes that the query pages being built or written may hold together (a client reading slowly holds its page): a page over it is answered 503 ServerBusy, unless it is alone; 0: 64 MiB, negative: no bound")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "debug, info, warn or error (debug logs request and response bodies)")
	fs.StringVar(&cfg.logFormat, "log-format", "text", "text or json")
	addAzuriteFlags(fs, cfg)
	return fs
}

// servePlan is what serve opens: each account's engine, of one kind.
type servePlan struct {
	kind     *engineKind
	opts     engineOpts
	accounts []server.AccountConfig   // without their Account yet
	restore  string                   // a backup to load into its account; "": none
	feed     *localtable.FeedOptions  // the accounts' change feed; nil: none
	expiry   localtable.ExpiryOptions // the accounts' expiry sweeper
	// accessLog logs each request (logRequests): the server's log, but
	// not on the console with --silent.
	accessLog *slog.Logger
	clock     *testkit.Clock // --test-controls: the accounts' and server's clock; nil: time.Now
}

// planServe checks serve's flags and decides the engine and the accounts.
// It does no I/O.
func planServe(c *command, cfg *serveConfig, engines engineRegistry, log *slog.Logger) (*servePlan, error) {
	if (cfg.cert == "") != (cfg.keyFile == "") {
		return nil, usagef(c, "--cert and --key go together")
	}
	switch cfg.oauth {
	case "":
	case "basic":
		if cfg.cert == "" {
			return nil, usagef(c, "--oauth basic needs HTTPS (--cert and --key): bearer tokens are refused over HTTP")
		}
	default:
		return nil, usagef(c, "--oauth %q: the only mode is basic", cfg.oauth)
	}
	if cfg.feedKeep != 0 && !cfg.feed {
		return nil, usagef(c, "--feed-keep goes with --feed")
	}
	if cfg.feedKeep < 0 {
		return nil, usagef(c, "--feed-keep %d: want a number of changes, 0 for the default", cfg.feedKeep)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read-header-timeout", cfg.readHeaderTimeout}, {"read-timeout", cfg.readTimeout}, {"write-timeout", cfg.writeTimeout}, {"idle-timeout", cfg.idleTimeout}, {"shutdown-grace", cfg.shutdownGrace}} {
		if d.v < 0 {
			return nil, usagef(c, "--%s %v: want a duration of 0 or more", d.name, d.v)
		}
	}
	if cfg.maxConcurrent < 0 {
		return nil, usagef(c, "--max-concurrent-requests %d: want a number of requests, 0 for no cap", cfg.maxConcurrent)
	}
	if cfg.restore != "" && cfg.location != "" {
		return nil, usagef(c, "--restore loads a backup into memory; for a data directory use 'localtable restore'")
	}
	p := &servePlan{
		opts:      engineOpts{location: cfg.location, etcdPrefix: cfg.etcdPrefix, etcdMaxRequestBytes: cfg.etcdMaxRequestBytes, log: log},
		restore:   cfg.restore,
		accessLog: log,
	}
	if cfg.feed {
		p.feed = &localtable.FeedOptions{KeepChanges: cfg.feedKeep}
	}
	p.expiry = localtable.ExpiryOptions{Interval: cfg.expiryInterval, OnError: func(err error) {
		log.Warn("the expiry sweeper's pass failed", "err", err)
	}}
	if cfg.testControls {
		p.clock = testkit.NewClock(time.Now)
	}
	if cfg.etcd != "" {
		if cfg.location != "" || cfg.restore != "" {
			return nil, usagef(c, "--etcd keeps the data on an etcd cluster: it excludes --location and --restore")
		}
		if cfg.testControls {
			return nil, usagef(c, "--test-controls reset and restore the data: not with --etcd, whose data other servers share")
		}
		p.opts.etcdFlag = cfg.etcd
		p.opts.etcd = []string{}
	}
	p.kind = engines.choose(&p.opts)
	if p.kind.unavailable != nil {
		return nil, p.kind.unavailable
	}
	if cfg.etcd != "" {
		if p.opts.etcd = splitEndpoints(cfg.etcd); len(p.opts.etcd) == 0 {
			return nil, usagef(c, "--etcd %q names no endpoint", cfg.etcd)
		}
	}
	p.accounts = cfg.accounts
	if len(p.accounts) == 0 {
		k, _ := base64.StdEncoding.DecodeString(server.DevAccountKey)
		p.accounts = []server.AccountConfig{{Name: server.DevAccountName, Key: k}}
	}
	return p, nil
}

// splitEndpoints reads a comma-separated list of endpoints.
func splitEndpoints(list string) []string {
	var out []string
	for _, ep := range strings.Split(list, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			out = append(out, ep)
		}
	}
	return out
}

// servedEngine is a served account's engine and its kind.
type servedEngine struct {
	eng  storage.Engine
	kind *engineKind
}

// openServed opens the plan's accounts, each on its engine, loading the
// backup into its account. On error it closes what it opened.
func openServed(ctx context.Context, p *servePlan) ([]server.AccountConfig, map[string]servedEngine, *archiveHeader, error) {
	if err := errLocationIsStore(p.opts.location); err != nil {
		return nil, nil, nil, err // an account directory would be made inside the store
	}
	accounts := slices.Clone(p.accounts)
	engines := make(map[string]servedEngine, len(accounts))
	var restored *archiveHeader
	for i := range accounts {
		name := accounts[i].Name
		eng, err := p.kind.open(ctx, &p.opts, name)
		err = servedInUse(err)
		if err == nil && p.restore != "" && (restored == nil || restored.Account == name) {
			h, rerr := restoreFileInto(p.restore, eng, name)
			if rerr == nil {
				restored = &h
			} else if !errors.Is(rerr, errOtherAccount) {
				err = rerr
			}
		}
		var acct *localtable.Account
		if err == nil {
			opts := &localtable.Options{Engine: eng, Feed: p.feed, Expiry: &p.expiry}
			if p.clock != nil {
				opts.Clock = p.clock.Now
			}
			acct, err = localtable.Open(opts)
		} else if eng != nil {
			eng.Close()
		}
		if err != nil {
			for _, a := range accounts[:i] {
				a.Account.Close()
			}
			return nil, nil, nil, fmt.Errorf("opening account %s: %w", name, err)
		}
		accounts[i].Account = acct
		engines[name] = servedEngine{eng: eng, kind: p.kind}
	}
	return accounts, engines, restored, nil
}

// closeServed closes the served accounts, logging what fails.
func closeServed(accounts []server.AccountConfig, log *slog.Logger) {
	for _, a := range accounts {
		if err := a.Account.Close(); err != nil {
			log.Error("closing account", "account", a.Name, "err", err)
		}
	}
}

// serveHTTP serves the accounts until ctx is done or a signal comes, then
// finishes the requests in flight.
func serveHTTP(ctx context.Context, e *env, cfg *serveConfig, p *servePlan, accounts []server.AccountConfig, engines map[string]servedEngine, restored *archiveHeader, log *slog.Logger) error {
	var kit *testkit.Kit
	if p.clock != nil {
		kit = testkit.New(nil, p.clock, 1)
		defer kit.Close()
		for _, a := range accounts {
			if err := kit.Track(ctx, a.Account); err != nil {
				return fmt.Errorf("--test-controls: account %s: %w", a.Name, err)
			}
			defer kit.Untrack(a.Account)
		}
	}
	srvOpts := &server.Options{
		Accounts:                accounts,
		DisableAuth:             cfg.noAuth,
		AcceptBearerTokens:      cfg.oauth == "basic",
		Logger:                  log,
		MaxPageSize:             cfg.maxPageSize,
		EmptyFirstPage:          cfg.emptyFirstPage,
		PageAtPartitionBoundary: cfg.partitionPages,
		QueryScanLimit:          cfg.queryScanLimit,
		MaxConcurrentRequests:   cfg.maxConcurrent,
		MaxPageBytesInFlight:    cfg.maxPageBytes,
		AcceptAnyVersion:        cfg.azurite.skipAPIVersion,
	}
	if kit != nil {
		srvOpts.Clock = p.clock.Now
		srvOpts.RequestDateClock = time.Now // the SDKs date requests by the system's clock
		srvOpts.TestControls = kit
	}
	srv := server.New(nil, srvOpts)
	tlsConfig, err := loadTLS(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	host := dialAddr(ln.Addr())
	loopback := isLoopback(ln.Addr())
	if cfg.oauth != "" && !loopback {
		log.Warn("--oauth basic on a non-loopback address: anyone who can reach it can forge a bearer token (signatures are not checked)", "addr", ln.Addr().String())
	}
	h := http.Handler(srv)
	if kit != nil {
		// The harness logs, delays and faults the API's requests, not
		// the readiness probe.
		kit.SetServer(srv)
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == server.HealthPath {
				srv.ServeHTTP(w, r)
				return
			}
			kit.ServeHTTP(w, r)
		})
	}
	h = mountTools(h, &toolsConfig{accounts: accounts, engines: engines, noAuth: cfg.noAuth, explorer: !cfg.noExplorer, log: log})
	if loopback || len(cfg.allowHosts) > 0 {
		h = checkHost(h, cfg.allowHosts)
	}
	h = logRequests(p.accessLog, h)
	hs := &http.Server{
		Handler:           h,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: cfg.readHeaderTimeout,
		ReadTimeout:       cfg.readTimeout,
		WriteTimeout:      cfg.writeTimeout,
		IdleTimeout:       cfg.idleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if hs.IdleTimeout == 0 {
		hs.IdleTimeout = -1 // not ReadTimeout, as a zero would mean: no limit, as --idle-timeout 0 says
	}
	// The change feed's streams last until the client goes: shutting
	// down ends them (their requests' context), as Shutdown waits for
	// the requests in flight.
	base, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	hs.BaseContext = func(net.Listener) context.Context { return base }
	hs.RegisterOnShutdown(endStreams)
	printBanner(e.stdout, cfg, p, accounts, scheme, host, loopback, restored)
	return runUntilSignal(ctx, hs, ln, cfg.shutdownGrace, log)
}

// loadTLS loads --cert and --key: nil without them. It loads the pair
// now, so that a bad file fails the command before it reports ready, not
// on the first connection.
func loadTLS(cfg *serveConfig) (*tls.Config, error) {
	if cfg.cert == "" {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(cfg.cert, cfg.keyFile)
	if err != nil {
		return nil, fmt.Errorf("--cert/--key: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// runUntilSignal serves hs on ln until it fails, ctx is done, or SIGINT
// or SIGTERM comes; then it finishes the requests in flight for at most
// grace, unless a second signal comes, and closes the connections left.
func runUntilSignal(ctx context.Context, hs *http.Server, ln net.Listener, grace time.Duration, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() {
		if hs.TLSConfig != nil {
			errc <- hs.ServeTLS(ln, "", "")
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// A second signal now ends the process at once, as a second Ctrl-C
	// should, instead of waiting for the requests in flight.
	stop()
	log.Info("shutting down: finishing requests in flight (signal again to stop at once)", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// A client that does not read its response, or sends its
		// request slowly, is not a reason to fail: the requests still
		// in flight after the grace are cut.
		log.Warn("shutting down: requests still in flight after the grace: closing their connections", "grace", grace)
		return hs.Close()
	}
	return err
}

// newLogger returns the server's logger: text or JSON on w, at level.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %v", err)
	}
	o := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// printBanner writes what is served, and the connection strings, then the
// ready line.
func printBanner(w io.Writer, cfg *serveConfig, p *servePlan, accounts []server.AccountConfig, scheme, host string, loopback bool, restored *archiveHeader) {
	fmt.Fprintln(w, versionString())
	engine, data := p.kind.banner(&p.opts)
	if restored != nil {
		data += fmt.Sprintf(" (restored from %s: %d records, taken %s)", cfg.restore, restored.Records, restored.Created)
	}
	auth := "Shared Key, Shared Key Lite, SAS (account keys)"
	switch {
	case cfg.noAuth:
		auth = "none (--no-auth): every request is accepted"
	case cfg.oauth == "basic":
		auth += ", bearer tokens (--oauth basic: claims checked, signature NOT checked)"
	}
	fmt.Fprintf(w, "  engine:    %s\n  data:      %s\n  auth:      %s\n", engine, data, auth)
	if cfg.azurite.skipAPIVersion {
		fmt.Fprintf(w, "  versions:  any x-ms-version (--skipApiVersionCheck): an unknown one is served as the newest known before it\n")
	}
	if cfg.azurite.debug != "" {
		fmt.Fprintf(w, "  debug log: %s\n", cfg.azurite.debug)
	}
	notes := cfg.notes
	endpoint := scheme + "://" + host + "/ACCOUNT"
	if len(accounts) > 0 {
		endpoint = scheme + "://" + host + "/" + accounts[0].Name
	}
	if n := azuriteDataNote(cfg.location, endpoint); n != "" {
		notes = append(notes, n)
	}
	for _, n := range notes {
		if rest, ok := strings.CutPrefix(n, "WARNING: "); ok {
			fmt.Fprintf(w, "  WARNING:   %s\n", rest)
		} else {
			fmt.Fprintf(w, "  note:      %s\n", n)
		}
	}
	if !loopback && (cfg.noAuth || cfg.oauth != "") {
		fmt.Fprintf(w, "  WARNING:   listening on %s, not loopback: anyone who can reach it can read and write every account\n", cfg.addr)
	}
	if !cfg.noExplorer {
		fmt.Fprintf(w, "  explorer:  %s://%s/\n", scheme, host)
	}
	if p.feed != nil {
		keep := p.feed.KeepChanges
		if keep == 0 {
			keep = localtable.DefaultFeedChanges
		}
		fmt.Fprintf(w, "  feed:      %s://%s/ACCOUNT/$changes, keeping the latest %d changes (follow it with 'localtable watch')\n", scheme, host, keep)
	}
	for _, ix := range cfg.indexes {
		fmt.Fprintf(w, "  index:     %s on %s\n", ix.table, strings.Join(ix.props, ", "))
	}
	for _, x := range cfg.expiries {
		fmt.Fprintf(w, "  expiry:    %s on %s (Edm.DateTime values only; %s)\n", x.table, x.prop, sweeperNote(cfg.expiryInterval))
	}
	if cfg.testControls {
		fmt.Fprintf(w, "  controls:  %s://%s/ACCOUNT/%s (test controls, signed with the account key; docs/test-controls.md)\n", scheme, host, server.TestControlPath)
	}
	for _, a := range accounts {
		endpoint := scheme + "://" + host + "/" + a.Name
		fmt.Fprintf(w, "  account %s\n    primary:   %s\n    secondary: %s\n", a.Name, endpoint, server.SecondaryEndpoint(endpoint, a.Name))
		fmt.Fprintln(w, server.ConnectionString(endpoint, a.Name, base64.StdEncoding.EncodeToString(a.Key)))
	}
	fmt.Fprintf(w, "localtable: ready (%s://%s%s)\n", scheme, host, server.HealthPath)
}

// sweeperNote says, for the banner's expiry lines, what the expiry
// sweeper of --expiry-interval d does.
func sweeperNote(d time.Duration) string {
	switch {
	case d < 0:
		return "no sweeper: expired entities are hidden, not deleted"
	case d == 0:
		d = localtable.DefaultExpiryInterval
	}
	return "swept every " + d.String()
}

// isLoopback reports whether a listener's address is a loopback one
// (127.0.0.0/8, ::1): only this machine can connect.
func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// dialAddr returns the host:port clients dial for a listener's address:
// an unspecified host (0.0.0.0, or :: which Go listens on dual-stack)
// becomes 127.0.0.1, which a connection string can name.
func dialAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}
