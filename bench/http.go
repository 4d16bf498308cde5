package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// The HTTP servers.
const (
	hLtMem  = "localtable memory"
	hLtPeb  = "localtable pebble"
	hAzurit = "Azurite memory"
)

// The HTTP workloads, in the order they run.
const (
	hwGet    = "point get"
	hwRange  = "range of 100 rows"
	hwPart   = "partition scan, Int32 filter"
	hwFull   = "full-table filter, 1% match"
	hwInsert = "single insert"
	hwTx100  = "transaction of 100"
	hwUpdate = "ETag-contended update"
)

// wireJSON is r as the JSON an SDK sends, every typed property annotated
// (a Double whose value is whole would otherwise be read as an Int32).
func (r *row) wireJSON() []byte {
	b, err := json.Marshal(map[string]any{
		"PartitionKey": r.PartitionKey, "RowKey": r.RowKey,
		"Name": r.Name, "Email": r.Email, "Notes": r.Notes,
		"Age":    r.Age,
		"Visits": strconv.FormatInt(r.Visits, 10), "Visits@odata.type": "Edm.Int64",
		"Score": r.Score, "Score@odata.type": "Edm.Double",
		"Active": r.Active,
		"Joined": r.Joined.Format(time.RFC3339Nano), "Joined@odata.type": "Edm.DateTime",
		"ID": r.ID.String(), "ID@odata.type": "Edm.Guid",
		"Payload": base64.StdEncoding.EncodeToString(r.Payload), "Payload@odata.type": "Edm.Binary",
	})
	if err != nil {
		panic(err)
	}
	return b
}

// String is g in the 8-4-4-4-12 form.
func (g guid) String() string { b, _ := g.MarshalText(); return string(b) }

// httpTarget is a server under test with its SDK client.
type httpTarget struct {
	proc   *serverProc
	client *aztables.Client
	fig    serverFigure
}

// newClient makes a Go SDK table client for the server, with retries off
// and a connection pool large enough for the workers.
func newClient(p *serverProc, workers int) (*aztables.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 4*workers, 4*workers
	// Node (Azurite) closes a keep-alive connection idle for 5 s; a POST
	// sent on one as it closes fails with "connection reset by peer" and
	// is not retried (it is not idempotent). Drop idle connections well
	// before that.
	tr.IdleConnTimeout = 2 * time.Second
	svc, err := aztables.NewServiceClientFromConnectionString(p.connString(), &aztables.ClientOptions{
		ClientOptions: azcore.ClientOptions{
			Retry:     policy.RetryOptions{MaxRetries: -1},
			Transport: &http.Client{Transport: tr, Timeout: 2 * time.Minute},
		},
	})
	if err != nil {
		return nil, err
	}
	// A server started with --index on the table has created it.
	var re *azcore.ResponseError
	if _, err := svc.CreateTable(ctx, tableName, nil); err != nil && !(errors.As(err, &re) && re.ErrorCode == string(aztables.TableAlreadyExists)) {
		return nil, fmt.Errorf("%s: create table: %w", p.name, err)
	}
	return svc.NewClient(tableName), nil
}

// httpRun runs the HTTP workloads.
type httpRun struct {
	cfg     config
	logf    func(string, ...any)
	targets []*httpTarget
	res     *results
}

// load inserts the HTTP data set into a server: transactions of 100
// entities of one partition, in a shuffled order, from the workers.
func (h *httpRun) load(t *httpTarget) error {
	s := h.cfg.HTTPData
	type batch struct{ rows []int }
	var batches []batch
	order := shuffled(s.n(), 5)
	byPart := make([][]int, s.Parts)
	for _, i := range order {
		byPart[i/s.Rows] = append(byPart[i/s.Rows], i)
	}
	for _, rows := range byPart {
		for len(rows) > 0 {
			n := min(100, len(rows))
			batches = append(batches, batch{rows[:n]})
			rows = rows[n:]
		}
	}
	bo := shuffled(len(batches), 6)
	cpu0, _ := procCPU(t.proc.pid())
	t0 := time.Now()
	var next atomic.Int64
	errs := make(chan error, h.cfg.Workers)
	var wg sync.WaitGroup
	for range h.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(bo) {
					return
				}
				b := batches[bo[k]]
				acts := make([]aztables.TransactionAction, len(b.rows))
				for j, i := range b.rows {
					r := s.makeRow(i)
					acts[j] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: r.wireJSON()}
				}
				if _, err := t.client.SubmitTransaction(ctx, acts, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("loading %s: %w", t.proc.name, err)
	}
	cpu1, _ := procCPU(t.proc.pid())
	t.fig.LoadSeconds = time.Since(t0).Seconds()
	t.fig.LoadCPUSecs = (cpu1 - cpu0).Seconds()
	t.fig.RSSLoaded, _ = procStatus(t.proc.pid(), "VmRSS")
	h.logf("loaded %-18s %d entities over HTTP in %.1fs (server CPU %.1fs)", t.proc.name, s.n(), t.fig.LoadSeconds, t.fig.LoadCPUSecs)
	return nil
}

// httpOp is one operation of a worker: i numbers the operations of the
// phase across workers. It returns the conflicts it met.
type httpOp func(c *aztables.Client, round, i int) (conflicts int, err error)

// phase runs op from the workers for the phase time on one server, and
// returns its figures: ops, throughput, server CPU per op, latencies.
func (h *httpRun) phase(t *httpTarget, round int, op httpOp) (ops int, opsSec, cpuPerOp float64, lat []time.Duration, conflicts int, err error) {
	pid := t.proc.pid()
	cpu0, err := procCPU(pid)
	if err != nil {
		return
	}
	start := time.Now()
	deadline := start.Add(h.cfg.HTTPPhase)
	var next atomic.Int64
	var conf atomic.Int64
	lats := make([][]time.Duration, h.cfg.Workers)
	errs := make(chan error, h.cfg.Workers)
	var wg sync.WaitGroup
	for w := range h.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every worker does at least one operation, however late
			// it starts on a busy machine.
			for first := true; first || time.Now().Before(deadline); first = false {
				i := int(next.Add(1)) - 1
				if i >= h.cfg.MaxOps {
					return
				}
				t0 := time.Now()
				c, err := op(t.client, round, i)
				if err != nil {
					errs <- err
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
				conf.Add(int64(c))
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	cpu1, err := procCPU(pid)
	if err != nil {
		return
	}
	close(errs)
	if err = <-errs; err != nil {
		return
	}
	for _, l := range lats {
		lat = append(lat, l...)
	}
	ops = len(lat)
	if ops == 0 {
		return 0, 0, 0, nil, 0, errors.New("no operation completed")
	}
	slices.Sort(lat)
	return ops, float64(ops) / took.Seconds(), float64((cpu1 - cpu0).Nanoseconds()) / float64(ops), lat, int(conf.Load()), nil
}

// interleave runs a workload on every server, round after round.
func (h *httpRun) interleave(workload string, op httpOp) error {
	return h.interleaveWrites(workload, op, "")
}

// interleaveWrites is interleave for a workload that inserts entities
// whose RowKeys begin with prefix (none: ""): after each phase, untimed
// and outside the CPU measured, it removes them, so that every phase
// sees the data set at its size and a server's peak RSS is not that of
// every entity the workloads ever inserted.
func (h *httpRun) interleaveWrites(workload string, op httpOp, prefix string) error {
	figs := make([]httpFigure, len(h.targets))
	conflicts := make([]int, len(h.targets))
	for r := range h.cfg.Rounds {
		for j, t := range h.targets {
			ops, rate, cpu, lat, c, err := h.phase(t, r, op)
			if err == nil && prefix != "" {
				err = removeInserted(t.client, prefix)
			}
			if err != nil {
				return fmt.Errorf("HTTP %s on %s: %w", workload, t.proc.name, err)
			}
			f := &figs[j]
			f.Ops = append(f.Ops, ops)
			f.OpsPerSec = append(f.OpsPerSec, rate)
			f.CPUPerOpNs = append(f.CPUPerOpNs, cpu)
			f.P50Ns = append(f.P50Ns, float64(quantile(lat, 0.50)))
			f.P99Ns = append(f.P99Ns, float64(quantile(lat, 0.99)))
			conflicts[j] += c
		}
	}
	for j, t := range h.targets {
		f := &figs[j]
		f.Workload, f.Server = workload, t.proc.name
		f.MedOpsSec, f.MedCPUPerOp = median(f.OpsPerSec), median(f.CPUPerOpNs)
		f.MedP50, f.MedP99 = median(f.P50Ns), median(f.P99Ns)
		if total := sum(f.Ops); conflicts[j] > 0 && total > 0 {
			f.Conflicts = float64(conflicts[j]) / float64(total)
		}
		h.logf("HTTP %-29s %-18s %7.0f op/s  CPU %s/op  p50 %s  p99 %s", workload, f.Server, f.MedOpsSec, fmtNs(f.MedCPUPerOp), fmtNs(f.MedP50), fmtNs(f.MedP99))
	}
	h.res.HTTP = append(h.res.HTTP, figs...)
	return nil
}

// removeInserted deletes the entities whose RowKeys begin with prefix,
// in transactions of up to 100 of one partition.
func removeInserted(c *aztables.Client, prefix string) error {
	f, sel := "RowKey ge '"+prefix+"' and RowKey lt '"+prefix+"~'", "PartitionKey,RowKey"
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f, Select: &sel})
	byPart := map[string][]string{}
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, b := range page.Entities {
			var k struct{ PartitionKey, RowKey string }
			if err := json.Unmarshal(b, &k); err != nil {
				return err
			}
			byPart[k.PartitionKey] = append(byPart[k.PartitionKey], k.RowKey)
		}
	}
	for p, rks := range byPart {
		for len(rks) > 0 {
			n := min(100, len(rks))
			acts := make([]aztables.TransactionAction, n)
			for j, r := range rks[:n] {
				e, err := json.Marshal(map[string]string{"PartitionKey": p, "RowKey": r})
				if err != nil {
					return err
				}
				acts[j] = aztables.TransactionAction{ActionType: aztables.TransactionTypeDelete, Entity: e}
			}
			if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
				return fmt.Errorf("removing what the phase inserted: %w", err)
			}
			rks = rks[n:]
		}
	}
	return nil
}

// count lists the entities a filter selects, page after page.
func count(c *aztables.Client, f string) (int, error) {
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f})
	n := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return n, err
		}
		n += len(page.Entities)
	}
	return n, nil
}

// run runs the HTTP workloads on the targets.
func (h *httpRun) run() error {
	s := h.cfg.HTTPData
	const nkeys = 1 << 12
	keys := pick(nkeys, s.n(), 7)
	if err := h.interleave(hwGet, func(c *aztables.Client, _, i int) (int, error) {
		p, r := s.keys(keys[i%nkeys])
		resp, err := c.GetEntity(ctx, p, r, nil)
		if err == nil && len(resp.Value) < 300 {
			err = fmt.Errorf("get %s/%s: %d bytes", p, r, len(resp.Value))
		}
		return 0, err
	}); err != nil {
		return err
	}
	parts, starts := pick(nkeys, s.Parts, 8), pick(nkeys, max(1, s.Rows-100), 9)
	if err := h.interleave(hwRange, func(c *aztables.Client, _, i int) (int, error) {
		p := pk(parts[i%nkeys])
		lo := starts[i%nkeys]
		n, err := count(c, "PartitionKey eq '"+p+"' and RowKey ge '"+rk(lo)+"' and RowKey lt '"+rk(lo+100)+"'")
		if err == nil && n != min(100, s.Rows) {
			err = errCount(hwRange, n, 100)
		}
		return 0, err
	}); err != nil {
		return err
	}
	if err := h.interleave(hwPart, func(c *aztables.Client, _, i int) (int, error) {
		p := parts[i%nkeys]
		n, err := count(c, "PartitionKey eq '"+pk(p)+"' and Age gt 50")
		if want := s.ageMatches(p); err == nil && n != want {
			err = errCount(hwPart, n, want)
		}
		return 0, err
	}); err != nil {
		return err
	}
	fullWant := s.scoreMatches()
	if err := h.interleave(hwFull, func(c *aztables.Client, _, _ int) (int, error) {
		n, err := count(c, "Score lt 1.0")
		if err == nil && n != fullWant {
			err = errCount(hwFull, n, fullWant)
		}
		return 0, err
	}); err != nil {
		return err
	}
	if err := h.interleaveWrites(hwInsert, func(c *aztables.Client, round, i int) (int, error) {
		r := templateRow(pk(i%s.Parts), "h"+pad(round, 2)+"-"+pad(i, 7))
		_, err := c.AddEntity(ctx, r.wireJSON(), nil)
		return 0, err
	}, "h"); err != nil {
		return err
	}
	if err := h.interleaveWrites(hwTx100, func(c *aztables.Client, round, i int) (int, error) {
		acts := make([]aztables.TransactionAction, 100)
		p := pk(i % s.Parts)
		for j := range acts {
			r := templateRow(p, "x"+pad(round, 2)+"-"+pad(i, 6)+"-"+pad(j, 3))
			acts[j] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: r.wireJSON()}
		}
		_, err := c.SubmitTransaction(ctx, acts, nil)
		return 0, err
	}, "x"); err != nil {
		return err
	}
	return h.interleave(hwUpdate, func(c *aztables.Client, _, _ int) (int, error) {
		return updateHTTP(c, pk(0), rk(0))
	})
}

// updateHTTP adds one to Visits of entity (pk, rk) under its ETag,
// retrying when another client changed it first (412).
func updateHTTP(c *aztables.Client, pk, rk string) (int, error) {
	for conflicts := 0; ; conflicts++ {
		resp, err := c.GetEntity(ctx, pk, rk, nil)
		if err != nil {
			return conflicts, err
		}
		var e struct{ Visits string }
		if err := json.Unmarshal(resp.Value, &e); err != nil {
			return conflicts, err
		}
		v, err := strconv.ParseInt(e.Visits, 10, 64)
		if err != nil {
			return conflicts, fmt.Errorf("value of Visits %q: %v", e.Visits, err)
		}
		body, _ := json.Marshal(map[string]any{
			"PartitionKey": pk, "RowKey": rk,
			"Visits": strconv.FormatInt(v+1, 10), "Visits@odata.type": "Edm.Int64",
		})
		etag := resp.ETag
		_, err = c.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeMerge})
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusPreconditionFailed {
			return conflicts, err
		}
	}
}

// runHTTP starts the servers (Azurite when az is not nil), loads them,
// runs the workloads, and stops them.
func runHTTP(cfg config, root, work string, az *azurite, res *results, logf func(string, ...any)) error {
	h := &httpRun{cfg: cfg, logf: logf, res: res}
	bin, err := buildLocaltable(root, work)
	if err != nil {
		return err
	}
	defer func() {
		for _, t := range h.targets {
			t.proc.stop()
		}
	}()
	add := func(p *serverProc, err error) error {
		if err != nil {
			return err
		}
		t := &httpTarget{proc: p, fig: serverFigure{Server: p.name, Version: p.version, StartupMs: float64(p.startup.Microseconds()) / 1000}}
		h.targets = append(h.targets, t)
		if t.client, err = newClient(p, cfg.Workers); err != nil {
			return err
		}
		return h.load(t)
	}
	if err := add(startLocaltable(hLtMem, bin, "")); err != nil {
		return err
	}
	pebDir := filepath.Join(work, "localtable-pebble-server")
	if err := os.MkdirAll(pebDir, 0o755); err != nil {
		return err
	}
	if err := add(startLocaltable(hLtPeb, bin, pebDir)); err != nil {
		return err
	}
	if az != nil {
		azDir := filepath.Join(work, "azurite")
		if err := os.MkdirAll(azDir, 0o755); err != nil {
			return err
		}
		if err := add(startAzurite(az, azDir)); err != nil {
			return err
		}
	}
	if err := h.run(); err != nil {
		return err
	}
	if err := h.indexWorkload(bin); err != nil { // index.go
		return err
	}
	for _, t := range h.targets {
		t.fig.PeakRSS, _ = procStatus(t.proc.pid(), "VmHWM")
		if t.fig.Version == "" {
			t.fig.Version = res.Versions["localtable"]
		}
		res.Servers = append(res.Servers, t.fig)
	}
	return nil
}

// httpOnly runs only the workloads over HTTP (the servers', and the
// index's on a server started with --index), keeping the other figures of
// out's results.json, and writes the outputs.
func httpOnly(cfg config, out, doc, cmd string, logf func(string, ...any)) error {
	dir, err := benchDir()
	if err != nil {
		return err
	}
	return measureApart(cfg, out, doc, cmd, "localtable-bench-http-", func(res *results, work, version string) error {
		if k := res.Config; len(res.HTTP) > 0 && (k.HTTPData != cfg.HTTPData || k.Rounds != cfg.Rounds || k.HTTPPhase != cfg.HTTPPhase) {
			return fmt.Errorf("-http-only: %s/results.json was measured with %d entities over HTTP, %d rounds of %v, not %d, %d of %v: write elsewhere (-out)",
				out, k.HTTPData.n(), k.Rounds, k.HTTPPhase, cfg.HTTPData.n(), cfg.Rounds, cfg.HTTPPhase)
		}
		apart := &apartRun{Command: cmd, Version: version, Started: time.Now().UTC(), LoadStart: loadAvg()}
		// The servers' figures name the localtable measured: this one.
		fresh := &results{Config: cfg, Machine: res.Machine, Versions: map[string]string{"localtable": version}}
		var az *azurite
		if cfg.Azurite {
			var skip string
			if az, skip = setupAzurite(dir, cfg.InstallTimeout, logf); skip != "" {
				logf("%s", skip)
				fresh.Skipped = append(fresh.Skipped, skip)
			} else {
				fresh.Versions["Azurite"] = az.version + " (node " + az.node + ")"
			}
		}
		if err := runHTTP(cfg, filepath.Dir(dir), work, az, fresh, logf); err != nil {
			return err
		}
		apart.LoadEnd = loadAvg()
		res.HTTP, res.Servers, res.HTTPApart = fresh.HTTP, fresh.Servers, apart
		if fresh.Index != nil {
			if res.Index == nil {
				res.Index = &indexResults{}
			}
			res.Index.HTTP, res.Index.Server = fresh.Index.HTTP, fresh.Index.Server
		}
		if res.Versions == nil {
			res.Versions = map[string]string{}
		}
		if v, ok := fresh.Versions["Azurite"]; ok {
			res.Versions["Azurite"] = v
		}
		return nil
	})
}
