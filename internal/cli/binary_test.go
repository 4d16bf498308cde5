package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/server"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

// TestMain removes the binary the tests built. Azurite's variables of the
// developer's environment, which would change the accounts that serve
// serves, are unset for the tests and the processes they start.
func TestMain(m *testing.M) {
	os.Unsetenv(azuriteAccountsEnv)
	os.Unsetenv(azuriteSkipAPIVersionEnv)
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// buildBinary builds the command (cmd/localtable, whose main is this
// package) once for all the tests that run it.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("the go command is not on PATH: %v", err)
			return
		}
		if buildDir, buildErr = os.MkdirTemp("", "localtable-bin"); buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "localtable")
		if out, err := exec.Command(goTool, "build", "-o", builtBin, "github.com/localtable/localtable/cmd/localtable").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// process is the command running as a real process.
type process struct {
	cmd        *exec.Cmd
	connString string
	endpoint   string // http://127.0.0.1:PORT/devstoreaccount1
	stderr     strings.Builder
	banner     strings.Builder // stdout up to the ready line
	// client asks for /-/health; nil: http.DefaultClient (set it to
	// one that trusts the certificate of an HTTPS server).
	client *http.Client
}

// start runs the binary and waits until it is ready: it has printed its
// connection string (with the port it bound) and answers /-/health.
func start(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...)}
	p.cmd.Stderr = &p.stderr
	return startWith(t, p)
}

// startWith is start for a command already set up.
func startWith(t *testing.T, p *process) *process {
	t.Helper()
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	sc := bufio.NewScanner(out)
	var health string
	for sc.Scan() {
		line := sc.Text()
		p.banner.WriteString(line + "\n")
		if strings.HasPrefix(line, "DefaultEndpointsProtocol=") {
			p.connString = line
			for _, kv := range strings.Split(line, ";") {
				if v, ok := strings.CutPrefix(kv, "TableEndpoint="); ok {
					p.endpoint = v
				}
			}
		}
		if v, ok := strings.CutPrefix(line, "localtable: ready ("); ok {
			health = strings.TrimSuffix(v, ")")
			break
		}
	}
	go io.Copy(io.Discard, out)
	if health == "" || p.endpoint == "" || strings.Contains(p.endpoint, ":0/") {
		t.Fatalf("no ready line or endpoint (%q, %q); stderr:\n%s", health, p.endpoint, p.stderr.String())
	}
	// The listener is bound before the ready line: health answers at once,
	// but allow the scheduler some slack.
	client := p.client
	if client == nil {
		client = http.DefaultClient
	}
	for i := 0; ; i++ {
		resp, err := client.Get(health)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if i == 100 {
			t.Fatalf("health: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// TestBinaryPersistsAndDrainsOnSIGTERM builds the command, serves a pebble
// directory, writes through aztables, sends SIGTERM while a large query
// is in flight (the query completes and the process exits 0), then
// restarts on the same directory and reads the data back.
func TestBinaryPersistsAndDrainsOnSIGTERM(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGTERM")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx := context.Background()
	p := start(t, bin, "--location", dir, "--addr", "127.0.0.1:0", "--log-level", "warn")

	sc, err := aztables.NewServiceClientFromConnectionString(p.connString, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.CreateTable(ctx, "persist", nil); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	c := sc.NewClient("persist")
	const n = 1000
	big := strings.Repeat("x", 20000)
	for i := 0; i < n; i += 100 {
		var acts []aztables.TransactionAction
		for j := i; j < i+100; j++ {
			b, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%04d", j), "N": j, "Pad": big})
			acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: b})
		}
		if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	b, _ := json.Marshal(map[string]any{"PartitionKey": "single", "RowKey": "it's", "V": "kept"})
	if _, err := c.AddEntity(ctx, b, nil); err != nil {
		t.Fatal(err)
	}

	// A large query (about 20 MB of entities, so a page of
	// server.MaxQueryPageBytes), signed with Shared Key Lite. Once its
	// headers arrive, the handler is still writing the body, which this
	// test has not read: SIGTERM now must let it finish.
	req, _ := http.NewRequest("GET", p.endpoint+"/persist()?$filter="+strings.ReplaceAll("PartitionKey eq 'p'", " ", "%20"), nil)
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2019-02-02") // the service refuses unversioned Shared Key requests
	key := testKey(t)
	req.Header.Set("Authorization", "SharedKeyLite "+server.DevAccountName+":"+sign(key, req.Header.Get("x-ms-date")+"\n/"+server.DevAccountName+req.URL.EscapedPath()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("query: %d %s", resp.StatusCode, body)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var page struct{ Value []map[string]any }
	err = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	// The page in flight arrives whole: every entity it holds, up to its
	// continuation (or all n when the page is not cut).
	more := resp.Header.Get("x-ms-continuation-NextRowKey") != ""
	if err != nil || len(page.Value) == 0 || (!more && len(page.Value) != n) {
		t.Fatalf("query in flight at SIGTERM: %v, %d entities (continuation %v)", err, len(page.Value), more)
	}
	for i, e := range page.Value {
		if e["RowKey"] != fmt.Sprintf("%04d", i) || e["Pad"] != big {
			t.Fatalf("entity %d of the page in flight: RowKey %v, Pad of %d bytes", i, e["RowKey"], len(fmt.Sprint(e["Pad"])))
		}
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v; stderr:\n%s", err, p.stderr.String())
	}

	// Restart on the same directory: the data is there.
	p = start(t, bin, "--location", dir, "--addr", "127.0.0.1:0", "--log-level", "warn")
	sc, err = aztables.NewServiceClientFromConnectionString(p.connString, nil)
	if err != nil {
		t.Fatal(err)
	}
	c = sc.NewClient("persist")
	g, err := c.GetEntity(ctx, "single", "it's", nil)
	if err != nil || !strings.Contains(string(g.Value), `"V":"kept"`) {
		t.Fatalf("after restart: %v %s", err, g.Value)
	}
	count := 0
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Select: to.Ptr("N")})
	for pager.More() {
		pg, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		count += len(pg.Entities)
	}
	if count != n+1 {
		t.Fatalf("after restart: %d entities, want %d", count, n+1)
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v; stderr:\n%s", err, p.stderr.String())
	}
}

// A second signal during the graceful shutdown ends the process at once,
// as with a second Ctrl-C, instead of waiting for requests in flight.
func TestBinarySecondSignalExitsAtOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("signals")
	}
	bin := buildBinary(t)
	p := &process{}
	p.cmd = exec.Command(bin, "--addr", "127.0.0.1:0", "--log-level", "info")
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p = startWith(t, p)
	// A request held in flight: a large query whose body is never read.
	ctx := context.Background()
	sc, err := aztables.NewServiceClientFromConnectionString(p.connString, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := sc.NewClient("held")
	if _, err := c.CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 20000)
	for i := 0; i < 500; i += 50 {
		var acts []aztables.TransactionAction
		for j := i; j < i+50; j++ {
			b, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%04d", j), "A": big})
			acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: b})
		}
		if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest("GET", p.endpoint+"/held()", nil)
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2019-02-02") // the service refuses unversioned Shared Key requests
	req.Header.Set("Authorization", "SharedKeyLite "+server.DevAccountName+":"+sign(testKey(t), req.Header.Get("x-ms-date")+"\n/"+server.DevAccountName+req.URL.EscapedPath()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	p.cmd.Process.Signal(os.Interrupt)
	// Wait until the command reports the graceful shutdown.
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.Contains(lines.Text(), "shutting down") {
	}
	go io.Copy(io.Discard, stderr)
	p.cmd.Process.Signal(os.Interrupt)
	err = p.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("after a second signal: %v, want death by the signal", err)
	}
}
