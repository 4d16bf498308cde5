package cli

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// serveAddr runs serve with args (and --no-auth) and returns its
// host:port and its stop.
func serveAddr(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	cs, stop := serveFor(t, append([]string{"--no-auth"}, args...)...)
	for _, kv := range strings.Split(cs, ";") {
		if v, ok := strings.CutPrefix(kv, "TableEndpoint="); ok {
			u, err := url.Parse(v)
			if err != nil {
				t.Fatal(err)
			}
			return u.Host, stop
		}
	}
	t.Fatalf("no TableEndpoint in %q", cs)
	return "", nil
}

// closedWithin reports whether the server closes c within d: reading
// it reaches EOF (or a reset), not the deadline.
func closedWithin(t *testing.T, c net.Conn, d time.Duration) bool {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// TestServeSlowBodyCut: a request body sent a byte at a time is cut
// after --read-timeout; without a timeout it would hold its connection
// (and its handler) as long as the client likes.
func TestServeSlowBodyCut(t *testing.T) {
	addr, _ := serveAddr(t, "--read-timeout", "1s")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json;odata=nometadata\r\nContent-Length: 1000\r\n\r\n{", addr)
	go func() {
		for range 50 { // 10 s at most
			time.Sleep(200 * time.Millisecond)
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	start := time.Now()
	if !closedWithin(t, c, 5*time.Second) {
		t.Fatalf("a slow body still open after %v, with --read-timeout 1s", time.Since(start))
	}
}

// TestServeIdleKeepAliveClosed: a keep-alive connection idle longer than
// --idle-timeout is closed.
func TestServeIdleKeepAliveClosed(t *testing.T) {
	addr, _ := serveAddr(t, "--idle-timeout", "1s")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /-/health HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("health: %d, close %v", resp.StatusCode, resp.Close)
	}
	start := time.Now()
	if !closedWithin(t, c, 5*time.Second) {
		t.Fatalf("an idle keep-alive still open after %v, with --idle-timeout 1s", time.Since(start))
	}
}

// TestServeShutdownWithSlowClients: shutting down with a client that
// never reads a large page, and one that never finishes its body, takes
// --shutdown-grace, not the clients' time, and serve returns nil.
func TestServeShutdownWithSlowClients(t *testing.T) {
	addr, stop := serveAddr(t, "--shutdown-grace", "1s")
	bigTable(t, addr)

	// A reader that never reads, behind a small receive buffer.
	reader := askBigPage(t, addr)
	defer reader.Close()
	// A body that never ends.
	body, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	fmt.Fprintf(body, "POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", addr)
	time.Sleep(500 * time.Millisecond) // both in flight

	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- stop() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("shutdown took %v, with --shutdown-grace 1s", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("shutdown still waiting after 20s, with --shutdown-grace 1s")
	}
}

// TestServeFeedOutlivesTimeouts: the change feed's stream lasts past
// --write-timeout and --read-timeout, which are for a request and its
// response, and it does not count under --max-concurrent-requests.
func TestServeFeedOutlivesTimeouts(t *testing.T) {
	addr, _ := serveAddr(t, "--feed", "--write-timeout", "1s", "--read-timeout", "1s", "--max-concurrent-requests", "1")
	resp, err := http.Get("http://" + addr + "/devstoreaccount1/$changes")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("$changes: %d %s", resp.StatusCode, b)
	}
	time.Sleep(2500 * time.Millisecond)
	req, _ := http.NewRequest("POST", "http://"+addr+"/devstoreaccount1/Tables", strings.NewReader(`{"TableName":"late"}`))
	req.Header.Set("Content-Type", "application/json")
	cr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cr.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"late"`) {
		t.Fatalf("the feed after the timeouts: %q, %v", line, err)
	}
}

// TestServeExplorerChangesStream: the explorer's stream of a table's
// changes lasts past --write-timeout and --read-timeout too, and shutting
// down ends it: serve returns long before --shutdown-grace.
func TestServeExplorerChangesStream(t *testing.T) {
	addr, stop := serveAddr(t, "--feed", "--no-explorer=false", "--write-timeout", "1s", "--read-timeout", "1s", "--shutdown-grace", "2m")
	post := func(path, body string) {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusNoContent {
			t.Fatalf("POST %s: %d", path, resp.StatusCode)
		}
	}
	post("/devstoreaccount1/Tables", `{"TableName":"late"}`)
	resp, err := http.Get("http://" + addr + "/-/explorer/a/devstoreaccount1/t/late/changes/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("the explorer's stream: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	time.Sleep(2500 * time.Millisecond)
	post("/devstoreaccount1/late", `{"PartitionKey":"p","RowKey":"r"}`)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"kind":"Insert","table":"late"`) {
		t.Fatalf("the stream after the timeouts: %q, %v", line, err)
	}
	done := make(chan error, 1)
	go func() { done <- stop() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("shutdown still waiting for the explorer's stream after 30s (--shutdown-grace 2m)")
	}
}

// TestServeMaxConcurrentRequests: over --max-concurrent-requests, a
// request is answered 503 ServerBusy.
func TestServeMaxConcurrentRequests(t *testing.T) {
	addr, _ := serveAddr(t, "--max-concurrent-requests", "1")
	// A request held in flight by its body, then requests that must be
	// refused while it is. On a busy machine the held request may end
	// (or not have begun) by the time they come: each attempt holds a new
	// one; a server without the cap fails them all.
	var last *http.Response
	for range 5 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", addr)
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			resp, err := http.Get("http://" + addr + "/devstoreaccount1/Tables")
			if err != nil {
				c.Close()
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == 503 && resp.Header.Get("x-ms-error-code") == "ServerBusy" {
				c.Close()
				return
			}
			last = resp
			time.Sleep(20 * time.Millisecond)
		}
		c.Close()
	}
	t.Fatalf("with a request in flight and --max-concurrent-requests 1: %d %v", last.StatusCode, last.Header)
}

// bigTable creates the table big on the server at addr (--no-auth), with
// entities enough for a page of 8 MiB (about 10.5 MB of JSON), more than
// the sockets' buffers hold.
func bigTable(t *testing.T, addr string) {
	t.Helper()
	base := "http://" + addr + "/devstoreaccount1"
	post := func(path, body string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		req.Header.Set("Prefer", "return-no-content")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
	}
	post("/Tables", `{"TableName":"big"}`)
	props := make([]string, 15)
	for i := range props {
		props[i] = fmt.Sprintf(`"P%d@odata.type":"Edm.Binary","P%d":"%s"`, i, i, base64.StdEncoding.EncodeToString(make([]byte, 64<<10)))
	}
	for i := range 10 { // about 1.3 MB of JSON each: a page of 8 MiB, more than the sockets' buffers
		post("/big", fmt.Sprintf(`{"PartitionKey":"p","RowKey":"%03d",%s}`, i, strings.Join(props, ",")))
	}

}

// TestServeWriteTimeoutCutsNonReader: a client that never reads its page
// is cut after --write-timeout, and its request ends (its page's memory
// freed): with --max-concurrent-requests 1, the next request is answered
// 503 ServerBusy until then, and 200 after.
func TestServeWriteTimeoutCutsNonReader(t *testing.T) {
	addr, _ := serveAddr(t, "--write-timeout", "1s", "--max-concurrent-requests", "1")
	bigTable(t, addr)
	c := askBigPage(t, addr)
	defer c.Close()
	start := time.Now()
	busy := false
	for {
		resp, err := http.Get("http://" + addr + "/devstoreaccount1/Tables")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == 503:
			busy = true
		case resp.StatusCode == 200 && busy:
			if d := time.Since(start); d < time.Second {
				t.Errorf("the page's request ended after %v, before the write timeout", d)
			}
			return
		case resp.StatusCode == 200 && time.Since(start) > 500*time.Millisecond:
			t.Fatal("the page's request was never in flight")
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("a client not reading its page still held its request after 10s, with --write-timeout 1s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeMaxPageBytesInFlight: with --max-page-bytes-in-flight 1, a
// page is served alone, and a second one, while the first is not read,
// is answered 503 ServerBusy.
func TestServeMaxPageBytesInFlight(t *testing.T) {
	addr, _ := serveAddr(t, "--max-page-bytes-in-flight", "1")
	bigTable(t, addr)
	var codes []int
	for range 2 {
		c := askBigPage(t, addr)
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReaderSize(c, 16), nil)
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, resp.StatusCode)
	}
	if codes[0] != 200 || codes[1] != 503 {
		t.Fatalf("two pages not read, --max-page-bytes-in-flight 1: %v, want [200 503]", codes)
	}
}

// askBigPage opens a connection with a small receive buffer and asks it
// for table big's page, reading nothing: the caller reads, or does not.
func askBigPage(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(c, "GET /devstoreaccount1/big() HTTP/1.1\r\nHost: %s\r\nAccept: application/json;odata=nometadata\r\n\r\n", addr)
	return c
}
