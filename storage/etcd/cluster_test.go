package etcd_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/localtable/localtable/storage/etcd"
)

// The tests run against one real 3-member etcd cluster on loopback ports,
// started once for the test binary by TestMain. Each test works under key
// prefixes of its own, so tests share the cluster without seeing each
// other.

// Limits the test cluster is started with: the service's largest
// transaction fits in one etcd request (RecommendedMaxRequestBytes), and
// the conformance suite's large batches (up to 1000 writes) fit in one
// etcd transaction.
const (
	testMaxTxnOps       = 2048
	testMaxRequestBytes = etcd.RecommendedMaxRequestBytes
)

// member is one etcd server of the test cluster.
type member struct {
	name       string
	dir        string
	peer, cli  url.URL
	mu         sync.Mutex
	e          *embed.Etcd // nil while stopped
	initialCfg string      // the initial-cluster flag
	tweak      func(*embed.Config)
}

// cluster is the test cluster.
type cluster struct {
	dir     string
	members []*member
}

var (
	testCluster *cluster
	prefixSeq   atomic.Int64
)

// envEndpoints, when set, makes the test binary a child process of a
// test (see TestTwoProcesses): it uses the parent's cluster, at these
// comma-separated client URLs, instead of starting one.
const envEndpoints = "LOCALTABLE_ETCD_TEST_ENDPOINTS"

func TestMain(m *testing.M) {
	if eps := os.Getenv(envEndpoints); eps != "" {
		testCluster = &cluster{}
		for _, ep := range strings.Split(eps, ",") {
			u, err := url.Parse(ep)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			testCluster.members = append(testCluster.members, &member{cli: *u})
		}
		os.Exit(m.Run())
	}
	code := func() int {
		dir, err := os.MkdirTemp("", "localtable-etcd-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		c, err := startCluster(dir, 3, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting the etcd test cluster:", err)
			return 1
		}
		testCluster = c
		defer c.stop()
		return m.Run()
	}()
	os.Exit(code)
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startCluster starts an n-member cluster with data under dir; tweak, if
// not nil, changes each member's configuration.
func startCluster(dir string, n int, tweak func(*embed.Config)) (*cluster, error) {
	c := &cluster{dir: dir}
	var initial []string
	for i := range n {
		pp, err := freePort()
		if err != nil {
			return nil, err
		}
		cp, err := freePort()
		if err != nil {
			return nil, err
		}
		m := &member{
			name:  fmt.Sprintf("m%d", i),
			dir:   filepath.Join(dir, fmt.Sprintf("m%d", i)),
			peer:  url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", pp)},
			cli:   url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", cp)},
			tweak: tweak,
		}
		c.members = append(c.members, m)
		initial = append(initial, m.name+"="+m.peer.String())
	}
	errc := make(chan error, n)
	for _, m := range c.members {
		m.initialCfg = strings.Join(initial, ",")
		go func() { errc <- m.start() }()
	}
	var first error
	for range n {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		c.stop()
		return nil, first
	}
	return c, nil
}

func (m *member) config() *embed.Config {
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = m.dir
	cfg.ListenPeerUrls = []url.URL{m.peer}
	cfg.AdvertisePeerUrls = []url.URL{m.peer}
	cfg.ListenClientUrls = []url.URL{m.cli}
	cfg.AdvertiseClientUrls = []url.URL{m.cli}
	cfg.InitialCluster = m.initialCfg
	cfg.InitialClusterToken = "localtable-test"
	cfg.ClusterState = embed.ClusterStateFlagNew
	cfg.MaxTxnOps = testMaxTxnOps
	cfg.MaxRequestBytes = testMaxRequestBytes
	// The tests stop members with Close, never the machine: the page
	// cache keeps what was written, and skipping fsync spares a machine
	// shared with other work.
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(filepath.Dir(m.dir), m.name+".log")}
	if m.tweak != nil {
		m.tweak(cfg)
	}
	return cfg
}

// start starts the member (again) and waits until it has joined the
// cluster.
func (m *member) start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.e != nil {
		return nil
	}
	e, err := embed.StartEtcd(m.config())
	if err != nil {
		return fmt.Errorf("member %s: %w", m.name, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return fmt.Errorf("member %s: %w", m.name, err)
	case <-time.After(60 * time.Second):
		e.Close()
		return fmt.Errorf("member %s: not ready after 60s", m.name)
	}
	m.e = e
	return nil
}

// kill stops the member, as a crash of its process would, though more
// politely: Close stops the server and its listeners at once.
func (m *member) kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.e != nil {
		m.e.Close()
		m.e = nil
	}
}

func (c *cluster) stop() {
	for _, m := range c.members {
		m.kill()
	}
}

func (c *cluster) endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.cli.String())
	}
	return eps
}

// clientConfig returns a client configuration for the test cluster.
func clientConfig() clientv3.Config {
	return clientv3.Config{
		Endpoints:   testCluster.endpoints(),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	}
}

// newPrefix returns a key prefix no other test uses.
func newPrefix(name string) string {
	return fmt.Sprintf("test/%s/%d/", name, prefixSeq.Add(1))
}

// openEngine opens an engine under a fresh prefix with the test cluster's
// limits; opts may set other fields. The engine is closed with the test.
func openEngine(tb testing.TB, opts *etcd.Options) *etcd.Engine {
	tb.Helper()
	var o etcd.Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = newPrefix(strings.ReplaceAll(tb.Name(), "/", "_"))
	}
	if o.MaxTxnOps == 0 {
		o.MaxTxnOps = testMaxTxnOps
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = testMaxRequestBytes
	}
	e, err := etcd.Open(clientConfig(), &o)
	if err != nil {
		tb.Fatalf("etcd.Open: %v", err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// rawClient returns a client of the test cluster, closed with the test.
func rawClient(tb testing.TB) *clientv3.Client {
	tb.Helper()
	cfg := clientConfig()
	cfg.MaxCallSendMsgSize = testMaxRequestBytes + 1<<20
	cli, err := clientv3.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cli.Close() })
	return cli
}

func bg() context.Context { return context.Background() }
