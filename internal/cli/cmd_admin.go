package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

func init() {
	register(&command{
		name: "stats", args: "[TABLE...] [flags]",
		summary: "per table: entities, partitions, bytes, the largest partitions",
		details: `Reads every entity of the tables (all by default) and prints, per table,
the entity count, the partitions, the size in bytes as the service measures
it (localtable.EntitySize: the figure its 1 MiB entity limit counts), and
the --largest partitions by entity count.` + "\n" + sourceHelp,
		examples: `
localtable stats --location ./data
localtable stats Orders --largest 10 -o json --endpoint http://127.0.0.1:10002/devstoreaccount1`,
		run: runStats,
	})
	register(&command{
		name: "check", args: "--location DIR [--account NAME] [flags]",
		summary: "verify a data directory: every record decodes, the catalog is consistent",
		details: `Opens each account of a data directory (or --account's) offline and reads
every key from one snapshot: every catalog record decodes and names a valid
table with an ID of its own, every entity key belongs to a table of the
catalog, every record decodes into an entity that passes the data model's
rules, every secondary index holds exactly its table's entries, the
metadata decodes, no unknown key exists. Prints a report per account and
table; exits 1 if anything is wrong. An index with an entry missing, extra
or stale is named with the command that rebuilds it: index repair.`,
		examples: `
localtable check --location ./data
localtable check --location ./data --account devstoreaccount1`,
		run: runCheck,
	})
	register(&command{
		name: "backup", args: "(--location DIR | --endpoint URL | --connection-string CS) (--out FILE | --checkpoint DIR) [flags]",
		summary: "a consistent backup of an account: an archive file, or a pebble checkpoint",
		details: `--out FILE writes an archive: every key of the account's store read from one
snapshot (consistent across tables), gzip-compressed with a checksum. It
keeps everything: entities with their Timestamps and ETags, tables with
their access policies. It restores into either engine: 'localtable restore'
into a data directory, 'localtable serve --restore' into memory.

Of a data directory (--location; offline) it reads the store itself. Of a
running server (--endpoint, --connection-string or the environment) it asks
the server, which streams the archive from a snapshot while it goes on
serving: memory and pebble stores alike. The request is signed with the
account key.

--checkpoint DIR (a data directory, offline) makes a pebble checkpoint
instead: a copy of the store in DIR/ACCOUNT, hard-linked where possible,
which 'localtable serve --location DIR' serves as it is.

The archive is written under a temporary name, read back to check it, and
then renamed.` + "\n" + sourceHelp,
		examples: `
localtable backup --location ./data --out data.ltbk
localtable backup --endpoint http://127.0.0.1:10002/devstoreaccount1 --out live.ltbk
localtable backup --location ./data --checkpoint ./snapshot-2024-05-01`,
		run: runBackup,
	})
	register(&command{
		name: "restore", args: "FILE --location DIR [--account NAME] [flags]",
		summary: "restore a backup archive into a data directory",
		details: `Writes the archive's store into DIR/ACCOUNT (the account the backup is of,
or --account), which must not exist yet, and checks the archive's checksum;
on any failure the directory is removed. With --etcd (the build with etcd
support) it writes under PREFIX + ACCOUNT + / on the cluster instead, which
must hold no key; on a failure there, the keys written stay, and the error
says so. Into memory, use 'localtable serve --restore FILE'.`,
		examples: `
localtable restore data.ltbk --location ./restored
localtable restore live.ltbk --location ./data --account devstoreaccount1`,
		run: runRestore,
	})
}

// tableStats are one table's figures.
type tableStats struct {
	Table      string           `json:"table"`
	Entities   int              `json:"entities"`
	Partitions int              `json:"partitions"`
	Bytes      int64            `json:"bytes"`
	Largest    []partitionStats `json:"largest"`
}

type partitionStats struct {
	PartitionKey string `json:"partitionKey"`
	Entities     int    `json:"entities"`
	Bytes        int64  `json:"bytes"`
}

func runStats(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	var src sourceFlags
	src.register(fs)
	largest := fs.Int("largest", 5, "list the `N` largest partitions of each table")
	out := outputFlag(fs, "text", "json")
	tables, err := c.parse(e, fs, args, 0, -1)
	if err != nil {
		return err
	}
	st, err := src.open(ctx, e, c, openOpts{readOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	if len(tables) == 0 {
		if tables, err = st.ListTables(ctx); err != nil {
			return err
		}
	}
	var all []tableStats
	for _, t := range tables {
		ts := tableStats{Table: t}
		var parts []partitionStats
		err := scan(ctx, st, t, queryReq{}, 0, func(ent *localtable.Entity) error {
			size := int64(localtable.EntitySize(ent))
			if len(parts) == 0 || parts[len(parts)-1].PartitionKey != ent.PartitionKey {
				parts = append(parts, partitionStats{PartitionKey: ent.PartitionKey})
			}
			p := &parts[len(parts)-1]
			p.Entities++
			p.Bytes += size
			ts.Entities++
			ts.Bytes += size
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		ts.Partitions = len(parts)
		slices.SortStableFunc(parts, func(a, b partitionStats) int {
			return cmp.Or(cmp.Compare(b.Entities, a.Entities), cmp.Compare(b.Bytes, a.Bytes))
		})
		ts.Largest = parts[:min(len(parts), *largest)]
		all = append(all, ts)
	}
	if *out == "json" {
		b, _ := json.MarshalIndent(all, "", "  ")
		_, err := fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TABLE\tENTITIES\tPARTITIONS\tBYTES\t")
	for _, ts := range all {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", ts.Table, ts.Entities, ts.Partitions, ts.Bytes)
	}
	tw.Flush()
	for _, ts := range all {
		if len(ts.Largest) == 0 {
			continue
		}
		fmt.Fprintf(e.stdout, "\nlargest partitions of %s:\n", ts.Table)
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		for _, p := range ts.Largest {
			fmt.Fprintf(tw, "  %s\t%s\t%d bytes\n", cell(p.PartitionKey), plural(p.Entities, "entity", "entities"), p.Bytes)
		}
		tw.Flush()
	}
	return nil
}

func runCheck(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	location := fs.String("location", "", "the data directory (offline: no server may be running on it)")
	account := fs.String("account", "", "check only this account (default: every account directory)")
	if _, err := c.parse(e, fs, args, 0, 0); err != nil {
		return err
	}
	if *location == "" {
		return usagef(c, "--location DIR is required: check reads a data directory offline")
	}
	accounts := []string{*account}
	if *account == "" {
		entries, err := os.ReadDir(*location)
		if err != nil {
			return err
		}
		// The accounts are the subdirectories that hold a store: check
		// opens nothing else (opening creates nothing, but a directory
		// of something else is no account to report).
		accounts = nil
		for _, en := range entries {
			if en.IsDir() && pebble.HasDatabase(filepath.Join(*location, en.Name())) {
				accounts = append(accounts, en.Name())
			}
		}
		if len(accounts) == 0 {
			if err := errLocationIsStore(*location); err != nil {
				return err
			}
			return fmt.Errorf("no account directories in %s", *location)
		}
	}
	bad := 0
	for _, name := range accounts {
		t := localTargetAt(e, *location, name)
		fmt.Fprintf(e.stdout, "account %s (%s)\n", name, t.where())
		st, err := openLocal(ctx, t, openOpts{readOnly: true})
		if err != nil {
			fmt.Fprintf(e.stdout, "  FAILED to open: %v\n", err)
			bad++
			continue
		}
		rep, err := st.acct.Verify(ctx)
		st.Close()
		if err != nil {
			fmt.Fprintf(e.stdout, "  FAILED to read: %v\n", err)
			bad++
			continue
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		for _, t := range rep.Tables {
			status := "ok"
			if len(t.Problems) > 0 {
				status = fmt.Sprintf("%d problem(s)", len(t.Problems))
			}
			fmt.Fprintf(tw, "  table %s\t%s\t%s\t%s\n", t.Name, plural(t.Entities, "entity", "entities"), plural(t.Partitions, "partition", "partitions"), status)
		}
		tw.Flush()
		for _, t := range rep.Tables {
			for _, p := range t.Problems {
				fmt.Fprintf(e.stdout, "  %s: %s\n", t.Name, p)
			}
		}
		for _, p := range rep.Problems {
			fmt.Fprintf(e.stdout, "  %s\n", p)
		}
		if rep.OK() {
			fmt.Fprintf(e.stdout, "  ok: %d keys, %d tables\n", rep.Keys, len(rep.Tables))
		} else {
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d accounts have problems", bad, len(accounts))
	}
	return nil
}

func runBackup(ctx context.Context, e *env, c *command, args []string) error {
	fs := c.flagSet()
	var src sourceFlags
	src.register(fs)
	outFile := fs.String("out", "", "write an archive to `FILE`")
	checkpoint := fs.String("checkpoint", "", "make a pebble checkpoint in `DIR`/ACCOUNT instead (a data directory only)")
	if _, err := c.parse(e, fs, args, 0, 0); err != nil {
		return err
	}
	if (*outFile == "") == (*checkpoint == "") {
		return usagef(c, "give --out FILE or --checkpoint DIR")
	}
	local, remote, err := src.resolve(e, c)
	if err != nil {
		return err
	}
	if *checkpoint != "" {
		if remote != nil {
			return usagef(c, "--checkpoint works on a data directory (--location); back up a running server with --out")
		}
		return backupCheckpoint(ctx, e, local, *checkpoint)
	}
	tmp, err := createAtomic(*outFile)
	if err != nil {
		return err
	}
	defer tmp.Abort()
	start := time.Now()
	var account string
	if remote != nil {
		account = remote.account
		if err := fetchBackup(ctx, remote, tmp); err != nil {
			return err
		}
	} else {
		st, err := openLocal(ctx, local, openOpts{})
		if err != nil {
			return err
		}
		account = local.account
		_, err = writeArchive(tmp, st.eng, account, local.kind.name)
		if cerr := st.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	h, err := readArchive(tmp, func(k, v []byte) error { return nil })
	if err != nil {
		return fmt.Errorf("the backup does not read back: %w", err)
	}
	if err := tmp.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "backed up account %s (%s): %d records to %s in %s\n", account, h.Source, h.Records, *outFile, took(time.Since(start)))
	return nil
}

// backupCheckpoint makes a checkpoint of the account of t in outDir.
func backupCheckpoint(ctx context.Context, e *env, t *localTarget, outDir string) error {
	if t.kind.checkpoint == nil {
		return fmt.Errorf("--checkpoint: the %s engine makes no checkpoints; back it up with --out", t.kind.name)
	}
	target := filepath.Join(outDir, t.account)
	if exists(target) {
		return fmt.Errorf("%s exists: a checkpoint goes into a new directory", target)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	st, err := openLocal(ctx, t, openOpts{})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := t.kind.checkpoint(st.eng, target); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "checkpoint of %s in %s (serve it with --location %s)\n", t.where(), target, outDir)
	return nil
}

// fetchBackup asks a running server for an archive of the account.
func fetchBackup(ctx context.Context, t *remoteTarget, w io.Writer) error {
	u, err := url.Parse(t.endpoint)
	if err != nil {
		return err
	}
	base := u.Scheme + "://" + u.Host
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+backupPath+"?account="+url.QueryEscape(t.account), nil)
	if err != nil {
		return err
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("X-Ms-Date", date)
	req.Header.Set("Authorization", "SharedKeyLite "+t.account+":"+signAdmin(t.key, date, t.account, backupPath))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("the server refused the backup: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

func runRestore(ctx context.Context, e *env, c *command, args []string) error {
	rc, err := parseRestore(e, c, args)
	if err != nil {
		return err
	}
	f, err := os.Open(rc.file)
	if err != nil {
		return err
	}
	defer f.Close()
	p, err := planRestore(c, rc, e.engines, f)
	if err != nil {
		return err
	}
	start := time.Now()
	h, err := restoreAccount(ctx, p, f)
	if err != nil {
		return fmt.Errorf("restoring %s: %w", rc.file, err)
	}
	fmt.Fprintf(e.stdout, "restored account %s (backup of %s taken %s from %s): %d records into %s in %s\n",
		p.target.account, h.Account, h.Created, h.Source, h.Records, p.target.where(), took(time.Since(start)))
	return nil
}

// restoreConfig is what restore's arguments say.
type restoreConfig struct {
	file    string
	account string
	opts    engineOpts
	etcd    string
}

// parseRestore reads restore's arguments.
func parseRestore(e *env, c *command, args []string) (*restoreConfig, error) {
	fs := c.flagSet()
	var rc restoreConfig
	fs.StringVar(&rc.opts.location, "location", "", "the data directory to restore into")
	fs.StringVar(&rc.account, "account", "", "the account to restore as (default: the backup's)")
	fs.StringVar(&rc.etcd, "etcd", "", "restore onto an etcd cluster at these comma-separated `endpoints` instead, under PREFIX + account + / (which must be empty); needs the build "+EtcdCommand)
	fs.StringVar(&rc.opts.etcdPrefix, "etcd-prefix", "localtable/", "with --etcd: the key `prefix`")
	pos, err := c.parse(e, fs, args, 1, 1)
	if err != nil {
		return nil, err
	}
	rc.file = pos[0]
	return &rc, nil
}

// restorePlan is where restore writes.
type restorePlan struct {
	target *localTarget
}

// planRestore decides the store a backup is restored into: the account
// is --account or the backup's (read from the header of f, which it
// rewinds), the engine the one the flags choose, which must be
// persistent.
func planRestore(c *command, rc *restoreConfig, engines engineRegistry, f io.ReadSeeker) (*restorePlan, error) {
	o := rc.opts
	if rc.etcd != "" {
		if o.location != "" {
			return nil, usagef(c, "--etcd and --location exclude each other")
		}
		if o.etcd = splitEndpoints(rc.etcd); len(o.etcd) == 0 {
			return nil, usagef(c, "--etcd %q names no endpoint", rc.etcd)
		}
		o.etcdFlag = rc.etcd
	}
	kind := engines.choose(&o)
	if !kind.persistent {
		return nil, usagef(c, "--location DIR is required (to restore into memory: localtable serve --restore FILE)")
	}
	if kind.unavailable != nil {
		return nil, kind.unavailable
	}
	// Read the header for the account's name.
	var h archiveHeader
	if _, err := readArchiveHeader(f, &h); err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	name := cmp.Or(rc.account, h.Account)
	t := &localTarget{kind: kind, opts: o, account: name}
	if kind.exists != nil && kind.exists(&o, name) {
		return nil, fmt.Errorf("%s exists: restore into a new directory", t.where())
	}
	t.opts.noSync = true
	return &restorePlan{target: t}, nil
}

// restoreAccount writes the archive r into the plan's store, which must
// be empty, and opens the account once: its catalog must load. On
// failure it discards the store, if its engine can.
func restoreAccount(ctx context.Context, p *restorePlan, r io.Reader) (archiveHeader, error) {
	t := p.target
	eng, err := t.kind.open(ctx, &t.opts, t.account)
	if err != nil {
		return archiveHeader{}, err
	}
	var h archiveHeader
	if err = checkEmpty(eng, t); err == nil {
		h, err = restoreInto(r, eng, "")
	}
	if err == nil {
		var acct *localtable.Account
		if acct, err = localtable.Open(&localtable.Options{Engine: eng}); err == nil {
			err = acct.Close()
		}
	} else {
		eng.Close()
	}
	if err == nil {
		return h, nil
	}
	if errors.Is(err, errNotEmpty) {
		return h, err
	}
	if t.kind.discard == nil {
		return h, fmt.Errorf("%w (what was written is in %s: remove it)", err, t.where())
	}
	t.kind.discard(&t.opts, t.account)
	return h, fmt.Errorf("%w (nothing was kept)", err)
}

// errNotEmpty is a restore into a store that holds data.
var errNotEmpty = errors.New("the store holds data: restore into an empty one")

// checkEmpty returns errNotEmpty if eng holds a key.
func checkEmpty(eng storage.Engine, t *localTarget) error {
	it, err := eng.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
	if it.First() {
		return fmt.Errorf("%s: %w", t.where(), errNotEmpty)
	}
	return it.Error()
}
