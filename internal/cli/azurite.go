package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/localtable/localtable/server"
)

// This file gives serve the command line of Azurite's table service
// (azurite-table) and of azurite, all services, so that a script, a CI
// file or a docker-compose file that starts Azurite starts localtable when
// the command's name is changed: the same flags (github.com/Azure/Azurite,
// src/table/TableEnvironment.ts and src/common/Environment.ts), with their
// short forms, and the environment variables AZURITE_ACCOUNTS and
// AZURITE_SKIP_API_VERSION_CHECK. Where a flag cannot mean what it means
// to Azurite, serve says so: an error, or a line of the banner.

// azuriteAccountsEnv and azuriteSkipAPIVersionEnv are Azurite's
// environment variables (src/common/utils/constants.ts,
// src/common/utils/environment.ts).
const (
	azuriteAccountsEnv       = "AZURITE_ACCOUNTS"
	azuriteSkipAPIVersionEnv = "AZURITE_SKIP_API_VERSION_CHECK"
	// azuriteTableDB is the file of Azurite's table service under
	// --location (DEFAULT_TABLE_LOKI_DB_PATH).
	azuriteTableDB = "__azurite_db_table__.json"
)

// azuriteConfig is what Azurite's flags say.
type azuriteConfig struct {
	tableHost        string
	tablePort        int
	keepAlive        int // --tableKeepAliveTimeout, seconds
	silent, loose    bool
	skipAPIVersion   bool
	pathStyleOnly    bool // --disableProductStyleUrl
	inMemory         bool // --inMemoryPersistence
	debug            string
	pwd              string
	disableTelemetry bool
	version          bool // -v, --version: print the version
	// otherServices are the flags of Azurite's blob and queue services
	// given, by name, with their values: localtable has neither.
	otherServices map[string]*string
}

// azuriteOtherServiceFlags are azurite's flags for its blob and queue
// services (and their in-memory extent store), which take a value.
var azuriteOtherServiceFlags = []string{
	"blobHost", "blobPort", "blobKeepAliveTimeout",
	"queueHost", "queuePort", "queueKeepAliveTimeout",
	"extentMemoryLimit",
}

// addAzuriteFlags defines Azurite's flags on fs: --location and -l are
// serve's --location; --cert, --key and --oauth are serve's own already.
func addAzuriteFlags(fs *flag.FlagSet, cfg *serveConfig) {
	a := &cfg.azurite
	const pre = "Azurite's: "
	fs.StringVar(&a.tableHost, "tableHost", "127.0.0.1", pre+"the address to listen on, with --tablePort (in place of --addr)")
	fs.IntVar(&a.tablePort, "tablePort", 10002, pre+"the port to listen on, 0 for any free one, with --tableHost (in place of --addr)")
	fs.IntVar(&a.keepAlive, "tableKeepAliveTimeout", 0, pre+"the `seconds` a keep-alive connection may wait idle (--idle-timeout); not given, --idle-timeout's default, not Azurite's 5")
	fs.StringVar(&cfg.location, "l", "", pre+"--location")
	fs.BoolVar(&a.silent, "silent", false, pre+"do not log each request on the console (the access log)")
	fs.BoolVar(&a.silent, "s", false, pre+"--silent")
	fs.BoolVar(&a.loose, "loose", false, pre+"loose mode: localtable has no strict mode, it answers headers and parameters as the service does")
	fs.BoolVar(&a.loose, "L", false, pre+"--loose")
	fs.BoolVar(&a.skipAPIVersion, "skipApiVersionCheck", false, pre+"serve a request whose x-ms-version is unknown (newer than this server) with the newest version not after it, instead of 400 InvalidHeaderValue; also "+azuriteSkipAPIVersionEnv+"=true")
	fs.BoolVar(&a.pathStyleOnly, "disableProductStyleUrl", false, pre+"take the account from the URL's path, never its host: localtable always does")
	fs.BoolVar(&a.inMemory, "inMemoryPersistence", false, pre+"keep the data in memory (serve's default); refused with --location")
	fs.StringVar(&a.debug, "debug", "", pre+"also write the log, at debug (each request with its bodies), to `FILE`")
	fs.StringVar(&a.debug, "d", "", pre+"--debug")
	fs.StringVar(&a.pwd, "pwd", "", pre+"the password of a PFX --cert: not supported (convert the PFX to PEM files for --cert and --key)")
	fs.BoolVar(&a.disableTelemetry, "disableTelemetry", false, pre+"collect no telemetry: localtable never collects any")
	fs.BoolVar(&a.version, "version", false, pre+"print the version and exit")
	fs.BoolVar(&a.version, "v", false, pre+"--version")
	a.otherServices = map[string]*string{}
	for _, name := range azuriteOtherServiceFlags {
		v := new(string)
		a.otherServices[name] = v
		fs.StringVar(v, name, "", pre+"not served: localtable is the Table service alone (the banner says the flag is ignored)")
	}
}

// applyAzurite turns Azurite's flags and environment into serve's
// configuration, once fs is parsed, and returns the notes for the banner:
// what does not mean what it means to Azurite.
func applyAzurite(c *command, fs *flag.FlagSet, cfg *serveConfig, getenv func(string) string) ([]string, error) {
	a := &cfg.azurite
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var notes []string
	if set["tableHost"] || set["tablePort"] {
		if set["addr"] {
			return nil, usagef(c, "--addr and --tableHost/--tablePort say the same thing: give one or the other")
		}
		if a.tablePort < 0 || a.tablePort > 65535 {
			return nil, usagef(c, "--tablePort %d: want a port, 0 to 65535", a.tablePort)
		}
		cfg.addr = net.JoinHostPort(strings.Trim(a.tableHost, "[]"), strconv.Itoa(a.tablePort))
	}
	if set["tableKeepAliveTimeout"] {
		if set["idle-timeout"] {
			return nil, usagef(c, "--idle-timeout and --tableKeepAliveTimeout say the same thing: give one or the other")
		}
		if a.keepAlive < 0 {
			return nil, usagef(c, "--tableKeepAliveTimeout %d: want seconds, 0 or more", a.keepAlive)
		}
		cfg.idleTimeout = time.Duration(a.keepAlive) * time.Second
	}
	if a.inMemory && cfg.location != "" {
		// Azurite's own words (TableEnvironment.inMemoryPersistence).
		return nil, usagef(c, "The --inMemoryPersistence option is not supported when the --location option is set.")
	}
	if a.inMemory && cfg.etcd != "" {
		return nil, usagef(c, "--inMemoryPersistence keeps the data in memory: it excludes --etcd")
	}
	if a.pwd != "" {
		return nil, usagef(c, "--pwd: PFX certificates are not supported; convert the PFX into PEM files and give them as --cert and --key:\n"+
			"  openssl pkcs12 -in CERT.pfx -passin pass:PASSWORD -nokeys -out cert.pem\n"+
			"  openssl pkcs12 -in CERT.pfx -passin pass:PASSWORD -nocerts -nodes -out key.pem")
	}
	if strings.EqualFold(cfg.oauth, "basic") {
		cfg.oauth = "basic" // Azurite takes any case
	}
	if a.skipAPIVersion || getenv(azuriteSkipAPIVersionEnv) == "true" {
		a.skipAPIVersion = true
	}
	var others []string
	for _, name := range azuriteOtherServiceFlags {
		if set[name] {
			others = append(others, "--"+name+" "+*a.otherServices[name])
		}
	}
	if len(others) > 0 {
		notes = append(notes, "WARNING: localtable serves the Table service alone, no blob or queue service: ignored "+strings.Join(others, ", "))
	}
	if env := getenv(azuriteAccountsEnv); env != "" {
		if len(cfg.accounts) > 0 {
			notes = append(notes, azuriteAccountsEnv+" is set but not used: --account names the accounts")
		} else {
			accts, err := parseAzuriteAccounts(env)
			if err != nil {
				return nil, usagef(c, "%v", err)
			}
			cfg.accounts = accts
			notes = append(notes, fmt.Sprintf("accounts from %s (%d; devstoreaccount1 is not served); read once, at start", azuriteAccountsEnv, len(accts)))
		}
	}
	// Given any of Azurite's own flags, or its accounts, the command line
	// is Azurite's: the banner says where the data goes.
	azuriteMode := slices.ContainsFunc(azuriteFlagNames(), func(n string) bool { return set[n] }) || getenv(azuriteAccountsEnv) != ""
	switch {
	case !azuriteMode || cfg.etcd != "":
	case cfg.location == "":
		if !a.inMemory {
			notes = append(notes, "data in memory, lost when the process ends: Azurite without --location keeps it in the current directory; give --location DIR to keep it")
		}
	default:
		notes = append(notes, "--location "+cfg.location+": localtable's layout, a pebble store per account in "+filepath.Join(cfg.location, "ACCOUNT")+"; Azurite's "+azuriteTableDB+" there is neither read nor written")
	}
	return notes, nil
}

// azuriteFlagNames are the flags that exist for Azurite's command line
// alone: given any, serve says in its banner where it differs.
func azuriteFlagNames() []string {
	return append([]string{"tableHost", "tablePort", "tableKeepAliveTimeout", "l", "silent", "s", "loose", "L",
		"skipApiVersionCheck", "disableProductStyleUrl", "inMemoryPersistence", "debug", "d", "pwd", "disableTelemetry"},
		azuriteOtherServiceFlags...)
}

// azuriteDataNote is the banner's warning when --location holds the data
// of Azurite's table service, which localtable does not read: "" when it
// does not. It says how to copy the tables to the server at endpoint (an
// account's table endpoint): Azurite has no export of its own, but served
// by Azurite on another port they are read as from any server.
func azuriteDataNote(location, endpoint string) string {
	if location == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(location, azuriteTableDB)); err != nil {
		return ""
	}
	return "WARNING: " + filepath.Join(location, azuriteTableDB) + " is Azurite's table data: localtable does not read it, its tables are not served. " +
		"To copy them here, serve them with Azurite on another port (azurite-table -l " + location + " --tablePort 10012), then for each TABLE (localtable tables --endpoint http://127.0.0.1:10012/devstoreaccount1 lists them): " +
		"localtable export TABLE --endpoint http://127.0.0.1:10012/devstoreaccount1 | localtable import TABLE - --create --endpoint " + endpoint +
		" (README: Replacing Azurite)"
}

// parseAzuriteAccounts reads AZURITE_ACCOUNTS as Azurite does
// (src/common/AccountDataStore.ts): "name:key1[:key2];name2:key1…",
// base64 keys, empty entries skipped. Unlike Azurite, which falls back to
// devstoreaccount1 with a line in its debug log, a malformed value is an
// error.
func parseAzuriteAccounts(v string) ([]server.AccountConfig, error) {
	var out []server.AccountConfig
	for _, entry := range strings.Split(strings.TrimSpace(v), ";") {
		if entry == "" {
			continue
		}
		parts := strings.Split(entry, ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
			return nil, fmt.Errorf("%s: %q: want name:key1 or name:key1:key2, entries separated by ';'", azuriteAccountsEnv, redactKeys(entry))
		}
		a := server.AccountConfig{Name: parts[0]}
		for i, k := range parts[1:] {
			key, err := base64.StdEncoding.DecodeString(k)
			if err != nil || len(key) == 0 {
				return nil, fmt.Errorf("%s: key%d of account %s is not base64", azuriteAccountsEnv, i+1, parts[0])
			}
			if i == 0 {
				a.Key = key
			} else {
				a.SecondaryKey = key
			}
		}
		if slices.ContainsFunc(out, func(o server.AccountConfig) bool { return o.Name == a.Name }) {
			return nil, fmt.Errorf("%s: account %s is given twice", azuriteAccountsEnv, a.Name)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s names no account", azuriteAccountsEnv)
	}
	return out, nil
}

// redactKeys hides the keys of an AZURITE_ACCOUNTS entry in a message.
func redactKeys(entry string) string {
	name, _, ok := strings.Cut(entry, ":")
	if !ok {
		return entry
	}
	return name + ":*****"
}

// azuriteLoggers returns serve's logger and its access log (the request
// lines) for --debug FILE and --silent: the log goes to the console and,
// at debug, to FILE; the access log likewise, but not to the console with
// --silent. closeLog closes FILE.
func azuriteLoggers(console *slog.Logger, a *azuriteConfig) (log, access *slog.Logger, closeLog func(), err error) {
	log, access, closeLog = console, console, func() {}
	if a.silent {
		access = slog.New(slog.DiscardHandler)
	}
	if a.debug == "" {
		return log, access, closeLog, nil
	}
	// As Azurite, make the file's directory if it is missing.
	if err := os.MkdirAll(filepath.Dir(a.debug), 0o755); err != nil {
		return nil, nil, nil, fmt.Errorf("--debug: %w", err)
	}
	f, err := os.OpenFile(a.debug, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--debug: %w", err)
	}
	file := slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})
	log = slog.New(teeHandler{console.Handler(), file})
	if a.silent {
		access = slog.New(file)
	} else {
		access = log
	}
	return log, access, func() { f.Close() }, nil
}

// teeHandler sends each record to every handler enabled for its level
// (slog.NewMultiHandler, once the module needs Go 1.26).
type teeHandler []slog.Handler

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return slices.ContainsFunc(t, func(h slog.Handler) bool { return h.Enabled(ctx, l) })
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, h := range t {
		if h.Enabled(ctx, r.Level) {
			errs = append(errs, h.Handle(ctx, r.Clone()))
		}
	}
	return errors.Join(errs...)
}

func (t teeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make(teeHandler, len(t))
	for i, h := range t {
		out[i] = h.WithAttrs(attrs)
	}
	return out
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	out := make(teeHandler, len(t))
	for i, h := range t {
		out[i] = h.WithGroup(name)
	}
	return out
}
