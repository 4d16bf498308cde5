package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/localtable/localtable/storage"
)

// opOverhead is a generous estimate of the bytes one operation adds to an
// etcd request beyond its keys and values (protobuf framing, the request
// header): used to check Options.MaxRequestBytes before sending.
const opOverhead = 32

// bop is one write recorded by a batch.
type bop struct {
	kind     byte // 's' set, 'd' delete, 'r' delete range
	key, val []byte
}

// Batch is a storage.Batch of an Engine: it records writes and commits
// them as one etcd transaction. It implements storage.ContextCommitter.
type Batch struct {
	e    *Engine
	ops  []bop
	done bool
}

var _ storage.ContextCommitter = (*Batch)(nil)

// NewBatch implements storage.Engine. On a closed engine, the batch's
// methods return storage.ErrClosed.
func (e *Engine) NewBatch() storage.Batch {
	return &Batch{e: e, done: e.closed.Load()}
}

// Set implements storage.Writer.
func (b *Batch) Set(key, value []byte) error {
	if b.done {
		return storage.ErrClosed
	}
	b.ops = append(b.ops, bop{'s', bytes.Clone(key), append([]byte{}, value...)})
	return nil
}

// Delete implements storage.Writer.
func (b *Batch) Delete(key []byte) error {
	if b.done {
		return storage.ErrClosed
	}
	b.ops = append(b.ops, bop{'d', bytes.Clone(key), nil})
	return nil
}

// DeleteRange implements storage.Writer. It is one etcd operation,
// whatever the number of keys in the range.
func (b *Batch) DeleteRange(start, end []byte) error {
	if b.done {
		return storage.ErrClosed
	}
	b.ops = append(b.ops, bop{'r', append([]byte{}, start...), append([]byte{}, end...)})
	return nil
}

// Len implements storage.Batch.
func (b *Batch) Len() int {
	if b.done {
		return 0
	}
	return len(b.ops)
}

// Close implements storage.Batch.
func (b *Batch) Close() error {
	b.done = true
	b.ops = nil
	return nil
}

// Commit implements storage.Batch. Every etcd commit is durable on a
// quorum of members, so sync changes nothing.
func (b *Batch) Commit(sync bool) error {
	return b.CommitContext(context.Background(), sync)
}

// CommitContext implements storage.ContextCommitter.
func (b *Batch) CommitContext(ctx context.Context, sync bool) error {
	return b.commit(ctx, nil)
}

// CommitIf implements storage.VersionedEngine: the batch and the
// conditions become one etcd transaction, If(ModRevision(key) = version
// …) Then(writes). b must be a batch of e.
func (e *Engine) CommitIf(ctx context.Context, b storage.Batch, conds []storage.Condition) error {
	eb, ok := b.(*Batch)
	if !ok || eb.e != e {
		b.Close()
		return errors.New("storage/etcd: CommitIf: the batch is not one of this engine's")
	}
	return eb.commit(ctx, conds)
}

func (b *Batch) commit(ctx context.Context, conds []storage.Condition) error {
	if b.done {
		return storage.ErrClosed
	}
	ops := b.ops
	b.Close()
	e := b.e
	if e.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	txnOps, size, guarded := e.plan(ops, conds)
	cmps := make([]clientv3.Cmp, len(conds))
	for i, c := range conds {
		k := e.key(c.Key)
		cmps[i] = clientv3.Compare(clientv3.ModRevision(string(k)), "=", int64(c.Version))
		size += len(k) + opOverhead
	}
	if len(txnOps) > e.opts.MaxTxnOps || len(cmps) > e.opts.MaxTxnOps || size > e.opts.MaxRequestBytes {
		return fmt.Errorf("%w: %d operations and %d conditions of about %d bytes; the limits are %d operations (--max-txn-ops) and %d bytes (--max-request-bytes)",
			ErrTooLarge, len(txnOps), len(cmps), size, e.opts.MaxTxnOps, e.opts.MaxRequestBytes)
	}
	if len(txnOps) == 0 && len(cmps) == 0 {
		return nil
	}
	octx, cancel := e.opContext(ctx)
	defer cancel()
	var ok, replayed bool
	call := func(ctx context.Context) error {
		resp, err := e.cli.Txn(ctx).If(cmps...).Then(txnOps...).Commit()
		if err == nil {
			ok = resp.Succeeded
		}
		return err
	}
	err := e.do(octx, "commit", true, call)
	for err != nil && guarded && classify(err) == transient && octx.Err() == nil {
		e.log.Debug("storage/etcd: replaying a guarded commit of unknown outcome", "err", err)
		replayed = true
		err = e.do(octx, "commit", true, call)
	}
	if err != nil {
		return e.wrap(ctx, "commit", true, err)
	}
	if !ok {
		if replayed {
			// Either the first attempt applied, or another writer
			// changed a key: which one cannot be told.
			return fmt.Errorf("storage/etcd: commit: %w (a replay after a lost answer found the conditions changed)", storage.ErrCommitUnknown)
		}
		return fmt.Errorf("storage/etcd: commit: %w", storage.ErrConditionFailed)
	}
	return nil
}

// span is a half-open key range to delete.
type span struct{ start, end []byte }

// plan turns a batch's writes, applied in order, into the etcd operations
// of one transaction with the same effect, and estimates the request's
// size. It also reports whether the transaction is guarded: whether a
// replay after an unknown outcome is safe because the batch changes a key
// that a condition names (sets it, or deletes it while the condition says
// it exists), so that if the first attempt applied, that key's revision
// changed and the replay's compare fails. etcd applies a transaction's operations as a set and
// rejects one that puts a key twice or puts a key inside a deleted range
// ("duplicate key given in txn request"), so the writes are first reduced
// to their net effect: the last value of each key set, the keys deleted,
// and deleted ranges cut around the keys set after them.
func (e *Engine) plan(ops []bop, conds []storage.Condition) ([]clientv3.Op, int, bool) {
	puts := map[string][]byte{}
	dels := map[string]bool{}
	var spans []span
	for _, o := range ops {
		switch o.kind {
		case 's':
			puts[string(o.key)] = o.val
			delete(dels, string(o.key))
		case 'd':
			delete(puts, string(o.key))
			dels[string(o.key)] = true
		case 'r':
			if bytes.Compare(o.key, o.val) >= 0 {
				continue
			}
			for k := range puts {
				if k >= string(o.key) && k < string(o.val) {
					delete(puts, k)
				}
			}
			for k := range dels {
				if k >= string(o.key) && k < string(o.val) {
					delete(dels, k)
				}
			}
			spans = append(spans, span{o.key, o.val})
		}
	}
	spans = mergeSpans(spans)
	putKeys := make([]string, 0, len(puts))
	for k := range puts {
		putKeys = append(putKeys, k)
	}
	sort.Strings(putKeys)
	// Cut each span around the keys set inside it (set after the range
	// deletion, as the loop above removed those set before).
	var cut []span
	for _, s := range spans {
		i := sort.SearchStrings(putKeys, string(s.start))
		start := s.start
		for ; i < len(putKeys) && putKeys[i] < string(s.end); i++ {
			if string(start) < putKeys[i] {
				cut = append(cut, span{start, []byte(putKeys[i])})
			}
			start = append([]byte(putKeys[i]), 0) // the key's successor
		}
		if bytes.Compare(start, s.end) < 0 {
			cut = append(cut, span{start, s.end})
		}
	}
	var out []clientv3.Op
	size := 64
	for _, k := range putKeys {
		key := e.key([]byte(k))
		out = append(out, clientv3.OpPut(string(key), string(puts[k])))
		size += len(key) + len(puts[k]) + opOverhead
	}
	delKeys := make([]string, 0, len(dels))
	for k := range dels {
		delKeys = append(delKeys, k)
	}
	sort.Strings(delKeys)
	for _, k := range delKeys {
		key := e.key([]byte(k))
		out = append(out, clientv3.OpDelete(string(key)))
		size += len(key) + opOverhead
	}
	for _, s := range cut {
		start, end := e.key(s.start), e.key(s.end)
		out = append(out, clientv3.OpDelete(string(start), clientv3.WithRange(string(end))))
		size += len(start) + len(end) + opOverhead
	}
	guarded := false
	for _, c := range conds {
		k := string(c.Key)
		if _, set := puts[k]; set {
			guarded = true
		} else if c.Version != storage.NoVersion {
			if dels[k] {
				guarded = true
			}
			for _, s := range cut {
				if k >= string(s.start) && k < string(s.end) {
					guarded = true
				}
			}
		}
	}
	return out, size, guarded
}

// mergeSpans sorts spans and merges those that overlap or touch.
func mergeSpans(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int { return bytes.Compare(a.start, b.start) })
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if bytes.Compare(s.start, last.end) <= 0 {
			if bytes.Compare(s.end, last.end) > 0 {
				last.end = s.end
			}
			continue
		}
		out = append(out, s)
	}
	return out
}
