// Command localtable serves the Azure Table service's REST protocol over a
// localtable account, as a drop-in for Azurite's table service in tests
// and local development.
//
// Defaults are Azurite's: it listens on 127.0.0.1:10002 and serves the
// emulator account devstoreaccount1 with its well-known key, in memory.
//
//	localtable [--addr 127.0.0.1:10002] [--location DIR] [--account name:base64key]...
//	           [--cert FILE --key FILE] [--no-auth] [--log-level debug|info|warn|error]
//
// With --location, data is kept on disk with pebble, one directory per
// account. It prints the connection string on start (with the port it
// bound, so --addr 127.0.0.1:0 works), answers GET /-/health when ready,
// and on SIGINT or SIGTERM finishes in-flight requests and closes the
// accounts cleanly; a second signal ends it at once.
package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "localtable:", err)
		os.Exit(1)
	}
}

// accountFlags collects repeated --account name:base64key flags.
type accountFlags []server.AccountConfig

// String is the flag's default text: none.
func (a *accountFlags) String() string { return "" }

// Set adds one name:base64key account.
func (a *accountFlags) Set(v string) error {
	name, key, ok := strings.Cut(v, ":")
	if !ok || name == "" {
		return errors.New("want name:base64key")
	}
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return fmt.Errorf("key of %s is not base64: %v", name, err)
	}
	*a = append(*a, server.AccountConfig{Name: name, Key: k})
	return nil
}

// run is the command, with its I/O and signals injectable for tests. It
// returns when ctx is done or a signal arrives.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("localtable", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:10002", "listen address (loopback by default)")
	location := fs.String("location", "", "directory for data on disk (pebble); empty: in memory")
	var accounts accountFlags
	fs.Var(&accounts, "account", "account as name:base64key (repeatable); default devstoreaccount1 with the emulator key")
	cert := fs.String("cert", "", "TLS certificate file: serve HTTPS (bearer tokens then accepted: claims checked, signature not)")
	keyFile := fs.String("key", "", "TLS key file")
	noAuth := fs.Bool("no-auth", false, "accept requests without checking credentials")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %v", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if (*cert == "") != (*keyFile == "") {
		return errors.New("--cert and --key go together")
	}
	if len(accounts) == 0 {
		k, _ := base64.StdEncoding.DecodeString(server.DevAccountKey)
		accounts = append(accounts, server.AccountConfig{Name: server.DevAccountName, Key: k})
	}
	for i := range accounts {
		acct, err := openAccount(*location, accounts[i].Name)
		if err != nil {
			for _, a := range accounts[:i] {
				a.Account.Close()
			}
			return fmt.Errorf("opening account %s: %w", accounts[i].Name, err)
		}
		accounts[i].Account = acct
	}
	defer func() {
		for _, a := range accounts {
			if err := a.Account.Close(); err != nil {
				log.Error("closing account", "account", a.Name, "err", err)
			}
		}
	}()
	h := server.New(nil, &server.Options{
		Accounts:           accounts,
		DisableAuth:        *noAuth,
		AcceptBearerTokens: *cert != "",
		Logger:             log,
	})
	var tlsConfig *tls.Config
	if *cert != "" {
		// Load the pair now: a bad file fails the command before it
		// reports ready, not on the first connection.
		pair, err := tls.LoadX509KeyPair(*cert, *keyFile)
		if err != nil {
			return fmt.Errorf("--cert/--key: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	scheme := "http"
	if *cert != "" {
		scheme = "https"
	}
	srv := &http.Server{Handler: h, TLSConfig: tlsConfig, ReadHeaderTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	host := dialAddr(ln.Addr())
	for _, a := range accounts {
		endpoint := scheme + "://" + host + "/" + a.Name
		fmt.Fprintf(stdout, "localtable: serving account %s at %s\n", a.Name, endpoint)
		fmt.Fprintf(stdout, "%s\n", server.ConnectionString(endpoint, a.Name, base64.StdEncoding.EncodeToString(a.Key)))
	}
	fmt.Fprintf(stdout, "localtable: ready (%s://%s%s)\n", scheme, host, server.HealthPath)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			errc <- srv.ServeTLS(ln, "", "")
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// A second signal now ends the process at once, as a second Ctrl-C
	// should, instead of waiting for the requests in flight.
	stop()
	log.Info("shutting down: finishing requests in flight (signal again to stop at once)")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	return nil
}

// dialAddr returns the host:port clients dial for a listener's address:
// an unspecified host (0.0.0.0, or :: which Go listens on dual-stack)
// becomes 127.0.0.1, which a connection string can name.
func dialAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// openAccount opens an account in memory, or on disk under location.
func openAccount(location, name string) (*localtable.Account, error) {
	if location == "" {
		return localtable.Open(nil)
	}
	eng, err := openPebble(filepath.Join(location, name))
	if err != nil {
		return nil, err
	}
	return localtable.Open(&localtable.Options{Engine: eng})
}
