package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable/server"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

// testEngines is an engine registered by a test only: in-memory stores
// that outlive the accounts opened on them, selected by a --location of
// "test:NAME", labelled "testmem".
type testEngines struct {
	mu     sync.Mutex
	stores map[string]storage.Engine
}

// kind returns the engine's registration.
func (te *testEngines) kind() *engineKind {
	te.stores = map[string]storage.Engine{}
	key := func(o *engineOpts, account string) string { return o.location + "/" + account }
	return &engineKind{
		name:       "testmem",
		persistent: true,
		store:      "test store",
		selected:   func(o *engineOpts) bool { return strings.HasPrefix(o.location, "test:") },
		open: func(_ context.Context, o *engineOpts, account string) (storage.Engine, error) {
			te.mu.Lock()
			defer te.mu.Unlock()
			k := key(o, account)
			if te.stores[k] == nil {
				te.stores[k] = memory.New(nil)
			}
			return noClose{te.stores[k]}, nil
		},
		where: key,
		exists: func(o *engineOpts, account string) bool {
			te.mu.Lock()
			defer te.mu.Unlock()
			return te.stores[key(o, account)] != nil
		},
		banner: func(o *engineOpts) (string, string) { return "testmem", o.location },
	}
}

// noClose is an engine whose Close keeps its data, for the next opening.
type noClose struct{ storage.Engine }

func (noClose) Close() error { return nil }

// TestEngineRegistry: an engine registered once is what serve, the data
// commands, backup (its label) and restore use.
func TestEngineRegistry(t *testing.T) {
	var te testEngines
	cfg := &Config{engines: []*engineKind{te.kind()}}
	runc := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := runConfig(context.Background(), cfg, args, &out, &errb); err != nil {
			t.Fatalf("localtable %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String()
	}
	// The data commands write and read it.
	runc("tables", "create", "Data", "--location", "test:a")
	runc("put", "Data", "--location", "test:a", "--json", `{"PartitionKey":"p","RowKey":"r","N":1}`)
	if got := runc("export", "Data", "--location", "test:a"); !strings.Contains(got, `"N":1`) {
		t.Fatalf("export of the test engine = %q", got)
	}
	// A backup of it is labelled with its name, and restores into a new
	// store of it.
	arch := filepath.Join(t.TempDir(), "a.ltbk")
	if got := runc("backup", "--location", "test:a", "--out", arch); !strings.Contains(got, "(testmem)") {
		t.Errorf("backup = %q, want the label testmem", got)
	}
	runc("restore", arch, "--location", "test:b")
	if got := runc("export", "Data", "--location", "test:b"); !strings.Contains(got, `"N":1`) {
		t.Errorf("export of the restored store = %q", got)
	}
	if err := runConfig(context.Background(), cfg, []string{"restore", arch, "--location", "test:b"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("restore into an existing store = %v", err)
	}

	// serve opens it, and its backups over HTTP are labelled with its name.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runConfig(ctx, cfg, []string{"--addr", "127.0.0.1:0", "--log-level", "error", "--no-auth", "--location", "test:a"}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var banner strings.Builder
	var base string
	for sc.Scan() {
		banner.WriteString(sc.Text() + "\n")
		if l, ok := strings.CutPrefix(sc.Text(), "localtable: ready ("); ok {
			base = strings.TrimSuffix(strings.TrimSuffix(l, ")"), server.HealthPath)
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if !strings.Contains(banner.String(), "engine:    testmem") {
		t.Errorf("banner:\n%s", banner.String())
	}
	resp, err := http.Get(base + backupPath + "?account=" + server.DevAccountName)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "live")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(f, resp.Body)
	resp.Body.Close()
	f.Seek(0, io.SeekStart)
	h, err := readArchive(f, func(k, v []byte) error { return nil })
	f.Close()
	if err != nil || h.Source != "testmem" {
		t.Errorf("served backup: %+v, %v; want Source testmem", h, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// TestPlanServe: serve's plan picks the engine its flags select, the
// default account, and refuses what does not go together.
func TestPlanServe(t *testing.T) {
	c := commands["serve"]
	plain := newEngines(&Config{})
	withEtcd := newEngines(&Config{OpenEtcd: func(context.Context, EtcdConfig) (storage.Engine, error) { return nil, nil }})
	for _, tc := range []struct {
		cfg     serveConfig
		engines engineRegistry
		kind    string // "" : an error
		usage   bool
	}{
		{cfg: serveConfig{}, engines: plain, kind: "memory"},
		{cfg: serveConfig{location: "d"}, engines: plain, kind: "pebble"},
		{cfg: serveConfig{etcd: "h:1, h:2"}, engines: withEtcd, kind: "etcd"},
		{cfg: serveConfig{etcd: "h:1"}, engines: plain},
		{cfg: serveConfig{etcd: " , "}, engines: withEtcd, usage: true},
		{cfg: serveConfig{etcd: "h:1", location: "d"}, engines: withEtcd, usage: true},
		{cfg: serveConfig{restore: "f", location: "d"}, engines: plain, usage: true},
		{cfg: serveConfig{cert: "c"}, engines: plain, usage: true},
	} {
		p, err := planServe(c, &tc.cfg, tc.engines, nil)
		_, isUsage := err.(*usageError)
		switch {
		case tc.kind == "" && (err == nil || isUsage != tc.usage):
			t.Errorf("%+v: %v, want an error (usage %v)", tc.cfg, err, tc.usage)
		case tc.kind != "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.kind != "" && (p.kind.name != tc.kind || len(p.accounts) != 1 || p.accounts[0].Name != server.DevAccountName):
			t.Errorf("%+v: engine %s, accounts %v; want %s and the dev account", tc.cfg, p.kind.name, p.accounts, tc.kind)
		}
		if tc.kind == "etcd" && (len(p.opts.etcd) != 2 || p.opts.etcd[1] != "h:2") {
			t.Errorf("%+v: endpoints %q", tc.cfg, p.opts.etcd)
		}
	}
}

// TestPlanRestore: restore writes into the account the backup is of (or
// --account), on a persistent engine, into no existing store.
func TestPlanRestore(t *testing.T) {
	dir := t.TempDir()
	arch := filepath.Join(dir, "a.ltbk")
	var buf bytes.Buffer
	if _, err := writeArchive(&buf, memory.New(nil), "acct", "memory"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(arch, buf.Bytes(), 0o644)
	os.MkdirAll(filepath.Join(dir, "old", "acct"), 0o755)
	c, engines := commands["restore"], newEngines(&Config{})
	for _, tc := range []struct {
		rc          restoreConfig
		where, fail string
	}{
		{rc: restoreConfig{opts: engineOpts{location: filepath.Join(dir, "new")}}, where: filepath.Join(dir, "new", "acct")},
		{rc: restoreConfig{account: "b", opts: engineOpts{location: filepath.Join(dir, "new")}}, where: filepath.Join(dir, "new", "b")},
		{rc: restoreConfig{}, fail: "--location DIR is required"},
		{rc: restoreConfig{opts: engineOpts{location: filepath.Join(dir, "old")}}, fail: "exists"},
		{rc: restoreConfig{etcd: "h:1"}, fail: "without etcd support"},
	} {
		f, _ := os.Open(arch)
		p, err := planRestore(c, &tc.rc, engines, f)
		f.Close()
		switch {
		case tc.fail != "" && (err == nil || !strings.Contains(err.Error(), tc.fail)):
			t.Errorf("%+v: %v, want %q", tc.rc, err, tc.fail)
		case tc.fail == "" && err != nil:
			t.Errorf("%+v: %v", tc.rc, err)
		case tc.fail == "" && p.target.where() != tc.where:
			t.Errorf("%+v: into %s, want %s", tc.rc, p.target.where(), tc.where)
		}
	}
}
