package cli

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
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
