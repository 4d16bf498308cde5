package localtable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// The images of a feed whose records name their entities (feedRecordV4:
// pebble).
//
// A change of such a record stands for its entity as it was at the
// record's time, its Timestamp. While the entity is not written again,
// the reader finds it in its table. A commit that replaces that version
// keeps it first, as an image, under keyenc.FeedImageKey(entity key,
// Timestamp), in the same atomic commit:
//
//   - an overwrite or a delete of the entity (any write whose change has
//     an old record: a replace, a merge, a delete, an expiry, an insert
//     over an expired entity) keeps the record it replaces;
//   - DeleteTable, whose range deletion takes the table's entities,
//     first keeps those that the feed still names at their current
//     version;
//   - a Restore, which replaces every entity, likewise for every table.
//
// The reader looks in the table first, then for the image: as the image
// is written with the write that replaced the entity, one of the two
// holds it, until the feed no longer keeps the change (a reader that
// falls that far behind gets a *FeedCompactedError).
//
// Each image has a marker, keyenc.FeedImageGCKey(r, image key), where r
// is the revision of the change that kept it (at or after the one that
// wrote the version it keeps). The feed's pruning, which deletes the
// records below a revision cut, deletes with them the images of the
// markers below cut, then those markers: a change below cut was made no
// later than the marker's, so the feed keeps no change that names the
// image any more.
//
// An image is kept whether or not the feed names the version (a version
// written before the feed was on, or by a record of another version); it
// then costs its bytes until the feed's retention passes it, at most
// DefaultFeedChanges changes.

// namesEntities reports whether the feed record rec names its entities
// (version 4, or 5, compressed) rather than copying them.
func namesEntities(rec []byte) bool {
	return len(rec) > 0 && (rec[0] == feedRecordV4 || rec[0] == feedRecordV5)
}

// stampedAt reports whether every entity that the changes write is
// stamped at ticks, the commit's time: what lets a record of version 4
// stand for them by its time.
func stampedAt(changes []change, ticks int64) bool {
	for i := range changes {
		if rec := changes[i].new; rec != nil {
			if t, err := recordTicks(rec); err != nil || t != ticks {
				return false
			}
		}
	}
	return true
}

// keepImages adds to c the images of what its changes replace, the
// first of them, in the feed, at revision first (see above).
func (f *feedLog) keepImages(c *commitContext, first Revision) error {
	rev := first
	for i := range c.changes {
		ch := &c.changes[i]
		if !inFeed(ch.kind) {
			continue
		}
		if ch.expired {
			rev++ // the expired change, then the insert
		}
		if err := f.keepFor(c, ch, rev, nil); err != nil {
			return err
		}
		rev++
	}
	return nil
}

// tickSpan is a span of Timestamps, lo to hi included.
type tickSpan struct{ lo, hi int64 }

// loadOff readies a feedLog with the feed off (f.off): if the store's
// feed has records that name their entities, it keeps the images of the
// versions stamped within their times (f.win), which are the versions
// those records may name (the entities written since, with the feed off,
// are stamped later): a feed turned on again then reads as it was, and
// the images the account keeps are bounded by the changes the feed holds.
// It reads the records' heads alone.
func (f *feedLog) loadOff(ctx context.Context) error {
	it, err := storage.NewIterContext(ctx, f.a.eng, feedBounds)
	if err != nil {
		return err
	}
	var win *tickSpan
	for ok := it.First(); ok; ok = it.Next() {
		if !namesEntities(it.Value()) {
			continue
		}
		_, ticks, ok := feedRecordHead(it.Key(), it.Value())
		if !ok {
			continue // Verify reports it
		}
		if win == nil {
			win = &tickSpan{ticks, ticks}
		}
		win.lo, win.hi = min(win.lo, ticks), max(win.hi, ticks)
	}
	if err := it.Close(); err != nil {
		return err
	}
	if win != nil {
		if err := f.load(ctx); err != nil { // the next revision, for the markers
			return err
		}
	}
	f.win.Store(win)
	return nil
}

// keepOff adds to c, with the feed off, the images of what its changes
// replace that the records of an earlier open may name (see loadOff), with
// markers of the feed's next revision: the feed, turned on again, prunes
// them once it passes that.
func (f *feedLog) keepOff(c *commitContext) error {
	win := f.win.Load()
	if win == nil {
		return nil
	}
	rev := Revision(f.rev.Load())
	for i := range c.changes {
		if err := f.keepFor(c, &c.changes[i], rev, win); err != nil {
			return err
		}
	}
	return nil
}

// keepFor adds to c the images change ch needs kept, with markers of
// revision rev: of the record it replaces, and for a table's deletion or
// a Restore, of the entities the feed names that they remove. With the
// feed off (win set), only those of the versions stamped within win, and
// nothing for a Restore, which puts back the checkpoint's feed with its
// images.
func (f *feedLog) keepFor(c *commitContext, ch *change, rev Revision, win *tickSpan) error {
	switch {
	case ch.old != nil && ch.key != nil:
		t, err := recordTicks(ch.old)
		if err != nil {
			return fmt.Errorf("%w (key %q)", err, ch.key)
		}
		if win == nil || t >= win.lo && t <= win.hi {
			addImage(c, rev, ch.key, t, ch.old)
		}
	case ch.kind == changeTableDeleted:
		return f.keepCurrent(c, keyenc.AppendTableID(nil, ch.tableID), rev)
	case ch.kind == changeRestored && win == nil:
		return f.keepCurrent(c, []byte{keyenc.PrefixEntity}, rev)
	}
	return nil
}

// addImage adds to c the image of the entity under key as it was at
// ticks, rec, with its marker of revision rev, built in c's scratch.
func addImage(c *commitContext, rev Revision, key []byte, ticks int64, rec []byte) {
	n := keyenc.FeedImageLen + len(key)
	buf := c.scratch(2*n + 8 + len(rec))
	img := keyenc.FeedImageKey(buf, key, ticks)
	gc := keyenc.FeedImageGCKey(img[len(img):], uint64(rev), img)
	val := append(gc[len(gc):], rec...)
	c.set(img, val)
	c.set(gc, nil)
}

// keepCurrent adds to c an image of each entity under prefix
// (of entity keys) whose current version a change of the feed names, with
// markers of revision rev: what a range deletion of those entities must
// keep first. It reads the whole feed the account keeps, and the entities
// it names, from the engine as committed.
func (f *feedLog) keepCurrent(c *commitContext, prefix []byte, rev Revision) error {
	ctx := c.ctx
	// The version each entity's last change names: the record's time.
	named := map[string]int64{}
	it, err := storage.NewIterContext(ctx, f.a.eng, feedBounds)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		k, v := it.Key(), it.Value()
		if !namesEntities(v) {
			continue
		}
		_, ticks, _ := feedRecordHead(k, v)
		_, err := walkFeedRecord(k, v, func(fc *feedChange) bool {
			if fc.key != nil && bytes.HasPrefix(fc.key, prefix) {
				named[string(fc.key)] = ticks
			}
			return true
		})
		if err != nil {
			it.Close()
			return fmt.Errorf("%w (key %q)", err, k)
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	for key, ticks := range named {
		v, cl, err := storage.GetContext(ctx, f.a.eng, []byte(key))
		if errors.Is(err, storage.ErrNotFound) {
			continue // deleted since: its image was kept then
		}
		if err != nil {
			return err
		}
		if t, terr := recordTicks(v); terr == nil && t == ticks {
			addImage(c, rev, []byte(key), ticks, v)
		}
		if err := cl.Close(); err != nil {
			return err
		}
	}
	return nil
}

// feedMarkBounds are the bounds of the images' markers.
var feedMarkBounds = &storage.IterOptions{
	LowerBound: keyenc.FeedImageGCPrefix(0),
	UpperBound: keyenc.FeedImageGCEnd(),
}

// pruneImages adds to c the deletion of the images whose markers are
// below revision cut, and of those markers, none of which is below from.
func (f *feedLog) pruneImages(c *commitContext, from, cut Revision) error {
	lo, hi := keyenc.FeedImageGCPrefix(uint64(from)), keyenc.FeedImageGCPrefix(uint64(cut))
	it, err := storage.NewIterContext(c.ctx, f.a.eng, &storage.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		img, ok := keyenc.CutFeedImageGC(nil, it.Key())
		if !ok {
			it.Close()
			return fmt.Errorf("%w: bad image marker %q", errCorruptFeed, it.Key())
		}
		c.del(img)
		n++
	}
	if err := it.Close(); err != nil {
		return err
	}
	if n > 0 {
		c.delRange(lo, hi)
	}
	return nil
}

// feedLookup finds the entities that the changes of records of version 4
// name, in their table or among the images. It reads the tables through
// one iterator, made at its first lookup, after the reader's iterator of
// the feed: it sees every entity the records that one sees wrote, or the
// write that replaced it, and so its image. A transaction's entities,
// named one after the other, are found by seeks that move forward, which
// an engine's iterator makes cheaper than as many Gets.
type feedLookup struct {
	ctx context.Context
	r   storage.Reader
	it  storage.Iterator // over the entities; nil until the first lookup
	buf []byte
}

// entityBounds are the bounds of every table's entities.
var entityBounds = &storage.IterOptions{LowerBound: []byte{keyenc.PrefixEntity}, UpperBound: []byte{keyenc.PrefixEntity + 1}}

// entity returns the record of the entity under key as it was at ticks,
// which change rev names, and its closer; an *imageGoneError if neither
// its table nor the images hold it. The record is valid until the next
// lookup.
func (l *feedLookup) entity(key []byte, ticks int64, rev Revision) ([]byte, io.Closer, error) {
	if l.it == nil {
		it, err := storage.NewIterContext(l.ctx, l.r, entityBounds)
		if err != nil {
			return nil, nil, err
		}
		l.it = it
	}
	if l.it.SeekGE(key) && bytes.Equal(l.it.Key(), key) {
		if t, err := recordTicks(l.it.Value()); err == nil && t == ticks {
			return l.it.Value(), nopCloser{}, nil
		}
	}
	if err := l.it.Error(); err != nil {
		return nil, nil, err
	}
	l.buf = keyenc.FeedImageKey(l.buf[:0], key, ticks)
	v, cl, err := storage.GetContext(l.ctx, l.r, l.buf)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, &imageGoneError{rev: rev, key: key, ticks: ticks}
	}
	return v, cl, err
}

// close releases the iterator.
func (l *feedLookup) close() error {
	if l == nil || l.it == nil {
		return nil
	}
	return l.it.Close()
}

// nopCloser is an io.Closer that does nothing.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// imageGoneError: the entity that change rev names is neither in its
// table nor among the images: the feed no longer keeps rev (a reader fell
// behind its retention), or the store is damaged.
type imageGoneError struct {
	rev   Revision
	key   []byte
	ticks int64
}

func (e *imageGoneError) Error() string {
	return fmt.Sprintf("%v: change %d names the entity under %q at %d, which neither its table nor the feed's images hold", errCorruptFeed, e.rev, e.key, e.ticks)
}

// gone returns the error of a read whose change g.rev named an entity no
// longer found: a *FeedCompactedError if the feed no longer keeps g.rev
// (its retention passed it meanwhile), else g.
func (f *feedLog) gone(ctx context.Context, g *imageGoneError) error {
	it, err := storage.NewIterContext(ctx, f.a.eng, feedBounds)
	if err != nil {
		return err
	}
	defer it.Close()
	if it.First() {
		if oldest, _, ok := feedRecordHead(it.Key(), it.Value()); ok && oldest > g.rev {
			return &FeedCompactedError{After: g.rev - 1, Oldest: oldest}
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return g
}

// imageCheck checks the feed's images and their markers as Verify reads
// them (images sort before markers).
type imageCheck map[string]bool // image keys, true once a marker names them

// key checks the key k, of value v, under keyenc.PrefixFeedImage.
func (ic imageCheck) key(k, v []byte, problems *[]string, more *int) {
	if key, ticks, ok := keyenc.CutFeedImage(k); ok {
		if t, err := recordTicks(v); err != nil || t != ticks {
			addProblem(problems, more, "feed image %q does not hold the record of entity %q at %d", k, key, ticks)
		}
		ic[string(k)] = false
		return
	}
	img, ok := keyenc.CutFeedImageGC(nil, k)
	if !ok || len(v) != 0 {
		addProblem(problems, more, "feed image key %q is neither an image nor its marker", k)
		return
	}
	ic[string(img)] = true
}

// unmarked reports the images that no marker names: the feed's pruning
// would never delete them.
func (ic imageCheck) unmarked(problems *[]string, more *int) {
	for k, marked := range ic {
		if !marked {
			addProblem(problems, more, "feed image %q has no marker: it would never be deleted", k)
		}
	}
}

// verifyFeedRefs checks, on r, that every entity a change of a feed
// record of version 4 names is in its table at the change's time or among
// the images.
func verifyFeedRefs(ctx context.Context, r storage.Reader, problems *[]string, more *int) error {
	it, err := r.NewIter(feedBounds)
	if err != nil {
		return err
	}
	defer it.Close()
	look := &feedLookup{ctx: ctx, r: r}
	defer look.close()
	for ok := it.First(); ok; ok = it.Next() {
		if !namesEntities(it.Value()) {
			continue
		}
		var gone *imageGoneError
		_, err := decodeFeed(look, it.Key(), it.Value(), 0, func(*Change) bool { return true })
		switch {
		case errors.As(err, &gone):
			addProblem(problems, more, "%v", gone)
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		}
		// A record that does not decode is reported already.
	}
	return it.Error()
}
