package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
)

// env is what a command reads and writes.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// engines are the command's storage engines (newEngines).
	engines engineRegistry
}

// command is a subcommand of localtable.
type command struct {
	name     string
	args     string // the synopsis after the name, such as "TABLE [flags]"
	summary  string // one line
	details  string // paragraphs after the synopsis
	examples string // lines of example invocations
	run      func(ctx context.Context, e *env, c *command, args []string) error
}

// commands are the subcommands, by name; serve is the default.
var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// errHelp ends a command that printed its help: exit 0.
var errHelp = errors.New("help printed")

// usageError is a mistake in the command line: it exits 2 with a hint.
type usageError struct {
	cmd string
	err error
}

func (u *usageError) Error() string {
	hint := "localtable --help"
	if u.cmd != "" {
		hint = "localtable " + u.cmd + " --help"
	}
	return fmt.Sprintf("%v (see '%s')", u.err, hint)
}

func (u *usageError) Unwrap() error { return u.err }

func usagef(c *command, format string, args ...any) error {
	name := ""
	if c != nil {
		name = c.name
	}
	return &usageError{cmd: name, err: fmt.Errorf(format, args...)}
}

// exitCode is the process's exit status for a command's error: 2 for a
// mistake in the command line, 128+2 (as a shell reports a process that
// SIGINT ended) for a command that stopped on SIGINT or SIGTERM, 1
// otherwise.
func exitCode(err error) int {
	var u *usageError
	var i *interruptedError
	switch {
	case errors.As(err, &u):
		return 2
	case errors.As(err, &i):
		return 130
	}
	return 1
}

// interruptedError is the cause of a command's context that a signal
// ended (notifyInterrupt).
type interruptedError struct{ sig os.Signal }

func (i *interruptedError) Error() string {
	name := "SIGTERM"
	if i.sig == os.Interrupt {
		name = "SIGINT"
	}
	return "interrupted (" + name + ")"
}

// notifyInterrupt returns ctx, ended by the first SIGINT or SIGTERM with
// an *interruptedError as its cause (context.Cause), and stop, which
// releases the signals. Once one has come, the signals are released: a
// second one ends the process at once, as a second Ctrl-C should.
func notifyInterrupt(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(&interruptedError{sig})
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(done)
			signal.Stop(ch)
			cancel(nil)
		})
	}
}

// flagSet returns an empty flag set for c. Parse errors are reported by
// the caller, once; -h and --help print c's help.
func (c *command) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("localtable "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses flags and positional arguments in any order (flags may
// follow the arguments, as in "query Orders --top 5"; "--" ends flags)
// and checks the number of positional arguments: at least min, at most
// max (max < 0: no bound).
func (c *command) parse(e *env, fs *flag.FlagSet, args []string, min, max int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.printHelp(e.stdout, fs)
				return nil, errHelp
			}
			return nil, usagef(c, "%v%s", err, flagSuggestion(fs, err))
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if i := len(args) - len(rest) - 1; i >= 0 && args[i] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	switch {
	case len(pos) < min:
		return nil, usagef(c, "too few arguments: localtable %s %s", c.name, c.args)
	case max >= 0 && len(pos) > max:
		return nil, usagef(c, "too many arguments (%q): localtable %s %s", pos[max:], c.name, c.args)
	}
	return pos, nil
}

// printHelp writes c's synopsis, description, flags and examples.
func (c *command) printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: localtable %s %s\n\n%s\n", c.name, c.args, c.summary)
	if c.details != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.details))
	}
	if fs != nil {
		has := false
		fs.VisitAll(func(*flag.Flag) { has = true })
		if has {
			fmt.Fprintln(w, "\nFlags:")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	}
	if c.examples != "" {
		fmt.Fprintln(w, "\nExamples:")
		for _, l := range strings.Split(strings.TrimSpace(c.examples), "\n") {
			fmt.Fprintln(w, "  "+strings.TrimSpace(l))
		}
	}
}

// printTopHelp writes the list of commands.
func printTopHelp(w io.Writer) {
	fmt.Fprint(w, `localtable serves the Azure Table service's REST protocol over localtable
accounts (a drop-in for Azurite's table service) and works on their data.

Usage:
  localtable [serve] [flags]       serve the REST API and the web explorer (the default)
  localtable <command> [arguments]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range names {
		fmt.Fprintf(tw, "  %s\t%s\n", n, commands[n].summary)
	}
	tw.Flush()
	fmt.Fprint(w, `
The data commands (tables, query, get, put, delete, import, export, stats,
index, expiry, watch) work on a data directory with --location DIR, as
serve --location keeps it (a pebble store per account, DIR/<account>;
offline: no server may be running on it), or on a running server with --endpoint URL,
--connection-string, or the environment variable LOCALTABLE_CONNECTION_STRING
(or AZURE_STORAGE_CONNECTION_STRING), through the Azure SDK for Go.

serve also takes Azurite's command line (azurite-table --tableHost 0.0.0.0
--tablePort 10002 -l DIR …, AZURITE_ACCOUNTS): see 'localtable serve --help'.

Run 'localtable <command> --help' for a command's flags and examples, and
'localtable --version' for the version.
`)
}

// versionString is the module version and build details from the binary's
// build information.
func versionString() string {
	v, extra := "(unknown)", []string{runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if modified == "true" {
				rev += "+dirty"
			}
			extra = append([]string{"revision " + rev}, extra...)
		}
	}
	return fmt.Sprintf("localtable %s (%s)", v, strings.Join(extra, ", "))
}

func init() {
	register(&command{
		name: "version", args: "", summary: "print the version",
		examples: "localtable version\nlocaltable --version",
		run: func(ctx context.Context, e *env, c *command, args []string) error {
			fs := c.flagSet()
			if _, err := c.parse(e, fs, args, 0, 0); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, versionString())
			return nil
		},
	})
	register(&command{
		name: "help", args: "[COMMAND]", summary: "show the commands, or a command's help",
		examples: "localtable help\nlocaltable help import",
		run: func(ctx context.Context, e *env, c *command, args []string) error {
			fs := c.flagSet()
			pos, err := c.parse(e, fs, args, 0, 1)
			if err != nil {
				return err
			}
			if len(pos) == 0 {
				printTopHelp(e.stdout)
				return nil
			}
			sub, ok := commands[pos[0]]
			if !ok {
				return usagef(nil, "unknown command %q%s", pos[0], commandSuggestion(pos[0]))
			}
			return sub.run(ctx, e, sub, []string{"--help"})
		},
	})
}

// dispatch runs the command args name, or serve.
func dispatch(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			printTopHelp(e.stdout)
			return nil
		case "-version", "--version", "-v":
			fmt.Fprintln(e.stdout, versionString())
			return nil
		}
		if c, ok := commands[args[0]]; ok {
			return c.run(ctx, e, c, args[1:])
		}
		if !strings.HasPrefix(args[0], "-") {
			return usagef(nil, "unknown command %q%s", args[0], commandSuggestion(args[0]))
		}
	}
	c := commands["serve"]
	return c.run(ctx, e, c, args)
}

// commandAliases are words a user may try for a command of another name.
var commandAliases = map[string]string{
	"explore": "serve", "explorer": "serve", "ui": "serve", "web": "serve", "start": "serve", "run": "serve", "server": "serve",
	"ls": "tables", "list": "tables", "create": "tables", "show": "get", "insert": "put", "upsert": "put", "set": "put",
	"rm": "delete", "del": "delete", "find": "query", "select": "query", "scan": "query", "backup": "export", "load": "import",
}

// commandSuggestion is ": did you mean …?" for an unknown command: the
// command it is a known other word for (the explorer is served by serve),
// or the commands at most 2 edits from it; "" if none.
func commandSuggestion(name string) string {
	if a, ok := commandAliases[strings.ToLower(name)]; ok {
		if a == "serve" && strings.HasPrefix(strings.ToLower(name), "explor") {
			return ": the web explorer is served by 'localtable serve' (the default command), at http://127.0.0.1:10002/"
		}
		return fmt.Sprintf(": did you mean 'localtable %s'?", a)
	}
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	if near := nearest(name, names); len(near) > 0 {
		return ": did you mean " + orList(quoteAll(near, "'localtable ", "'")) + "?"
	}
	return ""
}

// flagSuggestion is ": did you mean …?" for an undefined flag, naming the
// command's flags at most 2 edits from it; "" for other errors or none.
func flagSuggestion(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := nearest(name, names); len(near) > 0 {
		return ": did you mean " + orList(quoteAll(near, "--", "")) + "?"
	}
	return ""
}

func quoteAll(v []string, before, after string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = before + s + after
	}
	return out
}

// nearest returns the candidates closest to s, at most 2 edits away (or
// that start with s, or s with them, for a prefix typed), sorted.
func nearest(s string, candidates []string) []string {
	s = strings.ToLower(s)
	best, out := 3, []string(nil)
	for _, c := range candidates {
		d := editDistance(s, strings.ToLower(c))
		if len(s) >= 3 && (strings.HasPrefix(c, s) || strings.HasPrefix(s, c)) {
			d = min(d, 1)
		}
		switch {
		case d < best:
			best, out = d, []string{c}
		case d == best:
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
