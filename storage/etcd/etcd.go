package etcd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/localtable/localtable/storage"
)

// Defaults of Options.
const (
	// DefaultPrefix is the key prefix used when Options.Prefix is empty.
	DefaultPrefix = "localtable/"
	// DefaultMaxTxnOps is etcd's default --max-txn-ops.
	DefaultMaxTxnOps = 128
	// DefaultMaxRequestBytes is etcd's default --max-request-bytes (1.5 MiB).
	DefaultMaxRequestBytes = 3 << 19
	// DefaultPageSize is the number of keys a range read asks for at once.
	DefaultPageSize = 256
	// DefaultTimeout bounds each request (with its retries).
	DefaultTimeout = 15 * time.Second
	// RecommendedMaxRequestBytes is the --max-request-bytes that lets a
	// transaction of the service's largest size (4 MiB of entities) and
	// its keys through in one etcd request: 6 MiB.
	RecommendedMaxRequestBytes = 6 << 20
)

// pageBytes is the size of range responses that the iterator aims at: it
// halves its page when a page is larger and grows it back when smaller.
const pageBytes = 4 << 20

// Errors of this engine. Besides these, errors wrap storage.ErrUnavailable
// (the cluster could not serve the request; nothing was applied) or
// storage.ErrCommitUnknown (a commit may or may not have applied).
var (
	// ErrCompacted is returned by reads of a snapshot or an iterator whose
	// revision the cluster has compacted away: etcd keeps old revisions
	// only until compaction (--auto-compaction-mode/-retention, or an
	// explicit compact), so a snapshot, or an iterator, that lives longer
	// than the retention fails with it. Open a new snapshot and read
	// again.
	ErrCompacted = errors.New("storage/etcd: the snapshot's revision has been compacted")

	// ErrTooLarge is returned by a commit that exceeds the cluster's
	// limits on one transaction: Options.MaxTxnOps operations or
	// Options.MaxRequestBytes bytes (etcd's --max-txn-ops and
	// --max-request-bytes). A batch is one etcd transaction and is never
	// split, since that would break its atomicity. Nothing was applied.
	ErrTooLarge = errors.New("storage/etcd: batch exceeds the cluster's transaction limits")

	// ErrNoSpace is returned by a commit when the cluster's database has
	// reached its quota (--quota-backend-bytes) and etcd has raised its
	// NOSPACE alarm: the cluster refuses writes until an operator compacts,
	// defragments and disarms the alarm, or raises the quota.
	ErrNoSpace = errors.New("storage/etcd: the cluster's database quota is exhausted (--quota-backend-bytes)")
)

// Options configure an Engine. The zero value (or nil) suits a cluster
// started with etcd's defaults.
type Options struct {
	// Prefix is put before every key, so that several accounts or
	// applications can share one cluster, each under its own prefix.
	// Empty means DefaultPrefix. Two engines with the same prefix share
	// one keyspace; a prefix must not be a prefix of another engine's.
	Prefix string

	// MaxTxnOps is the cluster's --max-txn-ops: the most operations one
	// transaction holds. 0 means DefaultMaxTxnOps (etcd's default, 128).
	// A localtable transaction of 100 actions needs 100.
	MaxTxnOps int

	// MaxRequestBytes is the cluster's --max-request-bytes. 0 means
	// DefaultMaxRequestBytes (etcd's default, 1.5 MiB). Batches larger
	// than this fail with ErrTooLarge before they are sent; to let the
	// service's largest transactions through, start etcd with
	// --max-request-bytes=6291456 (RecommendedMaxRequestBytes) and set it
	// here.
	MaxRequestBytes int

	// PageSize is the most keys a range read asks for at once; 0 means
	// DefaultPageSize. Iterators read their range in pages of this many
	// keys (fewer when the values are large).
	PageSize int

	// Timeout bounds each request, including the retries of a read while
	// the cluster elects a leader or the client fails over to another
	// member. 0 means DefaultTimeout.
	Timeout time.Duration

	// Logger receives a debug record for each retried request. nil means
	// slog.Default().
	Logger *slog.Logger
}

// Engine is a storage.Engine over an etcd cluster. It is safe for
// concurrent use. It implements storage.VersionedEngine, and its reads and
// batches implement storage.ContextReader and storage.ContextCommitter.
type Engine struct {
	cli       *clientv3.Client
	ownClient bool
	prefix    []byte
	end       []byte // the end of the prefix's range
	opts      Options
	log       *slog.Logger

	life   context.Context // ends at Close
	stop   context.CancelFunc
	closed atomic.Bool
}

var (
	_ storage.Engine          = (*Engine)(nil)
	_ storage.VersionedEngine = (*Engine)(nil)
	_ storage.ContextReader   = (*Engine)(nil)
	_ storage.MultiGetter     = (*Engine)(nil)
)

// Keep-alives of Open's client (clientv3.Config.DialKeepAliveTime and
// DialKeepAliveTimeout), when its configuration sets none: a connection
// that died without a word (a member's machine lost, a network cut) is
// noticed within about 15 seconds and the client moves to another member,
// resuming its watches there (NotifyChanges), instead of waiting on it
// until the operating system gives up. etcd accepts pings every 5 seconds
// at most (--grpc-keepalive-min-time).
const (
	keepAliveTime    = 10 * time.Second
	keepAliveTimeout = 5 * time.Second
)

// Open connects to the cluster that cfg describes and returns an engine
// that owns the client (Close closes it). Unless cfg sets
// MaxCallSendMsgSize, Open sizes it to the options' MaxRequestBytes;
// unless it sets DialKeepAliveTime, Open pings each member after 10
// seconds without traffic and drops a connection whose ping goes 5
// seconds without an answer. It makes one read to check that the cluster
// answers.
func Open(cfg clientv3.Config, opts *Options) (*Engine, error) {
	o := withDefaults(opts)
	if cfg.MaxCallSendMsgSize == 0 {
		cfg.MaxCallSendMsgSize = o.MaxRequestBytes + 1<<20
	}
	if cfg.DialKeepAliveTime == 0 {
		cfg.DialKeepAliveTime = keepAliveTime
		if cfg.DialKeepAliveTimeout == 0 {
			cfg.DialKeepAliveTimeout = keepAliveTimeout
		}
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("storage/etcd: connect: %w", err)
	}
	e, err := newEngine(cli, true, o)
	if err != nil {
		cli.Close()
		return nil, err
	}
	return e, nil
}

// New returns an engine over an existing client, which the engine does
// not close. The client's MaxCallSendMsgSize must let the options'
// MaxRequestBytes through (clientv3's default is 2 MiB). New makes one
// read to check that the cluster answers.
func New(cli *clientv3.Client, opts *Options) (*Engine, error) {
	return newEngine(cli, false, withDefaults(opts))
}

func withDefaults(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.MaxTxnOps <= 0 {
		o.MaxTxnOps = DefaultMaxTxnOps
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

func newEngine(cli *clientv3.Client, own bool, o Options) (*Engine, error) {
	e := &Engine{
		cli:       cli,
		ownClient: own,
		prefix:    []byte(o.Prefix),
		end:       []byte(clientv3.GetPrefixRangeEnd(o.Prefix)),
		opts:      o,
		log:       o.Logger,
	}
	e.life, e.stop = context.WithCancel(context.Background())
	if _, err := e.currentRev(context.Background()); err != nil {
		e.stop()
		return nil, err
	}
	return e, nil
}

// Prefix returns the key prefix of the engine.
func (e *Engine) Prefix() string { return e.opts.Prefix }

// Client returns the engine's etcd client.
func (e *Engine) Client() *clientv3.Client { return e.cli }

// key returns the etcd key of an engine key.
func (e *Engine) key(k []byte) []byte {
	return append(append(make([]byte, 0, len(e.prefix)+len(k)), e.prefix...), k...)
}

// bound returns the etcd key of an iterator bound; nil is the prefix's own
// start or end.
func (e *Engine) bound(k []byte, upper bool) []byte {
	if k == nil {
		if upper {
			return e.end
		}
		return e.prefix
	}
	return e.key(k)
}

// opContext bounds one request: by ctx, by the engine's life and by
// Options.Timeout. Requests also require a leader, so that a member cut
// off from its cluster answers at once (ErrNoLeader, retried) rather than
// serving stale reads or hanging.
func (e *Engine) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	stop := context.AfterFunc(e.life, cancel)
	return clientv3.WithRequireLeader(ctx), func() { stop(); cancel() }
}

// errClass says what an error tells about a request.
type errClass int

const (
	permanent  errClass = iota // retrying will not help
	notApplied                 // transient, and the request was refused before it could apply
	transient                  // transient; a write may have applied
)

// classify sorts an error of the etcd client. Refusals before a write
// could be proposed (no leader, too many requests in flight, a dropped
// proposal, no connection at all) are notApplied; every other Unavailable
// (leader changed, server stopped, timeouts, broken connections) is
// transient, since a write may have been committed before its answer was
// lost.
func classify(err error) errClass {
	switch {
	case errors.Is(err, rpctypes.ErrNoLeader), errors.Is(err, rpctypes.ErrTooManyRequests):
		return notApplied
	}
	switch rpctypes.ErrorDesc(err) {
	case "raft proposal dropped", "there is no address available", "there is no connection available":
		return notApplied
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		if ee.Code() == codes.Unavailable {
			return transient
		}
		return permanent
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unavailable {
		return transient
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return transient
	}
	return permanent
}

// do runs a request, retrying it while the cluster is unavailable: any
// request on notApplied errors, reads also on transient ones (reads are
// safe to repeat), until opCtx ends.
func (e *Engine) do(ctx context.Context, what string, write bool, fn func(ctx context.Context) error) error {
	wait := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		c := classify(err)
		if c == permanent || (write && c == transient) || ctx.Err() != nil {
			return err
		}
		e.log.Debug("storage/etcd: retrying", "op", what, "attempt", attempt, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// wrap turns a failed request's error into the engine's: ctx is the
// caller's context, write says whether the request was a commit.
func (e *Engine) wrap(ctx context.Context, what string, write bool, err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%w (%s: %v)", ErrCompacted, what, err)
	case errors.Is(err, rpctypes.ErrNoSpace):
		return fmt.Errorf("%w (%s: %v)", ErrNoSpace, what, err)
	case errors.Is(err, rpctypes.ErrTooManyOps), errors.Is(err, rpctypes.ErrRequestTooLarge):
		return fmt.Errorf("%w (%s: %v; configure Options.MaxTxnOps and MaxRequestBytes as the cluster's --max-txn-ops and --max-request-bytes)", ErrTooLarge, what, err)
	}
	c := classify(err)
	var cause error
	switch {
	case e.life.Err() != nil:
		cause = storage.ErrClosed
	case ctx.Err() != nil:
		cause = ctx.Err()
	}
	if write && c != notApplied && (c == transient || cause != nil) {
		if cause != nil {
			return fmt.Errorf("storage/etcd: %s: %w (%w: %v)", what, storage.ErrCommitUnknown, cause, err)
		}
		return fmt.Errorf("storage/etcd: %s: %w (%v)", what, storage.ErrCommitUnknown, err)
	}
	switch {
	case cause != nil:
		return fmt.Errorf("storage/etcd: %s: %w (%v)", what, cause, err)
	case c != permanent:
		return fmt.Errorf("storage/etcd: %s: %w (%v)", what, storage.ErrUnavailable, err)
	}
	return fmt.Errorf("storage/etcd: %s: %w", what, err)
}

// currentRev returns the cluster's current revision, by a linearizable
// read of one key.
func (e *Engine) currentRev(ctx context.Context) (int64, error) {
	var rev int64
	err := e.read(ctx, "read revision", func(ctx context.Context) error {
		resp, err := e.cli.Get(ctx, string(e.prefix), clientv3.WithCountOnly())
		if err == nil {
			rev = resp.Header.Revision
		}
		return err
	})
	return rev, err
}

// read runs a read request with retries and wraps its error.
func (e *Engine) read(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	if e.closed.Load() {
		return storage.ErrClosed
	}
	octx, cancel := e.opContext(ctx)
	defer cancel()
	if err := e.do(octx, what, false, fn); err != nil {
		return e.wrap(ctx, what, false, err)
	}
	return nil
}

// getAt reads one key at rev (0: the latest).
func (e *Engine) getAt(ctx context.Context, key []byte, rev int64) ([]byte, int64, error) {
	var val []byte
	var mod int64
	var opts []clientv3.OpOption
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	err := e.read(ctx, "get", func(ctx context.Context) error {
		resp, err := e.cli.Get(ctx, string(e.key(key)), opts...)
		if err != nil {
			return err
		}
		val, mod = nil, 0
		if len(resp.Kvs) > 0 {
			val, mod = resp.Kvs[0].Value, resp.Kvs[0].ModRevision
			if val == nil {
				val = []byte{}
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if val == nil {
		return nil, 0, storage.ErrNotFound
	}
	return val, mod, nil
}

// Get implements storage.Reader: a linearizable read of the latest value.
func (e *Engine) Get(key []byte) ([]byte, io.Closer, error) {
	return e.GetContext(context.Background(), key)
}

// GetContext implements storage.ContextReader.
func (e *Engine) GetContext(ctx context.Context, key []byte) ([]byte, io.Closer, error) {
	v, _, err := e.getAt(ctx, key, 0)
	if err != nil {
		return nil, nil, err
	}
	return v, storage.NopCloser, nil
}

// GetVersion implements storage.VersionedEngine. The Version is the key's
// etcd ModRevision.
func (e *Engine) GetVersion(ctx context.Context, key []byte) ([]byte, storage.Version, io.Closer, error) {
	v, mod, err := e.getAt(ctx, key, 0)
	if err != nil {
		return nil, storage.NoVersion, nil, err
	}
	return v, storage.Version(mod), storage.NopCloser, nil
}

// GetVersions implements storage.MultiGetter: the keys are read in one
// etcd transaction of gets (in several, at the revision of the first, when
// they are more than Options.MaxTxnOps), so as of one moment.
func (e *Engine) GetVersions(ctx context.Context, keys [][]byte) ([][]byte, []storage.Version, io.Closer, error) {
	vals := make([][]byte, len(keys))
	vers := make([]storage.Version, len(keys))
	var rev int64
	for start := 0; start < len(keys); start += e.opts.MaxTxnOps {
		chunk := keys[start:min(len(keys), start+e.opts.MaxTxnOps)]
		ops := make([]clientv3.Op, len(chunk))
		for i, k := range chunk {
			if rev > 0 {
				ops[i] = clientv3.OpGet(string(e.key(k)), clientv3.WithRev(rev))
			} else {
				ops[i] = clientv3.OpGet(string(e.key(k)))
			}
		}
		err := e.read(ctx, "get", func(ctx context.Context) error {
			resp, err := e.cli.Txn(ctx).Then(ops...).Commit()
			if err != nil {
				return err
			}
			if rev == 0 {
				rev = resp.Header.Revision
			}
			for i, r := range resp.Responses {
				vals[start+i], vers[start+i] = nil, storage.NoVersion
				if kvs := r.GetResponseRange().GetKvs(); len(kvs) > 0 {
					v := kvs[0].Value
					if v == nil {
						v = []byte{}
					}
					vals[start+i], vers[start+i] = v, storage.Version(kvs[0].ModRevision)
				}
			}
			return nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if len(keys) == 0 {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
	}
	return vals, vers, storage.NopCloser, nil
}

// NewIter implements storage.Reader. The iterator reads the cluster as of
// this call (it pins the current revision) and reads its range in pages.
// It is subject to compaction as a snapshot is.
func (e *Engine) NewIter(opts *storage.IterOptions) (storage.Iterator, error) {
	return e.NewIterContext(context.Background(), opts)
}

// NewIterContext implements storage.ContextReader.
func (e *Engine) NewIterContext(ctx context.Context, opts *storage.IterOptions) (storage.Iterator, error) {
	rev, err := e.currentRev(ctx)
	if err != nil {
		return nil, err
	}
	return e.newIter(ctx, rev, opts), nil
}

// NewSnapshot implements storage.Engine: the snapshot reads the cluster at
// the revision current when it was taken. It holds nothing on the
// cluster, so it is cheap, but reads fail with ErrCompacted once the
// cluster compacts past that revision.
func (e *Engine) NewSnapshot() (storage.Snapshot, error) {
	return e.NewSnapshotContext(context.Background())
}

// NewSnapshotContext is NewSnapshot bounded by ctx.
func (e *Engine) NewSnapshotContext(ctx context.Context) (storage.Snapshot, error) {
	rev, err := e.currentRev(ctx)
	if err != nil {
		return nil, err
	}
	return &Snapshot{e: e, rev: rev}, nil
}

// Close implements storage.Engine. It ends requests in flight and, if Open
// made the client, closes it. A second Close returns storage.ErrClosed.
func (e *Engine) Close() error {
	if e.closed.Swap(true) {
		return storage.ErrClosed
	}
	e.stop()
	if e.ownClient {
		if err := e.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("storage/etcd: close: %w", err)
		}
	}
	return nil
}

// Snapshot is a storage.Snapshot of an Engine: reads at a fixed etcd
// revision. It implements storage.ContextReader.
type Snapshot struct {
	e      *Engine
	rev    int64
	closed atomic.Bool
}

var _ storage.ContextReader = (*Snapshot)(nil)

// Revision returns the etcd revision the snapshot reads at.
func (s *Snapshot) Revision() int64 { return s.rev }

// Get implements storage.Reader.
func (s *Snapshot) Get(key []byte) ([]byte, io.Closer, error) {
	return s.GetContext(context.Background(), key)
}

// GetContext implements storage.ContextReader.
func (s *Snapshot) GetContext(ctx context.Context, key []byte) ([]byte, io.Closer, error) {
	if s.closed.Load() {
		return nil, nil, storage.ErrClosed
	}
	v, _, err := s.e.getAt(ctx, key, s.rev)
	if err != nil {
		return nil, nil, err
	}
	return v, storage.NopCloser, nil
}

// NewIter implements storage.Reader.
func (s *Snapshot) NewIter(opts *storage.IterOptions) (storage.Iterator, error) {
	return s.NewIterContext(context.Background(), opts)
}

// NewIterContext implements storage.ContextReader.
func (s *Snapshot) NewIterContext(ctx context.Context, opts *storage.IterOptions) (storage.Iterator, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	if s.e.closed.Load() {
		return nil, storage.ErrClosed
	}
	return s.e.newIter(ctx, s.rev, opts), nil
}

// Close implements storage.Snapshot. A second Close returns
// storage.ErrClosed.
func (s *Snapshot) Close() error {
	if s.closed.Swap(true) {
		return storage.ErrClosed
	}
	return nil
}
