package etcd

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/localtable/localtable/storage"
)

var _ storage.ChangeNotifier = (*Engine)(nil)

// NotifyChanges implements storage.ChangeNotifier with an etcd watch of
// the keys under prefix (under the engine's prefix), started at the
// revision the member serving it has applied and returned once etcd has
// created it. The channel receives after each watch response with events:
// etcd sends it once the member has applied the commit, so a read after
// the receive sees it.
//
// The watch requires a leader (clientv3.WithRequireLeader): a member cut
// off from its cluster cancels it rather than leaving it silent. The etcd
// client resumes a watch whose connection broke by itself, from the
// revision after the last it delivered, on any member, so no commit is
// skipped; the channel is closed when that is not possible (the revision
// was compacted meanwhile), when etcd cancels the watch (no leader, the
// member stopping), when ctx ends or when the engine closes. Setting it up
// waits at most Options.Timeout; it fails with an error wrapping
// storage.ErrUnavailable when the cluster does not answer in time.
func (e *Engine) NotifyChanges(ctx context.Context, prefix []byte) (<-chan struct{}, error) {
	if e.closed.Load() {
		return nil, storage.ErrClosed
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	stop := context.AfterFunc(e.life, cancel)
	end := func() { stop(); cancel() }
	k := string(e.key(prefix))
	// Watch returns once etcd has created the watch: bound that wait.
	timer := time.AfterFunc(e.opts.Timeout, cancel)
	wch := e.cli.Watch(wctx, k, clientv3.WithRange(clientv3.GetPrefixRangeEnd(k)), clientv3.WithCreatedNotify())
	var first clientv3.WatchResponse
	var ok bool
	select {
	case first, ok = <-wch:
	case <-wctx.Done():
	}
	timedOut := !timer.Stop()
	if !ok || !first.Created || first.Canceled || first.Err() != nil {
		end()
		err := first.Err()
		switch {
		case e.life.Err() != nil:
			return nil, storage.ErrClosed
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err == nil:
			err = fmt.Errorf("the watch was not created")
			if timedOut {
				err = fmt.Errorf("the watch was not created within %v", e.opts.Timeout)
			}
			return nil, fmt.Errorf("storage/etcd: watch: %w (%v)", storage.ErrUnavailable, err)
		}
		return nil, e.wrap(ctx, "watch", false, err)
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		defer end()
		for resp := range wch {
			if resp.Canceled || resp.Err() != nil {
				e.log.Debug("storage/etcd: watch lost", "prefix", k, "err", resp.Err())
				return
			}
			if len(resp.Events) == 0 {
				continue // a progress notification
			}
			select {
			case out <- struct{}{}:
			default:
			}
		}
	}()
	return out, nil
}
