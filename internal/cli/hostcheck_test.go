package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// serveHTTPTest runs serve on a free loopback port with args until the
// test ends, and returns its base URL, http://127.0.0.1:PORT.
func serveHTTPTest(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--addr", "127.0.0.1:0", "--log-level", "error"}, args...), pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	sc := bufio.NewScanner(pr)
	var base string
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "localtable: ready ("); ok {
			base = strings.TrimSuffix(strings.TrimSuffix(rest, ")"), "/-/health")
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if base == "" {
		t.Fatal("no ready line")
	}
	return base
}

// TestServeRefusesForeignHosts: on a loopback address, a request whose
// Host is not a loopback name (a DNS-rebound site's) is refused by the
// API, the explorer and the admin endpoints, unless --allow-host names it
// (issue 22).
func TestServeRefusesForeignHosts(t *testing.T) {
	base := serveHTTPTest(t, "--no-auth", "--allow-host", "Dev.Example.")
	port := base[strings.LastIndexByte(base, ':')+1:]
	status := func(host, path string) int {
		t.Helper()
		req, err := http.NewRequest("GET", base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	paths := []string{"/-/health", "/", explorerPrefix, "/devstoreaccount1/Tables", backupPath + "?account=devstoreaccount1"}
	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.evil.example", "localhost.evil.example:" + port, "10.0.0.1:" + port, "dev.example.org"} {
		for _, p := range paths {
			if got := status(host, p); got != http.StatusForbidden {
				t.Errorf("Host %s, %s: %d, want 403", host, p, got)
			}
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "app.localhost:" + port, "127.1.2.3", "[::1]:" + port, "dev.example:" + port, "dev.example"} {
		for _, p := range paths {
			if got := status(host, p); got == http.StatusForbidden {
				t.Errorf("Host %s, %s: 403", host, p)
			}
		}
	}
}

func TestHostFlags(t *testing.T) {
	var h hostFlags
	for _, ok := range []string{"example.com", "[::2]", "::2", "10.0.0.1", "Name."} {
		if err := h.Set(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if strings.Join(h, ",") != "example.com,::2,::2,10.0.0.1,name" {
		t.Errorf("got %q", h)
	}
	for _, bad := range []string{"", "example.com:80", "http://example.com", "a b"} {
		if err := h.Set(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
