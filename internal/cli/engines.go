package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// The command's storage engines are registered once, in newEngines: serve
// opens its accounts through them, the data commands, check and backup
// open a data store through them, a backup is labelled with the name of
// the engine it was taken from, and restore writes into any persistent
// one. Nothing else in the command names an engine's type.

// engineOpts is what a command's flags say of where the data is kept:
// each engine reads its own fields.
type engineOpts struct {
	location            string       // --location: a data directory (pebble)
	etcd                []string     // --etcd: the cluster's endpoints
	etcdFlag            string       // --etcd as given, for the banner
	etcdPrefix          string       // --etcd-prefix
	etcdMaxRequestBytes int          // --etcd-max-request-bytes
	noSync              bool         // bulk load: no fsync per commit (the command syncs)
	readOnly            bool         // the command only reads: open the store read-only
	log                 *slog.Logger // the server's logger; nil outside serve
}

// engineKind is one storage engine of the command.
type engineKind struct {
	// name labels the engine: the Source of its backups, and messages.
	name string
	// persistent: its data outlives the process, so the data commands,
	// check, backup and restore can work on it. serve alone uses the
	// others.
	persistent bool
	// unavailable says why this build cannot open the engine; nil: it can.
	unavailable error
	// selected reports whether the flags choose this engine. The
	// registry asks the engines in order; the last one is the default.
	selected func(o *engineOpts) bool
	// open opens the engine of an account, creating its store if need be.
	open func(ctx context.Context, o *engineOpts, account string) (storage.Engine, error)
	// store is the noun of an account's store, such as "data directory".
	store string
	// where names an account's store for messages (persistent engines).
	where func(o *engineOpts, account string) string
	// exists reports whether an account's store exists: the read-only
	// commands need it, restore refuses it. nil: the engine cannot tell
	// before it is opened (restore then checks that it is empty).
	exists func(o *engineOpts, account string) bool
	// discard removes an account's store after a failed restore
	// (persistent engines); nil: what was written stays, and the
	// failure says so.
	discard func(o *engineOpts, account string) error
	// checkpoint copies an open engine's store into a new directory, as
	// the engine serves it; nil: the engine has none.
	checkpoint func(eng storage.Engine, dir string) error
	// banner returns serve's engine and data lines.
	banner func(o *engineOpts) (engine, data string)
}

// engineRegistry is the command's engines, in the order they are asked
// whether the flags select them.
type engineRegistry []*engineKind

// newEngines returns the engines of a command with cfg: etcd (with
// cfg.OpenEtcd), pebble, memory, after the extra ones.
func newEngines(cfg *Config) engineRegistry {
	r := append(engineRegistry{}, cfg.engines...)
	return append(r, etcdEngine(cfg.OpenEtcd), pebbleEngine, memoryEngine)
}

// choose returns the engine the flags select.
func (r engineRegistry) choose(o *engineOpts) *engineKind {
	for _, k := range r {
		if k.selected(o) {
			return k
		}
	}
	return r[len(r)-1]
}

// memoryEngine keeps the data in memory: serve's default.
var memoryEngine = &engineKind{
	name:     "memory",
	selected: func(*engineOpts) bool { return true },
	open: func(context.Context, *engineOpts, string) (storage.Engine, error) {
		return memory.New(&memory.Options{Logs: keyenc.LogPrefixes()}), nil
	},
	banner: func(*engineOpts) (string, string) { return "memory", "none: in memory, gone at exit" },
}

// pebbleEngine keeps each account in a pebble store in a directory of
// --location: LOCATION/ACCOUNT.
var pebbleEngine = &engineKind{
	name:       "pebble",
	persistent: true,
	store:      "data directory",
	selected:   func(o *engineOpts) bool { return o.location != "" },
	open: func(_ context.Context, o *engineOpts, account string) (storage.Engine, error) {
		return openPebble(filepath.Join(o.location, account), o.noSync, o.readOnly)
	},
	where:   func(o *engineOpts, account string) string { return filepath.Join(o.location, account) },
	exists:  func(o *engineOpts, account string) bool { return exists(filepath.Join(o.location, account)) },
	discard: func(o *engineOpts, account string) error { return os.RemoveAll(filepath.Join(o.location, account)) },
	checkpoint: func(eng storage.Engine, dir string) error {
		db, ok := eng.(*pebble.DB)
		if !ok {
			return errors.New("not a pebble store")
		}
		return db.Checkpoint(dir)
	},
	banner: func(o *engineOpts) (string, string) {
		abs, err := filepath.Abs(o.location)
		if err != nil {
			abs = o.location
		}
		return "pebble (every commit fsynced)", abs + string(filepath.Separator) + "ACCOUNT"
	},
}

// etcdEngine keeps each account's keys on an etcd cluster, under
// PREFIX/ACCOUNT/, opened with open (Config.OpenEtcd; nil in a build
// without etcd support, which then refuses --etcd).
func etcdEngine(open func(context.Context, EtcdConfig) (storage.Engine, error)) *engineKind {
	var unavailable error
	if open == nil {
		unavailable = errNoEtcd
	}
	return &engineKind{
		name:        "etcd",
		unavailable: unavailable,
		persistent:  true,
		store:       "etcd prefix",
		selected:    func(o *engineOpts) bool { return o.etcd != nil },
		open: func(ctx context.Context, o *engineOpts, account string) (storage.Engine, error) {
			if open == nil {
				return nil, errNoEtcd
			}
			return open(ctx, EtcdConfig{
				Endpoints:       o.etcd,
				Prefix:          o.etcdPrefix + account + "/",
				MaxRequestBytes: o.etcdMaxRequestBytes,
				Logger:          o.log,
			})
		},
		where: func(o *engineOpts, account string) string { return o.etcdPrefix + account + "/" },
		// exists and discard are nil: restore checks that the prefix is
		// empty once open, and a failed restore leaves the keys it
		// wrote for the user to remove (an etcd cluster has no
		// directory to drop at once).
		banner: func(o *engineOpts) (string, string) {
			return "etcd at " + o.etcdFlag + " (every commit on a quorum; servers on one prefix share the data)", "etcd keys under " + o.etcdPrefix + "ACCOUNT/"
		},
	}
}

// errNoEtcd is --etcd in a build without etcd support.
var errNoEtcd = fmt.Errorf("--etcd: this localtable is built without etcd support; the build with it is %s (go install %s@latest)", EtcdCommand, EtcdCommand)

// openPebble opens a pebble engine in dir. noSync skips the fsync of each
// commit (bulk loads, which sync at their checkpoints); readOnly opens an
// existing store to read it, writing nothing to dir.
func openPebble(dir string, noSync, readOnly bool) (storage.Engine, error) {
	db, err := pebble.Open(dir, &pebble.Options{NoSync: noSync, ReadOnly: readOnly})
	if errors.Is(err, pebble.ErrInUse) {
		return nil, &inUseError{err}
	}
	if err != nil {
		return nil, err
	}
	return db, nil
}

// inUseError is pebble.ErrInUse with what a data command can do: reach
// the server that has the directory open. serve says what it can do
// instead (servedInUse).
type inUseError struct{ err error }

func (e *inUseError) Error() string {
	return e.err.Error() + " (is a server running on it? then use --endpoint or --connection-string)"
}

func (e *inUseError) Unwrap() error { return e.err }

// servedInUse is serve's message for a data directory in use.
func servedInUse(err error) error {
	var iu *inUseError
	if !errors.As(err, &iu) {
		return err
	}
	return fmt.Errorf("%w (is a server or another program running on it? stop it, or serve another --location)", iu.err)
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
