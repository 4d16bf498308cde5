// Package etcd is a storage.Engine over an etcd v3 cluster
// (go.etcd.io/etcd/client/v3), so that localtable's data lives on a
// replicated, consistent store that several machines reach.
//
// It is a module of its own (github.com/localtable/localtable/storage/etcd):
// programs that do not import it never download etcd or gRPC.
package etcd
