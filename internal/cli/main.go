// Package cli is the localtable command (cmd/localtable): the Table REST
// server (serve) and the data tools. It is a package, not only a main, so
// that a build of the command with more engines reuses it whole:
// github.com/localtable/localtable/storage/etcd/cmd/localtable, in the
// etcd module, is the same command with serve --etcd (see Config).
//
// 'localtable --help' describes the commands, and cmd/localtable's
// documentation the defaults.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/localtable/localtable/storage"
)

// Config extends the command with engines that live outside the main
// module. The zero Config (or nil) is the plain localtable command.
type Config struct {
	// OpenEtcd opens the engine of one served account on an etcd
	// cluster, for serve --etcd. nil means the command has no etcd
	// support: serve --etcd then fails with an error that names the
	// build that has it (EtcdCommand).
	OpenEtcd func(ctx context.Context, c EtcdConfig) (storage.Engine, error)

	// engines are asked before the command's own (tests register
	// engines of their own here).
	engines []*engineKind
}

// EtcdConfig is what serve's flags say of one account's etcd engine.
type EtcdConfig struct {
	Endpoints       []string     // --etcd: the cluster's client URLs or host:port
	Prefix          string       // the account's key prefix: --etcd-prefix, the account's name, "/"
	MaxRequestBytes int          // --etcd-max-request-bytes; 0: etcd's default
	Logger          *slog.Logger // the server's logger
}

// EtcdCommand is the import path of the localtable command with etcd
// support, in the etcd module.
const EtcdCommand = "github.com/localtable/localtable/storage/etcd/cmd/localtable"

// Main runs the command that cfg (nil: the plain one) describes with args
// (without the program's name), its output on stdout and stderr, and
// returns the process's exit status: 0, 1 for a failure (reported on
// stderr), 2 for a mistake in the command line.
func Main(ctx context.Context, cfg *Config, args []string, stdout, stderr io.Writer) int {
	if err := runConfig(ctx, cfg, args, stdout, stderr); err != nil {
		// A *localtable.Error says "localtable: " itself: say it once.
		msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "localtable: "), ": localtable: ", ": ")
		fmt.Fprintln(stderr, "localtable:", msg)
		return exitCode(err)
	}
	return 0
}

// run is the command, with its I/O injectable for tests. A command that
// prints its help returns nil.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runConfig(ctx, nil, args, stdout, stderr)
}

func runConfig(ctx context.Context, cfg *Config, args []string, stdout, stderr io.Writer) error {
	if cfg == nil {
		cfg = &Config{}
	}
	e := &env{stdin: os.Stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, engines: newEngines(cfg)}
	err := dispatch(ctx, e, args)
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}
