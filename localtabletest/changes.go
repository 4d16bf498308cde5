package localtabletest

import (
	"context"

	"github.com/localtable/localtable"
)

// DefaultFeedChanges is how many changes the test server's account keeps
// in its change feed (localtable.FeedOptions.KeepChanges), unless
// WithAccountOptions sets Feed.
const DefaultFeedChanges = 10_000

// WaitForChange returns the first change of the account's feed, of table
// ("" for any table, case-insensitive) that match accepts (nil accepts
// any), waiting for it if it is not made yet: a test waits for a
// background writer's change instead of sleeping. The feed holds every
// change since the server started (or since the Reset or Restore that
// brought its data back), so a change made before the call is found too;
// to wait only for later ones, read s.Account.Revision first and accept
// only c.Revision above it.
//
// It returns ctx's error when ctx ends first (give it a deadline), and
// localtable.ErrClosed once the server is closed. A Reset or Restore
// while it waits takes the feed back with the data and may hide the
// changes that follow: wait after them.
//
//	go worker.Process(ctx, "orders")
//	c, err := srv.WaitForChange(ctx, "orders", func(c localtable.Change) bool {
//		return c.Kind == localtable.ChangeMerge && c.Entity.RowKey == "0001"
//	})
func (s *Server) WaitForChange(ctx context.Context, table string, match func(localtable.Change) bool) (localtable.Change, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for c, err := range s.Account.Watch(ctx, &localtable.WatchOptions{Table: table}) {
		if err != nil {
			return localtable.Change{}, err
		}
		if match == nil || match(c) {
			return c, nil
		}
	}
	return localtable.Change{}, ctx.Err()
}
