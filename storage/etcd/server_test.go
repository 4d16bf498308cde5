package etcd_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/localtable/localtable/server"
)

// The Table REST server on etcd, end to end: two servers on one cluster
// and prefix, as behind a load balancer, driven alternately with the Go
// SDK. Each must see what the other wrote, and If-Match must hold across
// them. The servers run in this process over two Accounts, and as two
// processes of the localtable command built with etcd support
// (cmd/localtable in this module).

// sdkClient returns a service client for a connection string, without
// retries, so that every answer is seen as given.
func sdkClient(t *testing.T, connString string) *aztables.ServiceClient {
	t.Helper()
	c, err := aztables.NewServiceClientFromConnectionString(connString, &aztables.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}},
	})
	must(t, err)
	return c
}

func entityJSON(t *testing.T, pk, rk string, props map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: pk, RowKey: rk}, Properties: props})
	must(t, err)
	return b
}

// wantStatus checks that err is the service's answer status with code.
func wantStatus(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != status || re.ErrorCode != code {
		t.Errorf("%s = %v, want %d %s", what, err, status, code)
	}
}

// driveTwoServers drives the servers at two connection strings to one
// account on one cluster prefix, alternately.
func driveTwoServers(t *testing.T, cs1, cs2 string) {
	ctx := bg()
	s1, s2 := sdkClient(t, cs1), sdkClient(t, cs2)

	// A table created through one is listed by the other, which cannot
	// create it again.
	_, err := s1.CreateTable(ctx, "EndToEnd", nil)
	must(t, err)
	var names []string
	pager := s2.NewListTablesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		must(t, err)
		for _, tbl := range page.Tables {
			names = append(names, *tbl.Name)
		}
	}
	if len(names) != 1 || names[0] != "EndToEnd" {
		t.Errorf("the other server lists %v, want [EndToEnd]", names)
	}
	_, err = s2.CreateTable(ctx, "endtoend", nil)
	wantStatus(t, "CreateTable on the other server", err, http.StatusConflict, "TableAlreadyExists")
	t1, t2 := s1.NewClient("EndToEnd"), s2.NewClient("EndToEnd")

	// An entity inserted through one is read through the other, with the
	// same ETag; an update through the other with that ETag passes, and
	// then the first server refuses the stale ETag with 412.
	add, err := t1.AddEntity(ctx, entityJSON(t, "p", "r", map[string]any{"N": int32(1)}), nil)
	must(t, err)
	got, err := t2.GetEntity(ctx, "p", "r", nil)
	must(t, err)
	if got.ETag != add.ETag {
		t.Errorf("the other server's ETag %s, the inserting one's %s", got.ETag, add.ETag)
	}
	upd, err := t2.UpdateEntity(ctx, entityJSON(t, "p", "r", map[string]any{"N": int32(2)}), &aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeReplace})
	must(t, err)
	_, err = t1.UpdateEntity(ctx, entityJSON(t, "p", "r", map[string]any{"N": int32(3)}), &aztables.UpdateEntityOptions{IfMatch: &add.ETag, UpdateMode: aztables.UpdateModeMerge})
	wantStatus(t, "Update with the ETag the other server replaced", err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
	_, err = t1.DeleteEntity(ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: &add.ETag})
	wantStatus(t, "Delete with the ETag the other server replaced", err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
	_, err = t1.AddEntity(ctx, entityJSON(t, "p", "r", nil), nil)
	wantStatus(t, "Add of the entity the other server holds", err, http.StatusConflict, "EntityAlreadyExists")
	_, err = t1.UpdateEntity(ctx, entityJSON(t, "p", "r", map[string]any{"M": "merged"}), &aztables.UpdateEntityOptions{IfMatch: &upd.ETag, UpdateMode: aztables.UpdateModeMerge})
	must(t, err)
	got, err = t2.GetEntity(ctx, "p", "r", nil)
	must(t, err)
	var e aztables.EDMEntity
	must(t, json.Unmarshal(got.Value, &e))
	if e.Properties["N"] != int32(2) || e.Properties["M"] != "merged" {
		t.Errorf("after a replace through one server and a merge through the other: %v", e.Properties)
	}

	// A batch through one is seen whole through the other; a failing
	// batch through the other applies nothing.
	var batch []aztables.TransactionAction
	for i := range 10 {
		batch = append(batch, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
			Entity: entityJSON(t, "b", fmt.Sprintf("r%02d", i), map[string]any{"I": int32(i)})})
	}
	_, err = t1.SubmitTransaction(ctx, batch, nil)
	must(t, err)
	countB := func() int {
		n := 0
		f := "PartitionKey eq 'b'"
		pager := t2.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			must(t, err)
			n += len(page.Entities)
		}
		return n
	}
	if n := countB(); n != 10 {
		t.Errorf("the other server sees %d entities of the batch of 10", n)
	}
	bad := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(t, "b", "new", nil)},
		{ActionType: aztables.TransactionTypeAdd, Entity: entityJSON(t, "b", "r03", nil)}, // exists
	}
	_, err = t2.SubmitTransaction(ctx, bad, nil)
	if err == nil {
		t.Error("a batch adding an existing entity succeeded")
	}
	if _, err := t1.GetEntity(ctx, "b", "new", nil); err == nil {
		t.Error("the failed batch's first action is visible")
	}

	// ETag-guarded increments through both servers at once lose nothing.
	const each = 8
	var wg sync.WaitGroup
	for _, tbl := range []*aztables.Client{t1, t2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				for {
					g, err := tbl.GetEntity(ctx, "p", "r", nil)
					if err != nil {
						t.Error(err)
						return
					}
					var e aztables.EDMEntity
					if err := json.Unmarshal(g.Value, &e); err != nil {
						t.Error(err)
						return
					}
					n := e.Properties["N"].(int32)
					_, err = tbl.UpdateEntity(ctx, entityJSON(t, "p", "r", map[string]any{"N": n + 1}), &aztables.UpdateEntityOptions{IfMatch: &g.ETag, UpdateMode: aztables.UpdateModeMerge})
					var re *azcore.ResponseError
					if errors.As(err, &re) && re.StatusCode == http.StatusPreconditionFailed {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	got, err = t1.GetEntity(ctx, "p", "r", nil)
	must(t, err)
	must(t, json.Unmarshal(got.Value, &e))
	if n := e.Properties["N"]; n != int32(2+2*each) {
		t.Errorf("after %d increments through both servers: N = %v, want %d", 2*each, n, 2+2*each)
	}

	// A table deleted through one is gone through the other.
	_, err = s2.DeleteTable(ctx, "EndToEnd", nil)
	must(t, err)
	_, err = t1.GetEntity(ctx, "p", "r", nil)
	wantStatus(t, "GetEntity in the table the other server deleted", err, http.StatusNotFound, "TableNotFound")
	_, err = t1.AddEntity(ctx, entityJSON(t, "p", "x", nil), nil)
	wantStatus(t, "AddEntity in the table the other server deleted", err, http.StatusNotFound, "TableNotFound")
}

// TestTwoServers serves one prefix with two servers in this process, each
// over an Account of its own, as two processes would.
func TestTwoServers(t *testing.T) {
	prefix := newPrefix("two-servers")
	var cs []string
	for range 2 {
		a, _ := openAccount(t, prefix)
		srv := httptest.NewServer(server.New(a, nil))
		t.Cleanup(srv.Close)
		cs = append(cs, server.ConnectionString(srv.URL+"/"+server.DevAccountName, server.DevAccountName, server.DevAccountKey))
	}
	driveTwoServers(t, cs[0], cs[1])
}

// TestTwoServerProcesses runs the localtable command built with etcd
// support (cmd/localtable of this module) twice, with serve --etcd on the
// test cluster and one prefix, and drives the two processes.
func TestTwoServerProcesses(t *testing.T) {
	bin := buildCommand(t)
	prefix := newPrefix("two-processes")
	var cs []string
	for range 2 {
		cs = append(cs, startServer(t, bin, etcdServeArgs(prefix)...))
	}
	driveTwoServers(t, cs[0], cs[1])
	// The data is where the flags say: under the prefix and the account.
	resp, err := rawClient(t).Get(bg(), prefix+server.DevAccountName+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	must(t, err)
	if resp.Count == 0 {
		t.Errorf("no key under %s%s/", prefix, server.DevAccountName)
	}
}

// buildCommand builds the localtable command with etcd support
// (cmd/localtable of this module) into the test's directory.
func buildCommand(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "localtable")
	if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/localtable/localtable/storage/etcd/cmd/localtable").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// etcdServeArgs are the arguments of a serve on the test cluster under
// prefix, followed by more.
func etcdServeArgs(prefix string, more ...string) []string {
	return append([]string{"--addr", "127.0.0.1:0", "--log-level", "warn", "--no-explorer",
		"--etcd", strings.Join(testCluster.endpoints(), ","), "--etcd-prefix", prefix,
		"--etcd-max-request-bytes", fmt.Sprint(testMaxRequestBytes)}, more...)
}

// startServer runs the command and waits until it is ready; it returns
// the connection string the command printed. The process is stopped
// (SIGTERM, then SIGKILL) with the test.
func startServer(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	exited := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("server %s stderr:\n%s", args, stderr.String())
		}
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, out)
		cmd.Wait()
		close(exited)
	}()
	defer func() { // the rest of the output, until the process ends
		go func() {
			for range lines {
			}
		}()
	}()
	var connString string
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the server exited before it was ready:\n%s", stderr.String())
			}
			if strings.HasPrefix(l, "DefaultEndpointsProtocol=") && connString == "" {
				connString = l
			}
			if strings.HasPrefix(l, "  engine:") && !strings.Contains(l, "etcd") {
				t.Errorf("banner: %s", l)
			}
			if strings.HasPrefix(l, "localtable: ready (") {
				if connString == "" {
					t.Fatal("ready without a connection string")
				}
				return connString
			}
		case <-timeout:
			t.Fatalf("the server was not ready within a minute:\n%s", stderr.String())
		}
	}
}
