// Command localtable is github.com/localtable/localtable/cmd/localtable
// with etcd support: the same command, whose serve also takes
//
//	localtable serve --etcd host:port,… [--etcd-prefix localtable/] [--etcd-max-request-bytes N]
//
// to keep each account's data on an etcd cluster, under the prefix and the
// account's name. Any number of servers given the same cluster and prefix,
// on any machines, serve the same data consistently, behind a load
// balancer or not. Install it with
//
//	go install github.com/localtable/localtable/storage/etcd/cmd/localtable@latest
//
// It lives in the etcd module so that the plain command does not depend on
// etcd. 'localtable serve --help' describes the flags; the etcd module's
// README, how to configure the cluster.
package main

import (
	"context"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/localtable/localtable/internal/cli"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/etcd"
)

func main() {
	os.Exit(cli.Main(context.Background(), &cli.Config{OpenEtcd: openEtcd}, os.Args[1:], os.Stdout, os.Stderr))
}

// openEtcd opens one account's engine on the cluster.
func openEtcd(_ context.Context, c cli.EtcdConfig) (storage.Engine, error) {
	return etcd.Open(clientv3.Config{
		Endpoints:   c.Endpoints,
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(), // the engine logs its retries through c.Logger
	}, &etcd.Options{Prefix: c.Prefix, MaxRequestBytes: c.MaxRequestBytes, Logger: c.Logger})
}
