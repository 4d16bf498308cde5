package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable/server"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

func TestRunServesAndShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--log-level", "error"}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var health, connStr string
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "DefaultEndpointsProtocol=") {
			connStr = line
		}
		if strings.HasPrefix(line, "localtable: ready (") {
			health = strings.TrimSuffix(strings.TrimPrefix(line, "localtable: ready ("), ")")
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if health == "" || !strings.Contains(connStr, "AccountName=devstoreaccount1;") {
		t.Fatalf("no ready line or connection string (%q)", connStr)
	}
	resp, err := http.Get(health)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("health: %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("no shutdown")
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--account", "nokey"},
		{"--account", "a:not-base64!"},
		{"--cert", "x"},
		{"--log-level", "loud"},
	} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestRunRejectsBadCertificateBeforeReady(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.pem"
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--cert", bad, "--key", bad}, &out, io.Discard)
	if err == nil {
		t.Fatal("bad certificate: no error")
	}
	if strings.Contains(out.String(), "ready") {
		t.Fatalf("printed ready before failing: %s", out.String())
	}
}

func TestDialAddr(t *testing.T) {
	for _, c := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 10002}, "127.0.0.1:10002"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 10002}, "127.0.0.1:10002"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 7}, "127.0.0.1:7"},
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 80}, "192.0.2.1:80"},
	} {
		if got := dialAddr(c.addr); got != c.want {
			t.Errorf("dialAddr(%v) = %s, want %s", c.addr, got, c.want)
		}
	}
}

// TestServeEtcdWithoutSupport: the plain command refuses --etcd with an
// error that names the build that has it.
func TestServeEtcdWithoutSupport(t *testing.T) {
	err := run(context.Background(), []string{"serve", "--etcd", "127.0.0.1:2379", "--addr", "127.0.0.1:0"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "go install "+EtcdCommand+"@latest") {
		t.Fatalf("serve --etcd in the plain build = %v, want an error naming %s", err, EtcdCommand)
	}
	for _, args := range [][]string{
		{"--etcd", "127.0.0.1:2379", "--location", t.TempDir()},
		{"--etcd", "127.0.0.1:2379", "--restore", "backup.ltbk"},
		{"--etcd", " , "},
	} {
		cfg := &Config{OpenEtcd: func(context.Context, EtcdConfig) (storage.Engine, error) {
			t.Errorf("%v: opened an engine", args)
			return nil, errors.New("no")
		}}
		var u *usageError
		if err := runConfig(context.Background(), cfg, args, io.Discard, io.Discard); !errors.As(err, &u) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestServeEtcdConfig: with Config.OpenEtcd, serve --etcd opens each
// account's engine through it, under the prefix and the account's name,
// and says so in its banner.
func TestServeEtcdConfig(t *testing.T) {
	var mu sync.Mutex
	var got []EtcdConfig
	cfg := &Config{OpenEtcd: func(_ context.Context, c EtcdConfig) (storage.Engine, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, c)
		return memory.New(nil), nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runConfig(ctx, cfg, []string{"--addr", "127.0.0.1:0", "--log-level", "error",
			"--etcd", "10.0.0.1:2379, http://10.0.0.2:2379", "--etcd-prefix", "svc/", "--etcd-max-request-bytes", "6291456",
			"--account", "one:" + server.DevAccountKey, "--account", "two:" + server.DevAccountKey}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var banner strings.Builder
	for sc.Scan() {
		banner.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "localtable: ready (") {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []EtcdConfig{
		{Endpoints: []string{"10.0.0.1:2379", "http://10.0.0.2:2379"}, Prefix: "svc/one/", MaxRequestBytes: 6291456},
		{Endpoints: []string{"10.0.0.1:2379", "http://10.0.0.2:2379"}, Prefix: "svc/two/", MaxRequestBytes: 6291456},
	}
	for i := range got {
		if got[i].Logger == nil {
			t.Errorf("account %d: no logger", i)
		}
		got[i].Logger = nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OpenEtcd called with %+v, want %+v", got, want)
	}
	if !strings.Contains(banner.String(), "engine:    etcd at 10.0.0.1:2379, http://10.0.0.2:2379") || !strings.Contains(banner.String(), "etcd keys under svc/ACCOUNT/") {
		t.Errorf("banner does not describe the etcd engine:\n%s", banner.String())
	}
}
