package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// serveFor runs 'localtable serve' with args until the returned stop is
// called, and returns its connection string. stop returns serve's error.
func serveFor(t *testing.T, args ...string) (connStr string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "error", "--no-explorer"}, args...), pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "DefaultEndpointsProtocol=") && connStr == "" {
			connStr = line
		}
		if strings.HasPrefix(line, "localtable: ready (") {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if connStr == "" {
		cancel()
		t.Fatalf("serve %v: no connection string: %v", args, <-done)
	}
	var once bool
	var err error
	stop = func() error {
		if !once {
			once = true
			cancel()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("serve did not shut down")
			}
		}
		return err
	}
	t.Cleanup(func() { stop() })
	return connStr, stop
}

// watching runs 'localtable watch' with args in the background: next
// returns its next line of output, end stops it and returns its error,
// and ended waits for it to end by itself and returns its error.
func watching(t *testing.T, args ...string) (next func() string, end, ended func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"watch"}, args...), pw, io.Discard)
		pw.Close()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next = func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("watch %v ended: %v", args, <-done)
			}
			return l
		case <-time.After(30 * time.Second):
			t.Fatalf("watch %v: no line", args)
		}
		return ""
	}
	end = func() error {
		cancel()
		go func() {
			for range lines {
			}
		}()
		return <-done
	}
	ended = func() error {
		t.Helper()
		go func() {
			for range lines {
			}
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatalf("watch %v: still running", args)
		}
		return nil
	}
	t.Cleanup(func() { cancel() })
	return next, end, ended
}

func TestWatchServedAndOffline(t *testing.T) {
	loc := t.TempDir()
	cs, stop := serveFor(t, "--location", loc, "--feed")
	for _, args := range [][]string{
		{"tables", "create", "Orders"},               // revision 1
		{"put", "Orders", "p", "a", "N@Edm.Int32=1"}, // 2
		{"put", "Orders", "p", "b", "N@Edm.Int32=2"}, // 3
	} {
		if _, stderr, err := runCmd(append(args, "--connection-string", cs)...); err != nil {
			t.Fatalf("%v: %v %s", args, err, stderr)
		}
	}

	// From a revision, as JSON lines: the changes after it, then the
	// next ones as they are made.
	next, end, _ := watching(t, "--from", "1", "-o", "jsonl", "--connection-string", cs)
	var l watchLine
	if err := json.Unmarshal([]byte(next()), &l); err != nil || l.Revision != 2 || l.Kind != "Insert" || l.Table != "Orders" || !strings.Contains(string(l.Entity), `"odata.etag"`) {
		t.Errorf("first line: %+v %v", l, err)
	}
	next() // 3
	// From revision 3, not from now: a watch from now may begin after the
	// writes below, on a busy machine.
	tableNext, tableEnd, _ := watching(t, "Orders", "--filter", "RowKey eq 'c'", "--from", "3", "--connection-string", cs)
	if _, stderr, err := runCmd("delete", "Orders", "p", "a", "--connection-string", cs); err != nil { // 4
		t.Fatal(err, stderr)
	}
	if _, stderr, err := runCmd("put", "Orders", "p", "c", "--connection-string", cs); err != nil { // 5
		t.Fatal(err, stderr)
	}
	if err := json.Unmarshal([]byte(next()), &l); err != nil || l.Revision != 4 || l.Kind != "Delete" || string(l.Entity) != `{"PartitionKey":"p","RowKey":"a"}` {
		t.Errorf("delete line: %+v %v", l, err)
	}
	if got := tableNext(); got != "5\tInsert\tOrders\tp\tc" {
		t.Errorf("-o table, filtered: %q", got)
	}
	if err := end(); err != nil {
		t.Errorf("interrupted watch: %v", err)
	}
	if err := tableEnd(); err != nil {
		t.Errorf("interrupted watch: %v", err)
	}

	// A watch open while the server shuts down ends it, with an error,
	// and does not hold the shutdown up.
	next, _, ended := watching(t, "--from", "4", "--connection-string", cs)
	next() // revision 5: the stream is open
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	// Waited for, not interrupted: the watch may learn that its stream
	// ended after the server's shutdown has returned.
	if err := ended(); err == nil {
		t.Error("a watch whose server went: no error")
	}

	// Offline: the history kept, then exit.
	out, _, err := runCmd("watch", "--location", loc)
	if err != nil {
		t.Fatal(err)
	}
	want := "1\tTableCreated\tOrders\n2\tInsert\tOrders\tp\ta\n3\tInsert\tOrders\tp\tb\n4\tDelete\tOrders\tp\ta\n5\tInsert\tOrders\tp\tc\n"
	if out != want {
		t.Errorf("offline:\n%s\nwant:\n%s", out, want)
	}
	out, _, err = runCmd("watch", "orders", "--from", "3", "--filter", "RowKey eq 'a'", "-o", "jsonl", "--location", loc)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil || l.Revision != 4 || strings.Count(out, "\n") != 1 {
		t.Errorf("offline, from 3, filtered: %q %v", out, err)
	}
	if out, _, err := runCmd("watch", "--from", "5", "--location", loc); err != nil || out != "" {
		t.Errorf("offline, from the last revision: %q %v, want nothing", out, err)
	}
	if _, _, err := runCmd("watch", "--from", "6", "--location", loc); err == nil || !strings.Contains(err.Error(), "beyond the data directory's revision, 5") {
		t.Errorf("offline, from beyond the last revision: %v", err)
	}

	// A server without --feed says so.
	cs, _ = serveFor(t)
	if _, _, err := runCmd("watch", "--connection-string", cs); err == nil || !strings.Contains(err.Error(), "--feed") {
		t.Errorf("no feed: %v", err)
	}
}

func TestWatchAndFeedUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--feed-keep", "5"},
		{"serve", "--feed", "--feed-keep", "-1"},
		{"watch", "--from", "x", "--location", t.TempDir()},
		{"watch", "a", "b", "--location", t.TempDir()},
	} {
		var u *usageError
		if _, _, err := runCmd(args...); !errors.As(err, &u) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
