package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// putExpiring writes Sessions entities: "old" expired long ago, "new"
// expiring in 2100, "plain" without the property.
func putExpiring(t *testing.T, where ...string) {
	t.Helper()
	runOut(t, append([]string{"put", "Sessions", "p", "old", "ExpiresAt@Edm.DateTime=2000-01-01T00:00:00Z"}, where...)...)
	runOut(t, append([]string{"put", "Sessions", "p", "new", "ExpiresAt@Edm.DateTime=2100-01-01T00:00:00Z"}, where...)...)
	runOut(t, append([]string{"put", "Sessions", "p", "plain", "N=1"}, where...)...)
}

// queryKeys returns the RowKeys a query of Sessions prints.
func queryKeys(t *testing.T, where ...string) string {
	t.Helper()
	out := runOut(t, append([]string{"query", "Sessions", "--select", "RowKey", "-o", "jsonl"}, where...)...)
	var rks []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if i := strings.Index(l, `"RowKey":"`); i >= 0 {
			rk := l[i+len(`"RowKey":"`):]
			rks = append(rks, rk[:strings.IndexByte(rk, '"')])
		}
	}
	return strings.Join(rks, ",")
}

func TestExpiryCommandOffline(t *testing.T) {
	dir := t.TempDir()
	loc := []string{"--location", dir}
	runOut(t, append([]string{"tables", "create", "Sessions"}, loc...)...)
	putExpiring(t, loc...)
	if got := runOut(t, append([]string{"expiry", "show", "Sessions"}, loc...)...); got != "Sessions has no expiry policy\n" {
		t.Fatalf("show before set: %q", got)
	}
	if got := queryKeys(t, loc...); got != "new,old,plain" {
		t.Fatalf("query without a policy: %s", got)
	}
	if got := runOut(t, append([]string{"expiry", "set", "Sessions", "ExpiresAt"}, loc...)...); got != "Sessions expires entities by ExpiresAt\n" {
		t.Fatalf("set: %q", got)
	}
	if got := runOut(t, append([]string{"expiry", "show", "Sessions"}, loc...)...); got != "Sessions expires entities by ExpiresAt\n" {
		t.Fatalf("show: %q", got)
	}
	if got := queryKeys(t, loc...); got != "new,plain" {
		t.Fatalf("query with the policy: %s", got)
	}
	if err := run(context.Background(), append([]string{"get", "Sessions", "p", "old"}, loc...), io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "ResourceNotFound") {
		t.Fatalf("get of an expired entity: %v", err)
	}
	if got := runOut(t, append([]string{"index", "list", "Sessions"}, loc...)...); !strings.Contains(strings.Join(strings.Fields(got), " "), "expiry_ExpiresAt ExpiresAt ready") {
		t.Fatalf("the expiry's index:\n%s", got)
	}

	// A backup archive and a checkpoint carry the policy.
	archive := t.TempDir() + "/b.ltbk"
	runOut(t, append([]string{"backup", "--out", archive}, loc...)...)
	restored := t.TempDir()
	runOut(t, "restore", archive, "--location", restored)
	checkpoint := t.TempDir() + "/cp"
	runOut(t, append([]string{"backup", "--checkpoint", checkpoint}, loc...)...)
	for name, d := range map[string]string{"restore": restored, "checkpoint": checkpoint} {
		if got := runOut(t, "expiry", "show", "Sessions", "--location", d); got != "Sessions expires entities by ExpiresAt\n" {
			t.Errorf("%s: show: %q", name, got)
		}
		if got := queryKeys(t, "--location", d); got != "new,plain" {
			t.Errorf("%s: query: %s", name, got)
		}
	}

	runOut(t, append([]string{"expiry", "clear", "Sessions"}, loc...)...)
	if got := queryKeys(t, loc...); got != "new,old,plain" {
		t.Fatalf("query after clear (the data commands do not sweep): %s", got)
	}
	for _, bad := range [][]string{{"expiry", "show"}, {"expiry", "frob", "Sessions"}, {"expiry", "set", "Sessions"}, {"expiry", "clear", "Sessions", "X"}} {
		if err := run(context.Background(), append(bad, loc...), &bytes.Buffer{}, &bytes.Buffer{}); exitCode(err) != 2 {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
}

// serve --expiry sets the policy at start, and its sweeper deletes the
// expired entities; expiry show, set and clear work against the server.
func TestServeExpiryFlag(t *testing.T) {
	dir := t.TempDir()
	stop, cs := serveUntilReady(t, "--location", dir, "--expiry", "Sessions:ExpiresAt", "--expiry-interval", "10ms")
	srv := []string{"--connection-string", cs}
	if got := runOut(t, append([]string{"expiry", "show", "Sessions"}, srv...)...); got != "Sessions expires entities by ExpiresAt\n" {
		t.Fatalf("show of serve --expiry: %q", got)
	}
	putExpiring(t, srv...)
	if got := queryKeys(t, srv...); got != "new,plain" {
		t.Fatalf("the server's query: %s", got)
	}
	// The server's sweeper deletes "old": with the policy cleared, a query
	// shows what is stored, and it is soon no longer there.
	deadline := time.Now().Add(20 * time.Second)
	for {
		runOut(t, append([]string{"expiry", "clear", "Sessions"}, srv...)...)
		if got := runOut(t, append([]string{"expiry", "show", "Sessions"}, srv...)...); got != "Sessions has no expiry policy\n" {
			t.Fatalf("show after clear: %q", got)
		}
		got := queryKeys(t, srv...)
		runOut(t, append([]string{"expiry", "set", "Sessions", "ExpiresAt"}, srv...)...)
		if got == "new,plain" {
			break
		}
		if got != "new,old,plain" || time.Now().After(deadline) {
			t.Fatalf("the stored entities: %s; want old swept", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// Restarted with another property for the table: serve refuses.
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--log-level", "error", "--location", dir, "--expiry", "Sessions:Other"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "table Sessions already expires by ExpiresAt") {
		t.Fatalf("a conflicting --expiry: %v", err)
	}
	for _, bad := range []string{"Sessions", "Sessions:", ":P", "ab:P", "Sessions:1x"} {
		if err := run(context.Background(), []string{"serve", "--expiry", bad}, io.Discard, io.Discard); exitCode(err) != 2 {
			t.Errorf("--expiry %q: %v, want a usage error", bad, err)
		}
	}
}
