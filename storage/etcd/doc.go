// Package etcd is a storage.Engine over an etcd v3 cluster
// (go.etcd.io/etcd/client/v3), so that localtable's data lives on a
// replicated, consistent store that several machines reach.
//
// It is a module of its own (github.com/localtable/localtable/storage/etcd):
// programs that do not import it never download etcd or gRPC.
//
//	eng, err := etcd.Open(clientv3.Config{Endpoints: []string{"http://10.0.0.1:2379", …}},
//		&etcd.Options{Prefix: "myapp/", MaxRequestBytes: etcd.RecommendedMaxRequestBytes})
//	acct, err := localtable.Open(&localtable.Options{Engine: eng})
//
// # Keys, reads and snapshots
//
// Each engine key is stored as Options.Prefix followed by the key, with
// the value as given: several accounts or applications share a cluster
// under different prefixes. Reads through the engine are linearizable.
// An iterator pins the cluster's revision when it is made and reads its
// range at that revision in pages (WithRange, WithLimit, continuing after
// the last key), so a long scan is consistent and never one huge
// response. A snapshot is a revision: reads at it (WithRev) see the
// cluster as it was.
//
// etcd keeps old revisions only until it compacts them
// (--auto-compaction-mode and --auto-compaction-retention, or an explicit
// compaction). A snapshot or iterator older than the retention fails with
// ErrCompacted; the table layer's reads are short (a query page at a
// time; continuation tokens name keys, not revisions), so a retention of
// minutes is plenty.
//
// # Commits and limits
//
// Each batch is one etcd transaction (Txn), so it is atomic and durable on
// a quorum of members; Commit's sync flag changes nothing. etcd refuses a
// transaction that puts a key twice or inside a deleted range, so the
// batch is first reduced to its net effect. A range deletion is one
// operation however many keys it removes.
//
// A batch is never split, since that would break its atomicity: it must
// fit the cluster's limits, which the engine checks before sending
// (ErrTooLarge) and which must be given to it in Options:
//
//   - --max-txn-ops (default 128) bounds the operations of a transaction.
//     (etcd counts a transaction's conditions and its operations each
//     against it.) A localtable transaction of up to 100 actions is at
//     most 100 operations (one put or delete per entity) under 101
//     conditions (its entities and its table's catalog record), read
//     first by one transaction of 101 gets; creating a table is 2
//     operations, deleting one 2 (the catalog record and one range
//     deletion for all its entities), the clock's high-water mark 1. The
//     default suffices.
//   - --max-request-bytes (default 1.5 MiB) bounds a request. An entity
//     (at most 1 MiB) fits; a transaction (at most 4 MiB of entities, 100
//     keys of up to 2 KiB) does not: start etcd with
//     --max-request-bytes=6291456 (RecommendedMaxRequestBytes) and set
//     Options.MaxRequestBytes to it. Open sizes the client's send limit to
//     match.
//   - --quota-backend-bytes (default 2 GiB, at most 8 GiB advised) bounds
//     the database, old revisions included until compaction and the file
//     until defragmentation. When it is reached, etcd raises its NOSPACE
//     alarm and refuses writes (ErrNoSpace) until an operator compacts,
//     defragments and disarms. Size it for the data plus the history kept
//     by the retention; run with auto-compaction.
//
// # Failures
//
// Every request is bounded by its context (the *Context methods, and
// storage.GetContext, NewIterContext and CommitContext), by Close, and by
// Options.Timeout, and requires a leader (a member cut off from the
// quorum answers at once rather than hanging). Reads are retried while the
// cluster elects a leader or the client fails over to another member.
// Commits are retried only when etcd refused them before they could apply
// (no leader, too many requests); otherwise an interrupted commit fails
// with storage.ErrCommitUnknown, since replaying a blind batch could
// overwrite another client's later write. A conditional commit (CommitIf)
// that writes a key its conditions name is replayed, as its compares make
// a second application impossible. Transient errors that leave nothing
// applied (every failed read; a commit refused before it could apply)
// wrap storage.ErrUnavailable.
//
// # Sharing a cluster between processes
//
// The engine implements storage.VersionedEngine: GetVersion returns a
// key's etcd ModRevision, and CommitIf is Txn If(ModRevision(key) =
// version …) Then(writes); and storage.MultiGetter: GetVersions reads many
// keys in one Txn of gets. On such an engine the table layer reads an
// entity write's entities and its table's catalog record in one request
// and commits on condition that none changed, so any number of Accounts,
// in any number of processes on any machines, may serve one prefix at
// once: ETags, If-Match, entity group transactions, table creation and
// deletion keep their guarantees between them. Open an engine of its own
// for each Account. It also implements storage.ChangeNotifier with etcd's
// watch (Engine.NotifyChanges), by which an Account's change feed
// watchers learn of the commits of other processes as etcd delivers them.
//
// The localtable command built with this engine,
// github.com/localtable/localtable/storage/etcd/cmd/localtable, serves
// the Table REST API from it: localtable serve --etcd host:port,….
package etcd
