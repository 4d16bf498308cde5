package server_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

var slowReaders = flag.Int("slowreaders", 20, "TestSlowReadersMemory: the clients that ask for an 8 MiB page and never read it")

// TestSlowReadersMemory: clients that ask for the largest page and never
// read it hold, together, about MaxPageBytesInFlight of the server's
// heap, not a page each: the pages over it are answered 503 ServerBusy.
// go test ./server -run TestSlowReadersMemory -slowreaders 100 -v
// prints the figures for 100.
// rss returns the process's resident set, where /proc says it.
func rss() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func TestSlowReadersMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pages of 10 MB")
	}
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	tbl, err := acct.CreateTable(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	blob := localtable.BinaryValue(make([]byte, 64<<10))
	for i := range 10 { // 10 entities of 960 KiB: a page of 8 MiB, about 10.5 MB of JSON
		props := localtable.Properties{}
		for j := range 15 {
			props[fmt.Sprintf("P%d", j)] = blob
		}
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i), Properties: props}); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(server.New(acct, &server.Options{DisableAuth: true}))
	defer ts.Close()
	addr := strings.TrimPrefix(ts.URL, "http://")

	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before, rssBefore := heap(), rss()
	var ok, busy int
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range *slowReaders {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.(*net.TCPConn).SetReadBuffer(4096)
		fmt.Fprintf(c, "GET /devstoreaccount1/big() HTTP/1.1\r\nHost: %s\r\nAccept: application/json;odata=nometadata\r\nx-ms-version: 2019-02-02\r\n\r\n", addr)
		// The status line alone: the page is built, and not read.
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReaderSize(c, 16), nil)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case resp.StatusCode == 200:
			ok++
		case resp.StatusCode == 503 && resp.Header.Get("x-ms-error-code") == "ServerBusy":
			busy++
		default:
			t.Fatalf("a page: %d %v", resp.StatusCode, resp.Header)
		}
	}
	after, rssAfter := heap(), rss()
	grew := int64(after) - int64(before)
	t.Logf("%d clients not reading a 10.5 MB page: %d answered 200, %d 503 ServerBusy; heap in use %d MiB before, %d MiB after (+%d MiB); RSS (Linux) %s before, %s after",
		*slowReaders, ok, busy, before>>20, after>>20, grew>>20, rssBefore, rssAfter)
	if ok == 0 {
		t.Error("no page served")
	}
	if limit := int64(server.DefaultMaxPageBytesInFlight + 3*server.MaxQueryPageBytes); grew > limit {
		t.Errorf("the heap grew %d MiB, over MaxPageBytesInFlight (%d MiB) and a page or two", grew>>20, server.DefaultMaxPageBytesInFlight>>20)
	}

	// The clients gone, their pages' bytes are given back: a reader is
	// served again.
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest("GET", ts.URL+"/devstoreaccount1/big()", nil)
		req.Header.Set("Accept", "application/json;odata=nometadata")
		req.Header.Set("x-ms-version", "2019-02-02")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && n > 8<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the clients went: %d, %d bytes", resp.StatusCode, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
