package localtable

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// Secondary indexes.
//
// The Table service indexes PartitionKey and RowKey alone. A table may
// also declare indexes on its own properties (CreateIndex): each is kept
// by the store in the same atomic commit as every write into the table
// (indexMaintainer, a contributor of the write pipeline), and a query
// whose filter bounds an indexed property reads the index instead of the
// table when that reads fewer entities (query.go, indexplan.go). Answers
// are the scan's: the index only yields candidate keys, each entity is
// fetched (or read from a covering index's entry, which holds its current
// record) and matched by the whole filter (but where the filter is
// exactly the index's value ranges), and the matches are returned in
// (PartitionKey, RowKey) order.
//
// An index entry is the key
//
//	'i' + table ID + index ID + V(p1) [+ V(p2) …] + S(PartitionKey) + S(RowKey)
//
// with an empty value, or, in a covering index, the entity's engine key and
// record (coveringValue), where V(p) is the Edm type's tag (its Kind) then the
// value in an encoding whose byte order is the service's order of values
// of that type (appendIndexValue). The type comes first, so a typed
// comparison reads the entries of the types it can match alone: "Total gt
// 5.0" reads Double entries, "Total gt 5" (an Int32 literal, which the
// service compares with Int32, Int64 and Double values) reads those three.
// An entity lacking the first property has no entry; one lacking a later
// property has the tag of the null Kind there.
//
// The index's definition lives in its table's catalog record (record.go),
// with its state: an index declared on a table that holds entities is
// built in bounded steps, each one commit of the pipeline, and the planner
// uses it only once it is ready. Writes maintain it from its declaration
// on, so the build only has to add the entries of the entities it reads.

// Limits on indexes.
const (
	maxIndexes         = 16 // per table
	maxIndexProperties = 4  // per index
	maxIndexNameLen    = 63
)

// indexBuildChunk is how many entities one step of an index build reads
// and indexes, in one commit.
var indexBuildChunk = 1000

// ErrIndexNotFound is the error of DropIndex and RebuildIndex for an
// index the table does not declare. Its code is IndexNotFound, a
// localtable code (CodeIndexNotFound), which the HTTP server answers with
// 404 and the same message: an Error of that code made elsewhere (such as
// a client's, read from the server's answer) matches it.
var ErrIndexNotFound = sentinel(CodeIndexNotFound, "The specified index does not exist.")

// ErrIndexExists is the error of CreateIndex for a name the table already
// declares (in any case: index names are case-insensitive, as table names
// are) on other properties, and, as a *DuplicateIndexError, for an index
// on exactly the properties of one the table declares under another name.
// Its code is InvalidInput; an Error of that code made elsewhere does not
// match it.
var ErrIndexExists = &Error{Code: CodeInvalidInput, Message: "The specified index already exists."}

// DuplicateIndexError is the error of CreateIndex for an index on exactly
// the properties, in the same order, of an index the table already
// declares under another name: a second one would be kept on every write
// and never read. It names the index declared, and matches ErrIndexExists
// (errors.Is); its code is InvalidInput.
type DuplicateIndexError struct {
	Table      string   // the table
	Name       string   // the name CreateIndex was given
	Existing   string   // the index the table declares on Properties, as declared
	Properties []string // the indexed properties
}

// Error says which index already covers the properties.
func (e *DuplicateIndexError) Error() string { return e.Unwrap().Error() }

// Unwrap returns the error as an *Error of kind ErrIndexExists, so that
// errors.Is(err, ErrIndexExists) holds and errors.As reaches its code.
func (e *DuplicateIndexError) Unwrap() error {
	return newError(ErrIndexExists, "table %q already has index %q on %s: index %q would duplicate it (use %q, or drop it first)",
		e.Table, e.Existing, strings.Join(e.Properties, ", "), e.Name, e.Existing)
}

// findIndex returns the position in defs of the index named name, compared
// case-insensitively (as table names are: "ByScore" and "byscore" name one
// index, displayed as it was declared), or -1.
func findIndex(defs []indexDef, name string) int {
	return slices.IndexFunc(defs, func(x indexDef) bool { return strings.EqualFold(x.Name, name) })
}

// errNoIndex is ErrIndexNotFound for index idx of table name.
func errNoIndex(name, idx string) error {
	return newError(ErrIndexNotFound, "table %q has no index %q", name, idx)
}

func init() {
	// It stands for itself alone: not for the sentinel of its code.
	ErrIndexExists.kind = ErrIndexExists
}

// indexDef is an index as its table's catalog record declares it.
type indexDef struct {
	ID    uint32
	Name  string
	Props []string // the first is the leading key
	Ready bool     // built: the planner may use it
	// Cursor, while the index is built, is S(pk) S(rk) of the last entity
	// the build has indexed (nil: none yet).
	Cursor []byte
	// ForExpiry marks an index SetExpiry declared for the table's expiry
	// policy (expiry.go): the policy's change or removal drops it, in the
	// same commit. CreateIndex of it by its name makes it the caller's.
	ForExpiry bool
	// Covering says the index's entries hold their entities' records (see
	// coveringValue): a query through it fetches no entity.
	Covering bool
}

// IndexInfo describes an index a table declares.
type IndexInfo struct {
	Name       string   // as declared
	Properties []string // the indexed properties, the leading one first
	// Ready says the index is built, so queries use it. An index declared
	// on a table that held entities is not ready until its build ends.
	Ready bool
	// Covering says each entry of the index holds its entity's record, so
	// that a query through it reads the index alone, fetching no entity.
	// Options.IndexRecords says which indexes are: by default those of the
	// memory engine; an index declared before covering entries existed is
	// not.
	Covering bool
}

// sameIndexes reports whether two tables' index lists maintain the same
// entries: the same IDs over the same properties.
func sameIndexes(a, b []indexDef) bool {
	return slices.EqualFunc(a, b, func(x, y indexDef) bool {
		return x.ID == y.ID && slices.Equal(x.Props, y.Props)
	})
}

// ValidateIndex reports whether CreateIndex accepts an index of this name
// on these properties, whatever the table: nil, or an ErrInvalidInput that
// names what is wrong (the name's characters or length, no properties or
// too many, one named twice, or one that cannot be indexed, such as the
// system properties).
func ValidateIndex(name string, props ...string) error {
	if name == "" || len(name) > maxIndexNameLen || !asciiIdentifier(name) {
		return newError(ErrInvalidInput, "index name %q: 1 to %d ASCII letters, digits and '_', not a digit first", abbrev(name), maxIndexNameLen)
	}
	if len(props) == 0 || len(props) > maxIndexProperties {
		return newError(ErrInvalidInput, "index %q names %d properties; an index has 1 to %d", name, len(props), maxIndexProperties)
	}
	for i, p := range props {
		if err := ValidatePropertyName(p); err != nil {
			return newError(ErrInvalidInput, "index %q: property %q cannot be indexed: %s", name, abbrev(p), messageOf(err))
		}
		if slices.Contains(props[:i], p) {
			return newError(ErrInvalidInput, "index %q names property %q twice", name, p)
		}
	}
	return nil
}

// Indexes returns the indexes the table declares, in the order they were
// declared.
func (t *Table) Indexes(ctx context.Context) ([]IndexInfo, error) {
	if err := t.a.enter(ctx); err != nil {
		return nil, err
	}
	defer t.a.exit()
	lt, err := t.a.strategy.current(ctx, t.name) // on a shared engine, another process may have changed them
	if err != nil {
		return nil, err
	}
	defs := *lt.indexes.Load()
	out := make([]IndexInfo, len(defs))
	for i, d := range defs {
		out[i] = IndexInfo{Name: d.Name, Properties: slices.Clone(d.Props), Ready: d.Ready, Covering: d.Covering}
	}
	return out, nil
}

// CreateIndex declares an index named name on the table's properties
// props (one to four; the first is the leading key, the one queries can
// use), and builds it: it returns once the index is ready, which on a
// table that holds entities means once each has been indexed, in steps
// of a bounded number of entities, each its own commit. Writes into the
// table go on during the build, and keep the index from the moment it is
// declared: a step holds, for its own duration (bounded by its size), the
// writes of this process into the partitions of the entities it indexes,
// and no others.
//
// Index names are case-insensitive, as table names are: "ByScore" and
// "byscore" name the same index, which keeps the name it was declared
// with (Indexes).
//
// CreateIndex is idempotent, so that an application may declare its
// indexes at every start: an index the table already declares under the
// same name on the same properties is not declared again (nil at once if
// it is ready). If a build stops (ctx is canceled, the process ends), the
// index stays declared and not ready, and queries do not use it;
// CreateIndex with the same name and properties resumes the build where
// it stopped. A name the table already declares on other properties is
// ErrIndexExists; an index on exactly the properties of one the table
// declares under another name is a *DuplicateIndexError (which matches
// ErrIndexExists) naming that index. CreateIndex of the index SetExpiry
// declared for the expiry policy, by its name, makes it the caller's:
// ClearExpiry then leaves it. A table has at most 16 indexes.
// RebuildIndex rebuilds an index Verify finds wrong.
func (t *Table) CreateIndex(ctx context.Context, name string, props ...string) error {
	if err := ValidateIndex(name, props...); err != nil {
		return err
	}
	a := t.a
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	id, ready, err := t.declareIndex(ctx, name, slices.Clone(props), false)
	if err != nil || ready {
		return err
	}
	return t.buildIndex(ctx, id)
}

// declareIndex declares index name on props, not ready, unless it is
// declared already, and returns its ID and whether it is ready. forExpiry
// marks a new index as SetExpiry's (indexDef.ForExpiry).
func (t *Table) declareIndex(ctx context.Context, name string, props []string, forExpiry bool) (uint32, bool, error) {
	a := t.a
	lower := strings.ToLower(t.name)
	var id uint32
	var ready bool
	err := t.indexDDL(ctx, "declaring index "+name+" of table "+t.name, func(rs *readSet, lt *liveTable) (*metaPlan, error) {
		rec, def, ws, err := planCreateIndex(t.name, lower, rs.vals[0], rs.found[0], name, props, forExpiry, a.coveringIndexes())
		if err != nil {
			return nil, err
		}
		id, ready = def.ID, def.Ready
		if ws == nil {
			return nil, nil // declared already: resume its build
		}
		return &metaPlan{writes: ws, finish: func(err error) {
			if err == nil {
				a.adopt(lower, rec)
			}
		}}, nil
	})
	return id, ready, err
}

// DropIndex removes the index named name (in any case) from the table,
// with all its entries, in one commit. An index the table does not
// declare is ErrIndexNotFound.
func (t *Table) DropIndex(ctx context.Context, name string) error {
	a := t.a
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	lower := strings.ToLower(t.name)
	return t.indexDDL(ctx, "dropping index "+name+" of table "+t.name, func(rs *readSet, lt *liveTable) (*metaPlan, error) {
		rec, ws, err := planDropIndex(t.name, lower, rs.vals[0], rs.found[0], name)
		if err != nil {
			return nil, err
		}
		return &metaPlan{writes: ws, finish: func(err error) {
			if err == nil {
				a.adopt(lower, rec)
			}
		}}, nil
	})
}

// indexDDL runs a change of the table's catalog record that changes what
// its writes must maintain: under Account.ddl, like every catalog write,
// and with the table's lock held exclusively from before the read to the
// publication of the new record, so that the writes of this process in
// flight into the table commit first and the next ones maintain what the
// record declares. (On a shared engine the writes of other processes
// learn it by their commit's condition on the catalog record: see
// versioned.read.) keys beyond the catalog record are read too. A build's
// step, which changes no index that writes maintain, takes stepDDL.
func (t *Table) indexDDL(ctx context.Context, what string, plan func(rs *readSet, lt *liveTable) (*metaPlan, error), keys ...[]byte) error {
	return t.catalogDDL(ctx, what, false, plan, keys)
}

// catalogDDL is indexDDL, or stepDDL if step: a change of the table's
// catalog record, with keys beyond it read too, under Account.ddl and
// the table's lock, held exclusively for a change of what writes
// maintain, shared (with the partition locks of keys' entities) for a
// build's step.
func (t *Table) catalogDDL(ctx context.Context, what string, step bool, plan func(rs *readSet, lt *liveTable) (*metaPlan, error), keys [][]byte) error {
	a := t.a
	lower := strings.ToLower(t.name)
	a.ddl.Lock()
	defer a.ddl.Unlock()
	lt, err := a.strategy.current(ctx, t.name)
	if err != nil {
		return err
	}
	if step {
		lt.mu.RLock()
		defer lt.mu.RUnlock()
	} else {
		lt.mu.Lock()
		defer lt.mu.Unlock()
	}
	if lt.dropped.Load() {
		return errDropped(t.name)
	}
	if step {
		unlock, err := a.lockPartitions(lt.id, keys)
		if err != nil {
			return err
		}
		defer unlock()
	}
	all := append([][]byte{keyenc.CatalogKey(lower)}, keys...)
	return a.update(ctx, what, maxConflictRetries, all, func(rs *readSet) (*metaPlan, error) {
		if !rs.found[0] {
			a.forget(lower, nil) // on a shared engine, another process deleted it
		} else if id, ok := tableRecordID(rs.vals[0]); ok && id != lt.id {
			return nil, errConflictTable(t.name)
		}
		if h := a.beforeCatalogCommit; step && h != nil {
			h("index-step", t.name)
		}
		return plan(rs, lt)
	})
}

// errConflictTable is the error of an index change whose table was
// deleted and re-created (by another process) since it began.
func errConflictTable(name string) error {
	return newError(ErrTableNotFound, "table %q was deleted and re-created meanwhile", name)
}

// buildIndex builds index id of the table, step by step, until it is
// ready. On a shared engine a step is conditioned on every entity it
// read: a step that loses the race to other writers too often
// (ErrServerBusy) is tried again with half as many entities, down to one.
func (t *Table) buildIndex(ctx context.Context, id uint32) error {
	chunk := indexBuildChunk
	for {
		done, err := t.buildStep(ctx, id, chunk)
		switch {
		case errors.Is(err, ErrServerBusy) && chunk > 1:
			chunk /= 2
			continue
		case err != nil || done:
			return err
		}
		chunk = min(indexBuildChunk, 2*chunk)
	}
}

// buildStep indexes the next chunk entities after the index's cursor, in
// one commit that moves the cursor, or marks the index ready when they are
// the last. It reports whether the index is ready.
func (t *Table) buildStep(ctx context.Context, id uint32, chunk int) (bool, error) {
	a := t.a
	if err := a.check(ctx); err != nil {
		return false, err
	}
	lt, snap, err := a.tableSnapshot(ctx, t.name)
	if err != nil {
		return false, err
	}
	def := findIndexByID(*lt.indexes.Load(), id)
	if def == nil {
		snap.Close()
		return false, newError(ErrIndexNotFound, "the index being built was dropped")
	}
	if def.Ready {
		snap.Close()
		return true, nil
	}
	// The keys of the next entities, from a snapshot: the step reads them
	// again, under their partitions' locks (and, on a shared engine, on condition
	// that they are unchanged), and indexes what it reads then.
	prefix := keyenc.AppendTableID(nil, lt.id)
	lo := prefix
	if def.Cursor != nil {
		lo = append(append(slices.Clip(prefix), def.Cursor...), 0)
	}
	it, err := snap.NewIter(&storage.IterOptions{LowerBound: lo, UpperBound: keyenc.PrefixEnd(prefix)})
	if err != nil {
		snap.Close()
		return false, err
	}
	var keys [][]byte
	for ok := it.First(); ok && len(keys) < chunk; ok = it.Next() {
		keys = append(keys, bytes.Clone(it.Key()))
	}
	last := len(keys) < chunk
	err = it.Close()
	snap.Close()
	if err != nil {
		return false, err
	}
	if h := a.beforeCatalogCommit; h != nil {
		h("index-listed", t.name)
	}
	lower := strings.ToLower(t.name)
	ready := false
	nest := a.nests
	err = t.stepDDL(ctx, "building index "+def.Name+" of table "+t.name, func(rs *readSet, lt *liveTable) (*metaPlan, error) {
		rec, ws, err := planBuildIndex(t.name, lower, rs.vals[0], rs.found[0], id, def.Cursor, keys, rs.vals[1:], rs.found[1:], last, nest)
		if err != nil {
			return nil, err
		}
		if ws == nil { // the build moved since the keys were listed: list again from the record read
			a.adopt(lower, rec)
			return nil, nil
		}
		return &metaPlan{writes: ws, finish: func(err error) {
			if err == nil {
				a.adopt(lower, rec)
				ready = last
			}
		}}, nil
	}, keys)
	return ready, err
}

// findIndexByID returns the index of defs with ID id, or nil.
func findIndexByID(defs []indexDef, id uint32) *indexDef {
	for i := range defs {
		if defs[i].ID == id {
			return &defs[i]
		}
	}
	return nil
}

// emptyValue is the value of an index entry.
var emptyValue = []byte{}

// appendIndexValue appends V(v): v's Kind, then v encoded so that byte
// order is the service's order of values of that Kind (filter.Compare):
// strings ordinally by UTF-16 code unit (keyenc.AppendString), Int32 and
// Int64 as signed numbers, Doubles numerically with -0 as 0 and every NaN
// as one NaN after +INF, Booleans false first, DateTimes by ticks, Guids
// by the bytes of their text form (as they are stored), Binary bytewise
// with a prefix first. A null v appends its Kind alone.
func appendIndexValue(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.kind))
	switch v.kind {
	case KindString:
		return keyenc.AppendString(dst, v.str)
	case KindInt32:
		return binary.BigEndian.AppendUint32(dst, uint32(int32(v.num))^1<<31)
	case KindInt64, KindDateTime:
		return keyenc.AppendOrderedInt64(dst, int64(v.num))
	case KindDouble:
		return binary.BigEndian.AppendUint64(dst, orderedDouble(math.Float64frombits(v.num)))
	case KindBool:
		if v.num != 0 {
			return append(dst, 1)
		}
		return append(dst, 0)
	case KindGUID:
		return append(dst, v.str...)
	case KindBinary:
		return keyenc.AppendBytes(dst, v.str)
	}
	return dst
}

// orderedDouble maps f to a uint64 whose order is f's numeric order, -0
// as 0, every NaN above +INF.
func orderedDouble(f float64) uint64 {
	switch {
	case math.IsNaN(f):
		return math.MaxUint64
	case f == 0:
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// indexValueLen is the most bytes appendIndexValue may append for v.
func indexValueLen(v Value) int {
	switch v.kind {
	case KindString:
		return 1 + 2*len(v.str) + 2
	case KindBinary:
		return 1 + 2*len(v.str) + 2
	}
	return 1 + 16
}

// skipIndexValue returns the bytes of b after one V(v) at its front.
func skipIndexValue(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, keyenc.ErrCorrupt
	}
	n := 0
	switch Kind(b[0]) {
	case KindNull:
	case KindString, KindBinary:
		return keyenc.SkipEscaped(b[1:])
	case KindInt32:
		n = 4
	case KindInt64, KindDateTime, KindDouble:
		n = 8
	case KindBool:
		n = 1
	case KindGUID:
		n = 16
	default:
		return nil, keyenc.ErrCorrupt
	}
	if len(b) < 1+n {
		return nil, keyenc.ErrCorrupt
	}
	return b[1+n:], nil
}

// indexEntityKey returns, of an index entry of an index of nprops
// properties, S(pk) S(rk): the entity's key within its table.
func indexEntityKey(entry []byte, nprops int) ([]byte, error) {
	if len(entry) < keyenc.IndexPrefixLen {
		return nil, keyenc.ErrCorrupt
	}
	b := entry[keyenc.IndexPrefixLen:]
	for range nprops {
		var err error
		if b, err = skipIndexValue(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// indexValues finds in rec the values of x's properties; ok false: the
// entity lacks the leading one, so it has no entry.
func indexValues(vals []Value, x *indexDef, rec []byte) ([]Value, bool, error) {
	vals = vals[:0]
	for i, p := range x.Props {
		v, ok, err := findProperty(rec, p)
		if err != nil {
			return nil, false, err
		}
		if !ok && i == 0 {
			return nil, false, nil
		}
		vals = append(vals, v)
	}
	return vals, true, nil
}

// appendIndexEntry appends the entry of index x of table tableID for the
// entity of engine key entityKey whose values of x's properties are vals.
func appendIndexEntry(dst []byte, tableID uint64, x *indexDef, entityKey []byte, vals []Value) []byte {
	dst = keyenc.AppendIndexPrefix(dst, tableID, x.ID)
	for _, v := range vals {
		dst = appendIndexValue(dst, v)
	}
	return append(dst, entityKey[keyenc.TablePrefixLen:]...)
}

// indexEntryLen is the most bytes appendIndexEntry appends.
func indexEntryLen(entityKey []byte, vals []Value) int {
	n := keyenc.IndexPrefixLen + len(entityKey) - keyenc.TablePrefixLen
	for _, v := range vals {
		n += indexValueLen(v)
	}
	return n
}

// indexMaintainer is the contributor that keeps every index in step with
// its table: for each entity a commit writes, the entries of its record
// before the change that differ from those after it are deleted, and the
// new ones set; a table's deletion deletes every entry of its indexes. The
// entry of a covering index holds the entity's record, so it is set again
// on every write of the entity, its indexed values changed or not; on an
// engine whose batches nest writes (storage.NestedSetter: the memory
// engine), the first covering index's entry and the entity share one
// buffer (the maintainer runs before the feed, which then copies the
// entity into its record).
type indexMaintainer struct{}

// wants: the entity writes into a table that has indexes (loaded as
// contribute loads them: the table's lock, held by the write, keeps them
// from changing meanwhile; on a shared engine the read has refreshed them
// and the commit is conditioned on its catalog record).
func (indexMaintainer) wants(lt *liveTable) bool { return len(*lt.indexes.Load()) > 0 }

func (indexMaintainer) contribute(c *commitContext) error {
	var oldVals, newVals [maxIndexProperties]Value
	at := 0 // where the search for the next change's entity write starts
	for i := range c.changes {
		ch := &c.changes[i]
		switch ch.kind {
		case changeTableDeleted:
			start := keyenc.AppendIndexTable(nil, ch.tableID)
			c.delRange(start, keyenc.PrefixEnd(start))
			continue
		case changeInsert, changeReplace, changeMerge, changeDelete, changeExpired:
		default:
			continue
		}
		if ch.lt == nil {
			continue
		}
		if ch.new == nil && ch.lt.minKeys.Load() > 0 {
			ch.lt.minKeys.Add(-1) // an entity deleted: the planner's bound stays one
		}
		defs := *ch.lt.indexes.Load()
		nested := false // the entity's write is nested in an entry already
		for j := range defs {
			x := &defs[j]
			var ov, nv []Value
			var oldOK, newOK bool
			var err error
			if ch.old != nil {
				if ov, oldOK, err = indexValues(oldVals[:0], x, ch.old); err != nil {
					return err
				}
			}
			if ch.new != nil {
				if nv, newOK, err = indexValues(newVals[:0], x, ch.new); err != nil {
					return err
				}
			}
			same := oldOK && newOK && slices.EqualFunc(ov, nv, sameIndexValue)
			if same && !x.Covering {
				continue // the entry stays
			}
			if oldOK && !same {
				k := c.scratch(indexEntryLen(ch.key, ov))
				c.del(appendIndexEntry(k, ch.tableID, x, ch.key, ov))
			}
			if !newOK {
				continue
			}
			k := c.scratch(indexEntryLen(ch.key, nv))
			k = appendIndexEntry(k, ch.tableID, x, ch.key, nv)
			if !x.Covering {
				c.set(k, emptyValue)
				continue
			}
			if !nested && c.a.nests {
				nested = true
				p, ok := findWrite(c.writes, ch.key, at)
				if p >= 0 {
					at = p + 1
				}
				if ok {
					// The entry's value is the entity's key and record:
					// its write, nested (see write).
					c.set(k, emptyValue)
					nestIn(c.writes, p, 0)
					continue
				}
			}
			v := c.scratch(len(ch.key) + len(ch.new))
			c.set(k, coveringValue(v, ch.key, ch.new))
		}
	}
	return nil
}

// coveringValue appends the value of an entry of a covering index for the
// entity of engine key entityKey and record rec: the key, then the
// record, as the entity's own write has them. Where the engine nests
// writes, the entity's write is nested in the entry instead (its value
// empty, the entity's key and record inserted at 0: see write), and the
// engine stores both in one buffer.
func coveringValue(dst, entityKey, rec []byte) []byte {
	return append(append(dst, entityKey...), rec...)
}

// coveringRecord returns, of the value v of an entry of a covering index
// of the table of key prefix prefix, whose entity key within the table is
// k (S(pk) S(rk)), the entity's engine key and its record; ok false when
// v is not such a value.
func coveringRecord(v, prefix, k []byte) (entityKey, rec []byte, ok bool) {
	n := len(prefix) + len(k)
	if len(v) < n || !bytes.Equal(v[:len(prefix)], prefix) || !bytes.Equal(v[len(prefix):n], k) {
		return nil, nil, false
	}
	return v[:n:n], v[n:], true
}

// coveringIndexes reports whether the indexes the account declares are
// covering, as Options.IndexRecords says: by default where an entity can
// share its record with its entry (the engine nests writes), always if
// asked; never on a shared engine, whose requests are bounded in size (an
// etcd cluster's --max-request-bytes), where a record in each entry would
// double the size of every write.
func (a *Account) coveringIndexes() bool {
	if _, shared := a.eng.(storage.VersionedEngine); shared {
		return false
	}
	switch a.records {
	case IndexRecordsAlways:
		return true
	case IndexRecordsNever:
		return false
	}
	return a.nests
}

// sameIndexValue reports whether two values have the same index encoding.
func sameIndexValue(a, b Value) bool {
	if a.kind != b.kind {
		return false
	}
	if a.kind == KindDouble {
		return orderedDouble(math.Float64frombits(a.num)) == orderedDouble(math.Float64frombits(b.num))
	}
	return a.num == b.num && a.str == b.str
}
