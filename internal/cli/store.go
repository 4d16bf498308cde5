package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/server"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// store is where the data commands read and write: an account opened on
// a data directory, or a running server through aztables.
type store interface {
	ListTables(ctx context.Context) ([]string, error)
	CreateTable(ctx context.Context, name string) error
	// CheckTable returns nil if the table exists, an error that matches
	// localtable.ErrTableNotFound if it does not, or why it could not
	// tell (a refused key, an unreachable server).
	CheckTable(ctx context.Context, name string) error
	DeleteTable(ctx context.Context, name string) error
	// Query returns one page.
	Query(ctx context.Context, table string, q queryReq) (queryPage, error)
	Get(ctx context.Context, table, pk, rk string) (localtable.Entity, error)
	// Write applies one action outside a transaction and returns the new
	// ETag ("" for a delete).
	Write(ctx context.Context, table string, a localtable.Action) (localtable.ETag, error)
	// Transact applies up to 100 actions on one partition, all or none.
	Transact(ctx context.Context, table string, acts []localtable.Action) error
	// Describe names the store for messages.
	Describe() string
	Close() error
}

// queryReq is one page's request.
type queryReq struct {
	Filter string   // $filter; "" selects all
	Select []string // nil: all properties
	Top    int      // page size, 1 to 1000
	Cont   localtable.Continuation
	// Check, if set, is Filter's TypeCheck: a local store queries
	// through it, so that it notes the types the query meets (a remote
	// one cannot).
	Check *filter.TypeCheck
}

// queryPage is one page of entities.
type queryPage struct {
	Entities []localtable.Entity
	Next     localtable.Continuation
	Stats    *localtable.QueryStats // the work the page took; nil from a server that is not localtable (planHeaders)
}

// scan calls fn for each entity of a query, paging, up to limit entities
// (0: all).
func scan(ctx context.Context, st store, table string, q queryReq, limit int, fn func(*localtable.Entity) error) error {
	n := 0
	for {
		if limit > 0 && (q.Top == 0 || q.Top > limit-n) {
			q.Top = limit - n
		}
		page, err := st.Query(ctx, table, q)
		if err != nil {
			return err
		}
		for i := range page.Entities {
			if err := fn(&page.Entities[i]); err != nil {
				return err
			}
			n++
		}
		if page.Next.IsZero() || (limit > 0 && n >= limit) {
			return nil
		}
		q.Cont = page.Next
	}
}

// sourceFlags say where the data commands find their data.
type sourceFlags struct {
	location   string
	account    string
	endpoint   string
	connString string
	key        string
}

func (s *sourceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.location, "location", "", "data directory (offline: pebble, one directory per account; no server may be running on it)")
	fs.StringVar(&s.account, "account", "", "account name (default devstoreaccount1, or the endpoint's)")
	fs.StringVar(&s.endpoint, "endpoint", "", "a running server's table endpoint, such as http://127.0.0.1:10002/devstoreaccount1")
	fs.StringVar(&s.connString, "connection-string", "", "a running server's connection string (default $LOCALTABLE_CONNECTION_STRING, then $AZURE_STORAGE_CONNECTION_STRING)")
	fs.StringVar(&s.key, "account-key", "", "the account's base64 key, with --endpoint (default: the emulator key for devstoreaccount1)")
}

// remoteTarget is a running server's account: its endpoint and key.
type remoteTarget struct {
	connString string
	endpoint   string // http://host:port/account
	account    string
	key        []byte
}

// localTarget is an account's store, which the command opens itself on
// one of its engines.
type localTarget struct {
	kind    *engineKind
	opts    engineOpts
	account string
}

// localTargetAt is account's store in the data directory location, on
// the engine the registry chooses for it.
func localTargetAt(e *env, location, account string) *localTarget {
	t := &localTarget{opts: engineOpts{location: location}, account: account}
	t.kind = e.engines.choose(&t.opts)
	return t
}

// where names the account's store for messages.
func (t *localTarget) where() string { return t.kind.where(&t.opts, t.account) }

// resolve decides between a data directory and a running server.
func (s *sourceFlags) resolve(e *env, c *command) (local *localTarget, remote *remoteTarget, err error) {
	if s.location != "" {
		if s.endpoint != "" || s.connString != "" {
			return nil, nil, usagef(c, "--location (a data directory) and --endpoint/--connection-string (a server) exclude each other")
		}
		acct := s.account
		if acct == "" {
			acct = server.DevAccountName
		}
		return localTargetAt(e, s.location, acct), nil, nil
	}
	cs := s.connString
	if cs == "" && s.endpoint == "" {
		cs = e.getenv("LOCALTABLE_CONNECTION_STRING")
		if cs == "" {
			cs = e.getenv("AZURE_STORAGE_CONNECTION_STRING")
		}
	}
	if cs == "" && s.endpoint == "" {
		return nil, nil, usagef(c, "no data: give --location DIR (a data directory), or --endpoint URL or --connection-string (a running server), or set LOCALTABLE_CONNECTION_STRING")
	}
	t := &remoteTarget{}
	if cs != "" {
		kv := parseConnString(cs)
		t.account, t.endpoint = kv["accountname"], kv["tableendpoint"]
		if t.endpoint == "" {
			return nil, nil, usagef(c, "the connection string names no TableEndpoint")
		}
		if t.key, err = base64.StdEncoding.DecodeString(kv["accountkey"]); err != nil {
			return nil, nil, usagef(c, "the connection string's AccountKey is not base64")
		}
	} else {
		u, err := url.Parse(s.endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, nil, usagef(c, "--endpoint %q: want http(s)://host:port/ACCOUNT", s.endpoint)
		}
		t.endpoint = strings.TrimSuffix(s.endpoint, "/")
		t.account = s.account
		if t.account == "" {
			t.account = strings.Trim(u.Path, "/")
		}
		if t.account == "" {
			return nil, nil, usagef(c, "--endpoint %q names no account: add /ACCOUNT or --account", s.endpoint)
		}
		key := s.key
		if key == "" {
			if t.account != server.DevAccountName {
				return nil, nil, usagef(c, "--account-key: the key of account %s", t.account)
			}
			key = server.DevAccountKey
		}
		if t.key, err = base64.StdEncoding.DecodeString(key); err != nil {
			return nil, nil, usagef(c, "--account-key is not base64")
		}
	}
	if s.account != "" && s.account != t.account {
		return nil, nil, usagef(c, "--account %s, but the server's account is %s", s.account, t.account)
	}
	t.connString = server.ConnectionString(t.endpoint, t.account, base64.StdEncoding.EncodeToString(t.key))
	return nil, t, nil
}

// parseConnString reads a connection string's settings, keys lower-cased.
// UseDevelopmentStorage=true stands for the emulator's account, as the
// Azure SDKs read it: AccountName devstoreaccount1, its well-known key,
// and TableEndpoint http://127.0.0.1:10002/devstoreaccount1, on the host
// of DevelopmentStorageProxyUri if given (as .NET's SDK does). Settings
// the string names as well keep their values.
func parseConnString(cs string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(cs, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok {
			out[strings.ToLower(k)] = v
		}
	}
	if strings.EqualFold(out["usedevelopmentstorage"], "true") {
		scheme, host := "http", "127.0.0.1"
		if p, err := url.Parse(out["developmentstorageproxyuri"]); err == nil && p.Hostname() != "" {
			scheme, host = p.Scheme, p.Hostname()
		}
		dev := map[string]string{
			"accountname":   server.DevAccountName,
			"accountkey":    server.DevAccountKey,
			"tableendpoint": scheme + "://" + net.JoinHostPort(host, "10002") + "/" + server.DevAccountName,
		}
		for k, v := range dev {
			if out[k] == "" {
				out[k] = v
			}
		}
	}
	return out
}

// openOpts say how a command opens a data directory.
type openOpts struct {
	write  bool // the command writes: create the directory if need be
	noSync bool // bulk load: no fsync per commit (the command syncs)
	feed   bool // open the account with its change feed (watch)
	// readOnly: the command only reads, and the store is opened so
	// (localtable.Options.ReadOnly, and read-only on pebble): it writes
	// nothing, not even an older store's format raised, and a directory
	// that holds no store is refused, not made one.
	readOnly bool
}

// open opens the store the flags name.
func (s *sourceFlags) open(ctx context.Context, e *env, c *command, o openOpts) (store, error) {
	local, remote, err := s.resolve(e, c)
	if err != nil {
		return nil, err
	}
	if remote != nil {
		return openRemote(remote)
	}
	return openLocal(ctx, local, o)
}

// localStore is an account opened on one of the command's engines.
type localStore struct {
	acct *localtable.Account
	eng  storage.Engine
	t    *localTarget
}

// errLocationIsStore is the error of a --location that is itself a store
// (an account's directory, as a Go program's pebble.Open made it), not a
// data directory of accounts; nil if it is not. The error says the
// command that reads it.
func errLocationIsStore(location string) error {
	if location == "" || !pebble.HasDatabase(location) {
		return nil
	}
	abs, err := filepath.Abs(location)
	if err != nil {
		abs = location
	}
	return fmt.Errorf("%s is itself a store (an account's directory, as a Go program's pebble.Open makes it), not a data directory of accounts: use --location %s --account %s",
		location, filepath.Dir(abs), filepath.Base(abs))
}

// openLocal opens the account of t.
func openLocal(ctx context.Context, t *localTarget, o openOpts) (*localStore, error) {
	if err := errLocationIsStore(t.opts.location); err != nil {
		return nil, err
	}
	if !o.write && t.kind.exists != nil && !t.kind.exists(&t.opts, t.account) {
		return nil, fmt.Errorf("no data in %s (the account's directory under --location)", t.where())
	}
	opts := t.opts
	opts.noSync, opts.readOnly = o.noSync, o.readOnly
	eng, err := t.kind.open(ctx, &opts, t.account)
	if err != nil {
		return nil, err
	}
	// The data commands do not sweep expired entities (serve does): they
	// stay hidden, as every read hides them.
	lo := &localtable.Options{Engine: eng, Expiry: &localtable.ExpiryOptions{Interval: -1}, ReadOnly: o.readOnly}
	if o.feed {
		lo.Feed = &localtable.FeedOptions{}
	}
	acct, err := localtable.Open(lo)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", t.where(), err)
	}
	return &localStore{acct: acct, eng: eng, t: t}, nil
}

func (l *localStore) Describe() string { return l.t.kind.store + " " + l.t.where() }

func (l *localStore) Close() error { return l.acct.Close() }

// sync makes every commit so far durable.
func (l *localStore) sync() error {
	if s, ok := l.eng.(storage.Syncer); ok {
		return s.Sync()
	}
	return nil
}

func (l *localStore) ListTables(ctx context.Context) ([]string, error) {
	var out []string
	for t, err := range l.acct.Tables(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t.Name)
	}
	return out, nil
}

func (l *localStore) CreateTable(ctx context.Context, name string) error {
	_, err := l.acct.CreateTable(ctx, name)
	return err
}

func (l *localStore) CheckTable(ctx context.Context, name string) error {
	_, err := l.acct.GetTable(ctx, name)
	return err
}

func (l *localStore) DeleteTable(ctx context.Context, name string) error {
	return l.acct.DeleteTable(ctx, name)
}

func (l *localStore) Query(ctx context.Context, table string, q queryReq) (queryPage, error) {
	opts := localtable.QueryOptions{Select: q.Select, PageSize: q.Top, Continuation: q.Cont}
	switch {
	case q.Check != nil:
		opts.Filter = q.Check
	case q.Filter != "":
		f, err := filter.Parse(q.Filter)
		if err != nil {
			return queryPage{}, err
		}
		opts.Filter = f
	}
	t := l.acct.Table(table)
	p, err := t.Query(ctx, &opts)
	if err == nil && q.Check != nil {
		err = q.Check.Probe(ctx, t, 0) // for the hints, if the query noted no entity (read through an index)
	}
	if err != nil {
		return queryPage{}, err
	}
	return queryPage{Entities: p.Entities, Next: p.Continuation, Stats: &p.Stats}, nil
}

// explainer is a store that tells how it would read a query's first
// page: the planner's plan (localtable.Table.Explain), which names the
// index the page reads. A server does not tell it (it reports the index
// it read in the page's headers instead: planHeaders).
type explainer interface {
	Explain(ctx context.Context, table string, q queryReq) (string, error)
}

// Explain returns Table.Explain's plan of q's first page.
func (l *localStore) Explain(ctx context.Context, table string, q queryReq) (string, error) {
	opts := localtable.QueryOptions{PageSize: q.Top, Continuation: q.Cont}
	if q.Filter != "" {
		f, err := filter.Parse(q.Filter)
		if err != nil {
			return "", err
		}
		opts.Filter = f // not q.Check: the filter's own plan is part of Explain's
	}
	return l.acct.Table(table).Explain(ctx, &opts)
}

func (l *localStore) Get(ctx context.Context, table, pk, rk string) (localtable.Entity, error) {
	return l.acct.Table(table).Get(ctx, pk, rk, nil)
}

func (l *localStore) Write(ctx context.Context, table string, a localtable.Action) (localtable.ETag, error) {
	t := l.acct.Table(table)
	switch a.Type {
	case localtable.ActionInsert:
		return t.Insert(ctx, a.Entity)
	case localtable.ActionUpdateReplace:
		return t.Update(ctx, a.Entity, &localtable.UpdateOptions{IfMatch: a.IfMatch})
	case localtable.ActionUpdateMerge:
		return t.Update(ctx, a.Entity, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: a.IfMatch})
	case localtable.ActionUpsertReplace:
		return t.Upsert(ctx, a.Entity, nil)
	case localtable.ActionUpsertMerge:
		return t.Upsert(ctx, a.Entity, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
	case localtable.ActionDelete:
		return "", t.Delete(ctx, a.Entity.PartitionKey, a.Entity.RowKey, &localtable.DeleteOptions{IfMatch: a.IfMatch})
	}
	return "", errors.New("unknown action")
}

func (l *localStore) Transact(ctx context.Context, table string, acts []localtable.Action) error {
	_, err := l.acct.Table(table).Transact(ctx, acts)
	return err
}
