package localtable

import (
	"context"
	"encoding/base64"
	"iter"
	"strconv"
	"strings"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// QueryOptions select, project and page a query.
type QueryOptions struct {
	// Filter selects entities; nil selects all. Package filter parses the
	// service's $filter syntax into a Predicate and builds them from typed
	// values; its key ranges decide what is scanned.
	Filter Predicate
	// Select lists the custom properties to return ($select); nil returns
	// all. The keys, Timestamp and ETag are always returned; a selected
	// property an entity lacks is absent from its Properties.
	Select []string
	// Top is the page size ($top): 1 to 1000, 0 meaning 1000.
	Top int
	// Continuation resumes a query after the page that returned it.
	Continuation Continuation
	// ScanLimit bounds the entities one page reads; a page that reaches it
	// ends early (perhaps empty) with a Continuation, as the service ends
	// a page after 5 seconds of work. 0 means no bound.
	ScanLimit int
	// MaxBytes bounds the size of one page, measured by PayloadSize: a page
	// ends with a Continuation after the entity that reaches it. 0 means no
	// bound. A server uses it to bound its responses.
	MaxBytes int
}

// QueryPage is one page of query results.
type QueryPage struct {
	Entities []Entity
	// Continuation is zero when the query is complete; otherwise pass it
	// in QueryOptions.Continuation, with the same Filter and Select, for
	// the next page. A page may be short, or empty, and still continue.
	Continuation Continuation
	Stats        QueryStats
}

// QueryStats say how much work a page took.
type QueryStats struct {
	Scanned  int  // entities read from the engine
	Returned int  // entities returned
	Ranges   int  // key ranges the plan scanned
	FullScan bool // the filter gave no key range: the whole table was scanned
	Bytes    int  // PayloadSize of the entities returned, counted when MaxBytes is set
}

// Continuation is an opaque position in a table's entity order, carried on
// the wire as the x-ms-continuation-NextPartitionKey and -NextRowKey
// headers. A query resumes strictly after the entity it names, so entities
// present for the whole query are returned exactly once even when others
// write concurrently. Tokens depend only on keys: they stay valid across
// process restarts.
type Continuation struct {
	NextPartitionKey string
	NextRowKey       string
}

// IsZero reports whether c is the zero Continuation: the query is complete
// (or has not started).
func (c Continuation) IsZero() bool { return c.NextPartitionKey == "" && c.NextRowKey == "" }

func continuationAfter(pk, rk string) Continuation {
	return Continuation{NextPartitionKey: encodeToken(pk), NextRowKey: encodeToken(rk)}
}

// encodeToken writes a key as "1!<length>!<base64>", the shape of the
// service's tokens.
func encodeToken(s string) string {
	b := base64.StdEncoding.EncodeToString([]byte(s))
	return "1!" + strconv.Itoa(len(b)) + "!" + b
}

func decodeToken(tok string) (string, bool) {
	rest, ok := strings.CutPrefix(tok, "1!")
	if !ok {
		return "", false
	}
	n, b, ok := strings.Cut(rest, "!")
	if !ok || n != strconv.Itoa(len(b)) {
		return "", false
	}
	s, err := base64.StdEncoding.DecodeString(b)
	if err != nil {
		return "", false
	}
	return string(s), true
}

// position decodes a continuation into the key it resumes after.
func (c Continuation) position() (pk, rk string, err error) {
	pk, ok1 := decodeToken(c.NextPartitionKey)
	rk, ok2 := decodeToken(c.NextRowKey)
	if !ok1 || !ok2 {
		return "", "", newError(ErrInvalidInput, "continuation token (NextPartitionKey %q, NextRowKey %q) is not valid", c.NextPartitionKey, c.NextRowKey)
	}
	return pk, rk, nil
}

// Query returns one page of the entities that opts select, in
// (PartitionKey, RowKey) order, read from one consistent snapshot.
//
// The filter's key ranges bound the scan: PartitionKey eq 'x' reads one
// partition, and a RowKey range within it reads just that range; other
// conditions are checked on each entity read. Stats report the work.
func (t *Table) Query(ctx context.Context, opts QueryOptions) (QueryPage, error) {
	var page QueryPage
	a := t.a
	if err := a.check(ctx); err != nil {
		return page, err
	}
	top, err := pageSize(opts.Top)
	if err != nil {
		return page, err
	}
	var after Key
	if !opts.Continuation.IsZero() {
		pk, rk, err := opts.Continuation.position()
		if err != nil {
			return page, err
		}
		after = KeyAfter(pk, rk)
	}
	ranges := []KeyRange{{}}
	if opts.Filter != nil {
		if rs, ok := opts.Filter.KeyRanges(); ok {
			ranges = rs
		} else {
			page.Stats.FullScan = true
		}
	} else {
		page.Stats.FullScan = true
	}

	a.mu.RLock()
	rec, err := a.lookup(t.name)
	var snap storage.Snapshot
	if err == nil {
		snap, err = a.eng.NewSnapshot()
	}
	a.mu.RUnlock()
	if err != nil {
		return page, err
	}
	defer snap.Close()

	sel := makeSelection(opts.Select)
	prefix := keyenc.AppendTableID(nil, rec.ID)
	tableEnd := keyenc.PrefixEnd(prefix)
	for ri, r := range ranges {
		if !after.IsZero() && (r.Start.IsZero() || r.Start.Compare(after) < 0) {
			r.Start = after
		}
		if r.Empty() {
			continue
		}
		page.Stats.Ranges++
		lo := append(append([]byte(nil), prefix...), r.Start.encoded()...)
		hi := tableEnd
		if !r.End.IsZero() {
			hi = append(append([]byte(nil), prefix...), r.End.encoded()...)
		}
		done, more, err := t.scanRange(ctx, snap, lo, hi, opts, sel, top, &page)
		if err != nil {
			return QueryPage{}, err
		}
		if done {
			// The page is full or the scan budget spent: it continues only
			// if a key follows in this range or a later one.
			if !more {
				if more, err = anyKey(snap, ranges[ri+1:], prefix, tableEnd); err != nil {
					return QueryPage{}, err
				}
			}
			if !more {
				page.Continuation = Continuation{}
			}
			break
		}
	}
	page.Stats.Returned = len(page.Entities)
	return page, nil
}

// scanRange reads [lo, hi) into page. It reports done when the page is
// full or the scan budget is spent, leaving page.Continuation after the
// last entity read, and more when [lo, hi) holds keys after it.
func (t *Table) scanRange(ctx context.Context, snap storage.Snapshot, lo, hi []byte, opts QueryOptions, sel selection, top int, page *QueryPage) (done, more bool, err error) {
	it, err := snap.NewIter(&storage.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return false, false, err
	}
	defer it.Close()
	// With a filter, each entity is decoded into one reused scratch entity
	// for Match, and only a match is copied out with its ETag.
	var scratch Entity
	if opts.Filter != nil {
		scratch.Properties = make(Properties)
	}
	for ok := it.First(); ok; ok = it.Next() {
		if page.Stats.Scanned%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return false, false, err
			}
		}
		page.Stats.Scanned++
		var pk, rk string
		added := false
		if opts.Filter == nil {
			e, err := decodeEntity(it.Key(), it.Value(), sel)
			if err != nil {
				return false, false, err
			}
			pk, rk = e.PartitionKey, e.RowKey
			page.Entities = append(page.Entities, e)
			added = true
		} else {
			pk, rk, err = keyenc.DecodeEntityKey(it.Key())
			if err != nil {
				return false, false, err
			}
			clear(scratch.Properties)
			ticks, err := decodeInto(it.Value(), selection{}, scratch.Properties)
			if err != nil {
				return false, false, err
			}
			scratch.PartitionKey, scratch.RowKey, scratch.Timestamp = pk, rk, TicksToTime(ticks)
			if opts.Filter.Match(&scratch) {
				props := make(Properties, len(scratch.Properties))
				for name, v := range scratch.Properties {
					if sel.has(name) {
						props[name] = v
					}
				}
				page.Entities = append(page.Entities, makeEntity(pk, rk, ticks, props))
				added = true
			}
		}
		if added && opts.MaxBytes > 0 {
			page.Stats.Bytes += PayloadSize(&page.Entities[len(page.Entities)-1])
		}
		if len(page.Entities) == top || (opts.ScanLimit > 0 && page.Stats.Scanned >= opts.ScanLimit) ||
			(opts.MaxBytes > 0 && page.Stats.Bytes >= opts.MaxBytes) {
			page.Continuation = continuationAfter(pk, rk)
			more := it.Next()
			return true, more, it.Error()
		}
	}
	return false, false, it.Error()
}

// anyKey reports whether any of the ranges holds a key.
func anyKey(snap storage.Snapshot, rest []KeyRange, prefix, tableEnd []byte) (bool, error) {
	for _, r := range rest {
		lo := append(append([]byte(nil), prefix...), r.Start.encoded()...)
		hi := tableEnd
		if !r.End.IsZero() {
			hi = append(append([]byte(nil), prefix...), r.End.encoded()...)
		}
		it, err := snap.NewIter(&storage.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return false, err
		}
		ok := it.First()
		err = it.Close()
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// QueryAll returns an iterator over every entity that opts select, walking
// all pages (opts.Continuation is where it starts). It yields the first
// error and stops. Each page is read from its own snapshot, which is
// released before its entities are yielded, so breaking out of the loop
// leaks nothing.
func (t *Table) QueryAll(ctx context.Context, opts QueryOptions) iter.Seq2[Entity, error] {
	return func(yield func(Entity, error) bool) {
		for {
			page, err := t.Query(ctx, opts)
			if err != nil {
				yield(Entity{}, err)
				return
			}
			for _, e := range page.Entities {
				if !yield(e, nil) {
					return
				}
			}
			if page.Continuation.IsZero() {
				return
			}
			opts.Continuation = page.Continuation
		}
	}
}
