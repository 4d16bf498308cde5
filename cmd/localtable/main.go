// Command localtable serves the Azure Table service's REST protocol over
// localtable accounts, as a drop-in for Azurite's table service in tests
// and local development, with a web explorer, and works on their data:
// tables, queries, single entities, JSONL and CSV import and export,
// statistics, checks, backups.
//
//	localtable [serve] [--addr 127.0.0.1:10002] [--location DIR] [--account name:base64key]...
//	           [--cert FILE --key FILE] [--no-auth] [--log-level LEVEL] [--log-format text|json]
//	localtable tables [list|create|delete] …
//	localtable query TABLE [--filter F] [--select A,B] [--top N] [--explain] [-o table|json|jsonl]
//	localtable get|put|delete TABLE …
//	localtable import|export TABLE FILE …
//	localtable stats|check|backup|restore …
//
// serve is the default command. Its defaults are Azurite's: it listens on
// 127.0.0.1:10002 and serves the emulator account devstoreaccount1 with
// its well-known key, in memory. With --location, data is kept on disk
// with pebble, one directory per account (DIR/ACCOUNT). It prints a banner
// and the connection string on start (with the port it bound, so --addr
// 127.0.0.1:0 works), answers GET /-/health when ready, serves the
// explorer at /, and on SIGINT or SIGTERM finishes in-flight requests and
// closes the accounts cleanly; a second signal ends it at once.
//
// serve also takes Azurite's table command line (azurite-table
// --tableHost 0.0.0.0 --tablePort 10002 -l DIR -s -d FILE --loose …) and
// its AZURITE_ACCOUNTS and AZURITE_SKIP_API_VERSION_CHECK, so that a
// script that starts Azurite starts localtable with its name changed; what
// differs (the data's layout under --location, in memory without it, PFX
// certificates, the blob and queue flags) is refused or named in the
// banner. 'localtable serve --help' lists them.
//
// serve --etcd host:port,… keeps the data on an etcd cluster, where any
// number of servers share it. That needs the build with etcd support,
// github.com/localtable/localtable/storage/etcd/cmd/localtable (a module
// of its own, so that this one does not depend on etcd); this build
// answers --etcd with an error naming it.
//
// The data commands work offline on a data directory (--location DIR) or
// on a running server (--endpoint, --connection-string, or
// LOCALTABLE_CONNECTION_STRING / AZURE_STORAGE_CONNECTION_STRING) through
// the Azure SDK for Go. 'localtable COMMAND --help' describes each.
package main

import (
	"context"
	"os"

	"github.com/localtable/localtable/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), nil, os.Args[1:], os.Stdout, os.Stderr))
}
