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
	"os"
	"strings"
)

// Main runs the command with args (without the program's name), its
// output on stdout and stderr, and returns the process's exit status: 0,
// 1 for a failure (reported on stderr), 2 for a mistake in the command
// line.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if err := run(ctx, args, stdout, stderr); err != nil {
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
	e := &env{stdin: os.Stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	err := dispatch(ctx, e, args)
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}
