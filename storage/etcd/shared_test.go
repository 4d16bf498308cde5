package etcd_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable"
)

// Several Accounts on one prefix, as several processes on several
// machines run them: the table layer commits with conditions
// (storage.VersionedEngine.CommitIf), so ETags, If-Match, transactions
// and the catalog stay correct between them. The scenario runs with two
// Accounts in two goroutine groups of this process, and with two child
// processes (this test binary, re-executed).

// sharedLoad sizes the scenario: increments per goroutine, and the table
// names every participant tries to create.
func sharedLoad() (increments, names int) {
	if testing.Short() {
		return 10, 8
	}
	return 40, 20
}

// sharedSetup creates the table the participants increment counters in.
func sharedSetup(t *testing.T, a *localtable.Account) {
	tbl, err := a.CreateTable(bg(), "Counters")
	must(t, err)
	for _, rk := range []string{"single", "x", "y"} {
		_, err := tbl.Insert(bg(), localtable.Entity{PartitionKey: "c", RowKey: rk, Properties: localtable.Properties{"N": localtable.Int64Value(0)}})
		must(t, err)
	}
}

// sharedResult is what one participant did.
type sharedResult struct {
	acked   int      // increments acknowledged
	created []string // tables it created
}

// sharedWork is one participant: two goroutines that first create every
// table of the shared list, one as "Tnn", the other as "tnn" (the same
// names: table names ignore case); then one increments a counter by Get
// and Update with If-Match, the other two counters at once by Get and
// Transact with If-Match on both, each retrying on ErrConditionNotMet
// until it has made its increments.
func sharedWork(ctx context.Context, a *localtable.Account, increments, names int) (sharedResult, error) {
	tbl := a.Table("Counters")
	var mu sync.Mutex
	var res sharedResult
	errc := make(chan error, 2)
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- func() error {
				for i := range names {
					name := fmt.Sprintf("T%02d", i)
					if g == 1 {
						name = strings.ToLower(name)
					}
					_, err := a.CreateTable(ctx, name)
					if errors.Is(err, localtable.ErrTableExists) {
						continue
					}
					if err != nil {
						return err
					}
					mu.Lock()
					res.created = append(res.created, strings.ToUpper(name))
					mu.Unlock()
				}
				for range increments {
					for {
						var err error
						if g == 0 {
							e, gerr := tbl.Get(ctx, "c", "single", nil)
							if gerr != nil {
								return gerr
							}
							_, err = tbl.Update(ctx, localtable.Entity{PartitionKey: "c", RowKey: "single",
								Properties: localtable.Properties{"N": localtable.Int64Value(e.Properties["N"].Int64() + 1)}}, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: e.ETag})
						} else {
							x, errx := tbl.Get(ctx, "c", "x", nil)
							y, erry := tbl.Get(ctx, "c", "y", nil)
							if err := errors.Join(errx, erry); err != nil {
								return err
							}
							_, err = tbl.Transact(ctx, []localtable.Action{
								{Type: localtable.ActionUpdateReplace, IfMatch: x.ETag, Entity: localtable.Entity{PartitionKey: "c", RowKey: "x",
									Properties: localtable.Properties{"N": localtable.Int64Value(x.Properties["N"].Int64() + 1)}}},
								{Type: localtable.ActionUpdateMerge, IfMatch: y.ETag, Entity: localtable.Entity{PartitionKey: "c", RowKey: "y",
									Properties: localtable.Properties{"N": localtable.Int64Value(y.Properties["N"].Int64() + 1)}}},
							})
						}
						if err == nil {
							mu.Lock()
							res.acked++
							mu.Unlock()
							break
						}
						if !errors.Is(err, localtable.ErrConditionNotMet) {
							return err
						}
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errc)
	var errs []error
	for err := range errc {
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

// sharedCheck checks the outcome of participants that did sharedWork on
// the prefix of a: no acknowledged increment lost, both counters of the
// transactions equal, each table created exactly once, and each table
// holding only its own entities (two tables of one ID would show each
// other's).
func sharedCheck(t *testing.T, a *localtable.Account, names int, results []sharedResult) {
	t.Helper()
	tbl := a.Table("Counters")
	n := map[string]int64{}
	for _, rk := range []string{"single", "x", "y"} {
		e, err := tbl.Get(bg(), "c", rk, nil)
		must(t, err)
		n[rk] = e.Properties["N"].Int64()
	}
	acked := 0
	wins := map[string]int{}
	for _, r := range results {
		acked += r.acked
		for _, name := range r.created {
			wins[name]++
		}
	}
	if n["single"]+n["x"] != int64(acked) || n["x"] != n["y"] {
		t.Errorf("counters single %d + x %d (y %d) for %d acknowledged increments: updates were lost", n["single"], n["x"], n["y"], acked)
	}
	for i := range names {
		name := fmt.Sprintf("T%02d", i)
		if wins[name] != 1 {
			t.Errorf("table %s created %d times, want once", name, wins[name])
		}
		_, err := a.Table(name).Insert(bg(), localtable.Entity{PartitionKey: "p", RowKey: name})
		must(t, err)
	}
	for i := range names {
		name := fmt.Sprintf("T%02d", i)
		page, err := a.Table(name).Query(bg(), nil)
		must(t, err)
		if len(page.Entities) != 1 || page.Entities[0].RowKey != name {
			var rks []string
			for _, e := range page.Entities {
				rks = append(rks, e.RowKey)
			}
			t.Errorf("table %s holds %v: tables share an ID", name, rks)
		}
	}
	t.Logf("%d increments acknowledged, %d tables", acked, len(wins))
}

// TestTwoAccounts runs the scenario with two Accounts on one prefix in
// this process, each in goroutines of its own.
func TestTwoAccounts(t *testing.T) {
	prefix := newPrefix("two-accounts")
	a, _ := openAccount(t, prefix)
	sharedSetup(t, a)
	b, _ := openAccount(t, prefix)
	increments, names := sharedLoad()
	results := make([]sharedResult, 2)
	var wg sync.WaitGroup
	for i, acct := range []*localtable.Account{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if results[i], err = sharedWork(bg(), acct, increments, names); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	sharedCheck(t, b, names, results)
}

// Environment of a child process of TestTwoProcesses (with envEndpoints).
const (
	envChildPrefix = "LOCALTABLE_ETCD_TEST_PREFIX"
	envChildStart  = "LOCALTABLE_ETCD_TEST_START" // Unix nanoseconds to start at
)

// TestSharedChild is a child process of TestTwoProcesses; it does nothing
// unless LOCALTABLE_ETCD_TEST_PREFIX is set. It runs sharedWork on that
// prefix from the start time, and prints what it did: "acked N", then a
// "created NAME" line per table it created.
func TestSharedChild(t *testing.T) {
	prefix := os.Getenv(envChildPrefix)
	if prefix == "" {
		t.Skip("run by TestTwoProcesses")
	}
	start, err := strconv.ParseInt(os.Getenv(envChildStart), 10, 64)
	must(t, err)
	a, _ := openAccount(t, prefix)
	time.Sleep(time.Until(time.Unix(0, start)))
	increments, names := sharedLoad()
	res, err := sharedWork(bg(), a, increments, names)
	must(t, err)
	fmt.Printf("acked %d\n", res.acked)
	for _, name := range res.created {
		fmt.Printf("created %s\n", name)
	}
}

// TestTwoProcesses runs the scenario with two processes on one prefix:
// this test binary twice, as children, on this process's cluster.
func TestTwoProcesses(t *testing.T) {
	prefix := newPrefix("two-processes")
	a, _ := openAccount(t, prefix)
	sharedSetup(t, a)
	start := time.Now().Add(2 * time.Second) // both children connected by then
	args := []string{"-test.run=^TestSharedChild$", "-test.count=1"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	type child struct {
		cmd    *exec.Cmd
		stdout strings.Builder
		stderr strings.Builder
	}
	children := make([]*child, 2)
	for i := range children {
		c := &child{cmd: exec.Command(os.Args[0], args...)}
		c.cmd.Env = append(os.Environ(),
			envEndpoints+"="+strings.Join(testCluster.endpoints(), ","),
			envChildPrefix+"="+prefix,
			envChildStart+"="+strconv.FormatInt(start.UnixNano(), 10))
		c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
		must(t, c.cmd.Start())
		children[i] = c
	}
	results := make([]sharedResult, len(children))
	for i, c := range children {
		done := make(chan error, 1)
		go func() { done <- c.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("child %d: %v\nstdout:\n%s\nstderr:\n%s", i, err, c.stdout.String(), c.stderr.String())
			}
		case <-time.After(3 * time.Minute):
			c.cmd.Process.Kill()
			t.Fatalf("child %d did not finish", i)
		}
		sc := bufio.NewScanner(strings.NewReader(c.stdout.String()))
		sawAcked := false
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
				results[i].acked, _ = strconv.Atoi(v)
				sawAcked = true
			}
			if v, ok := strings.CutPrefix(sc.Text(), "created "); ok {
				results[i].created = append(results[i].created, v)
			}
		}
		if !sawAcked {
			t.Fatalf("child %d reported nothing:\n%s", i, c.stdout.String())
		}
	}
	_, names := sharedLoad()
	sharedCheck(t, a, names, results)
}

// TestTableDeletedElsewhere: an Account whose catalog holds a table that
// another Account deleted, or deleted and re-created, answers as the
// cluster is, not as its cache was.
func TestTableDeletedElsewhere(t *testing.T) {
	prefix := newPrefix("deleted-elsewhere")
	a, _ := openAccount(t, prefix)
	ta, err := a.CreateTable(bg(), "Orders")
	must(t, err)
	_, err = ta.Insert(bg(), localtable.Entity{PartitionKey: "p", RowKey: "old"})
	must(t, err)
	b, _ := openAccount(t, prefix) // its catalog holds Orders
	tb := b.Table("Orders")
	must(t, a.DeleteTable(bg(), "Orders"))
	if _, err := tb.Query(bg(), nil); !errors.Is(err, localtable.ErrTableNotFound) {
		t.Errorf("Query = %v, want ErrTableNotFound", err)
	}
	if _, err := tb.Insert(bg(), localtable.Entity{PartitionKey: "p", RowKey: "x"}); !errors.Is(err, localtable.ErrTableNotFound) {
		t.Errorf("Insert = %v, want ErrTableNotFound", err)
	}
	ta, err = a.CreateTable(bg(), "Orders")
	must(t, err)
	if _, err := tb.Get(bg(), "p", "old", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
		t.Errorf("Get of an entity of the deleted incarnation = %v, want ErrEntityNotFound", err)
	}
	_, err = tb.Insert(bg(), localtable.Entity{PartitionKey: "p", RowKey: "new"})
	must(t, err)
	if _, err := ta.Get(bg(), "p", "new", nil); err != nil {
		t.Errorf("the other's Insert is not in the re-created table: %v", err)
	}
	page, err := b.ListTables(bg(), nil)
	if err != nil || len(page.Tables) != 1 {
		t.Errorf("ListTables = %v, %v", page.Tables, err)
	}
}
