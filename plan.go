package localtable

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/localtable/localtable/internal/keyenc"
)

// Plans.
//
// A plan decides what a write does from the state its read found, and
// nothing else: no engine, no lock, no clock. Each function here is pure,
// so that one function decides each kind of write whichever strategy
// commits it (see strategy.go), and each is tested by tables of states
// (plan_test.go).

// entityStep is what the plan decided for one action of an entity write.
type entityStep struct {
	exists bool  // the entity was found
	ticks  int64 // its stored Timestamp, when it exists
	// merged holds the properties to write for a merge into an existing
	// entity (the stored ones with the action's over them); merge says
	// the step is one.
	merged Properties
	merge  bool
	// expired says the stored entity had expired (expiry.go): the step
	// treats it as absent. skip says the step writes nothing: an
	// actionExpire whose entity is no longer expired with the ETag the
	// sweeper read.
	expired, skip bool
}

// entityPlan is the decision of an entity write: a step per action.
type entityPlan struct {
	steps []entityStep
	// floor is the largest Timestamp of the entities read (-1 for none):
	// the commit's Timestamp is above it, so each entity's ETags
	// strictly increase whichever clock stamped them.
	floor int64
	// stamp says that some action writes a record, so the commit takes a
	// Timestamp from the clock.
	stamp bool
}

// planEntities decides each action of an entity write on table from the
// stored records read, vals[i] for action i (found[i] false: absent):
// existence and If-Match, and the properties of each merge. A stored
// entity that x says has expired counts as absent (its Timestamp still
// floors the commit's); an actionExpire deletes it only if it has expired
// and its ETag is the action's IfMatch, and is skipped otherwise. An
// action that cannot apply fails the write: planEntities returns its index
// with its error; a stored record that does not decode returns index -1.
// The steps are appended to steps, a buffer to reuse.
func planEntities(table string, actions []Action, vals [][]byte, found []bool, steps []entityStep, x expiryCheck) (entityPlan, int, error) {
	p := entityPlan{steps: append(steps, make([]entityStep, len(actions))...), floor: -1}
	for i := range actions {
		act := &actions[i]
		st := &p.steps[i]
		st.exists = found[i]
		if st.exists && x.prop != "" {
			expired, err := x.expired(vals[i])
			if err != nil {
				return p, -1, err
			}
			st.exists, st.expired = !expired, expired
		}
		st.merge = st.exists && (act.Type == ActionUpdateMerge || act.Type == ActionUpsertMerge)
		if found[i] {
			var err error
			if st.merge {
				st.ticks, st.merged, err = decodeSelected(vals[i], selection{})
			} else {
				st.ticks, err = recordTicks(vals[i])
			}
			if err != nil {
				return p, -1, err
			}
			p.floor = max(p.floor, st.ticks)
		}
		if act.Type == actionExpire {
			st.skip = !st.expired || act.IfMatch != etagOf(st.ticks)
			continue
		}
		if err := checkCondition(table, act, st.exists, st.ticks); err != nil {
			return p, i, err
		}
		if act.Type == ActionDelete {
			continue
		}
		p.stamp = true
		if st.merge {
			for name, v := range act.Entity.Properties {
				if !v.IsNull() {
					st.merged[name] = v
				}
			}
			m := Entity{PartitionKey: act.Entity.PartitionKey, RowKey: act.Entity.RowKey, Properties: st.merged}
			if err := checkMerged(&m); err != nil {
				return p, i, err
			}
		}
	}
	return p, 0, nil
}

// checkCondition applies an action's existence and If-Match rules.
func checkCondition(table string, act *Action, exists bool, curTicks int64) error {
	e := &act.Entity
	switch act.Type {
	case ActionInsert:
		if exists {
			return newError(ErrEntityExists, "entity (%q, %q) already exists in table %q", abbrev(e.PartitionKey), abbrev(e.RowKey), table)
		}
	case ActionUpdateReplace, ActionUpdateMerge, ActionDelete:
		if !exists {
			return newError(ErrEntityNotFound, "entity (%q, %q) does not exist in table %q", abbrev(e.PartitionKey), abbrev(e.RowKey), table)
		}
		if act.IfMatch != "" && act.IfMatch != ETagAny {
			if cur := etagOf(curTicks); act.IfMatch != cur {
				return newError(ErrConditionNotMet, "entity (%q, %q) has ETag %s, not %s", abbrev(e.PartitionKey), abbrev(e.RowKey), cur, act.IfMatch)
			}
		}
	}
	return nil
}

// writeSet returns the writes of the plan at Timestamp ticks, appended to
// ws, and each action's new ETag ("" for deletes), in tags if it has one
// per action (else a new slice): action i's record (or
// deletion) under keys[i], in the actions' order, none for a skipped step. recs holds the records the actions' entities
// were encoded to, action i's ending at ends[i], with a Timestamp that
// writeSet fills in; a merge's record is encoded anew, into a buffer of
// its own (recs holds the other actions' records).
func (p *entityPlan) writeSet(actions []Action, keys [][]byte, recs []byte, ends []int, ticks int64, ws []write, tags []ETag) ([]write, []ETag) {
	if len(tags) != len(actions) {
		tags = make([]ETag, len(actions))
	}
	clear(tags)
	var tag ETag
	if p.stamp {
		tag = etagOf(ticks) // one Timestamp, so one ETag, per transaction
	}
	var merged []byte
	for i := range actions {
		switch {
		case p.steps[i].skip:
			continue
		case actions[i].Type == ActionDelete:
			ws = append(ws, write{key: keys[i], del: true})
			continue
		case actions[i].Type == actionExpire:
			ws = append(ws, write{key: keys[i], del: true})
			tags[i] = actions[i].IfMatch // the sweeper counts its deletions by it
			continue
		}
		var val []byte
		if st := &p.steps[i]; st.merge {
			start := len(merged)
			merged = appendRecord(merged, ticks, st.merged)
			val = merged[start:len(merged):len(merged)]
		} else {
			from := 0
			if i > 0 {
				from = ends[i-1]
			}
			val = recs[from:ends[i]]
			setRecordTicks(val, ticks)
		}
		ws = append(ws, write{}) // filled in place: see applyWrites
		ws[len(ws)-1].key, ws[len(ws)-1].value = keys[i], val
		tags[i] = tag
	}
	return ws, tags
}

// planCreateTable decides CreateTable of name (lower-cased, lower) from
// the catalog record read under its name and the stored next table ID
// (nextFound false: none stored), with next the account's own idea of it.
// When the name is taken it returns the table there, and no writes;
// otherwise the new table's record and the writes that create it.
func planCreateTable(name, lower string, cur []byte, curFound bool, nextVal []byte, nextFound bool, next uint64) (existing, created *tableRecord, ws []write, err error) {
	key := keyenc.CatalogKey(lower)
	if curFound {
		rec, err := decodeTableRecord(cur)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w (key %q)", err, key)
		}
		return &rec, nil, nil, nil
	}
	if nextFound {
		n, ok := decodeTicks(nextVal)
		if !ok {
			return nil, nil, nil, fmt.Errorf("localtable: corrupt metadata %q", metaNextID)
		}
		next = max(next, uint64(n))
	}
	rec := &tableRecord{ID: next, Name: name}
	return nil, rec, []write{
		{key: key, value: rec.append(nil)},
		{key: metaNextID, value: encodeTicks(int64(next + 1))},
	}, nil
}

// planDeleteTable decides DeleteTable of name from the catalog record
// read under it: the table's record, and the writes that remove it and,
// by one range deletion, its entities. A table not found is
// ErrTableNotFound.
func planDeleteTable(name, lower string, cur []byte, curFound bool) (*tableRecord, []write, error) {
	key := keyenc.CatalogKey(lower)
	if !curFound {
		return nil, nil, errNoTable(name)
	}
	rec, err := decodeTableRecord(cur)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (key %q)", err, key)
	}
	prefix := keyenc.AppendTableID(nil, rec.ID)
	return &rec, []write{
		{key: key, del: true},
		{key: prefix, del: true, end: keyenc.PrefixEnd(prefix)},
	}, nil
}

// planSetPolicies decides SetAccessPolicy of name from the catalog record
// read under it: the record with policies, and its write.
func planSetPolicies(name, lower string, cur []byte, curFound bool, policies []AccessPolicy) (*tableRecord, []write, error) {
	key := keyenc.CatalogKey(lower)
	if !curFound {
		return nil, nil, newError(ErrTableNotFound, "table %q does not exist", name)
	}
	rec, err := decodeTableRecord(cur)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (key %q)", err, key)
	}
	rec.Policies = policies
	return &rec, []write{{key: key, value: rec.append(nil)}}, nil
}

// planRaiseMark decides a raise of the clock's high-water mark to cover
// mark, from the mark stored (found false: none). Every raise writes, even
// when the stored mark already covers mark (it then writes the stored
// one plus a tick): so the last writer of the mark on a shared engine
// knows that no reservation came after its own. It returns the value
// written, the stored one it replaces, and the write; a stored mark at
// the last tick there is needs no write (ws nil).
func planRaiseMark(stored []byte, found bool, mark int64, nonce uint64) (wrote, prev int64, ws []write, err error) {
	if found {
		var ok bool
		if prev, _, ok = decodeMark(stored); !ok {
			return 0, 0, nil, fmt.Errorf("localtable: corrupt metadata %q", metaClock)
		}
	}
	wrote = mark
	if prev >= mark {
		if prev >= maxTicks {
			return 0, prev, nil, nil // the last tick there is: nothing to write
		}
		wrote = prev + 1
	}
	return wrote, prev, []write{{key: metaClock, value: encodeMark(wrote, nonce)}}, nil
}

// planLowerMark decides the lowering of the clock's mark at a clean Close
// to last, the last tick this account handed out, from the mark stored:
// only if the stored mark is still the one this account wrote (wrote, with
// its nonce), and to the mark that write replaced (prev) if that is higher,
// since other accounts may still hand out ticks up to it. A mark written
// since by another account is left alone: moved. An account whose nonce
// is 0 owns its engine, and so the mark, alone: it lowers it to last.
func planLowerMark(stored []byte, found bool, wrote, prev, last int64, nonce uint64) (ws []write, moved bool) {
	if !found {
		return nil, true
	}
	t, n, ok := decodeMark(stored)
	if !ok || t != wrote || n != nonce {
		return nil, true
	}
	if nonce != 0 {
		last = max(last, prev)
	}
	return []write{{key: metaClock, value: encodeMark(last, nonce)}}, false
}

// planServiceProperties decides an update of the service properties from
// the blob stored (found false: none) and f, which gives the new blob
// from the stored one (nil when none): the write of the result, its
// deletion when empty, or nothing when it is what is stored. f must be
// pure, as the plan is: a lost race on a shared engine calls it again.
// A result larger than MaxServiceProperties, or f's error, is an error.
func planServiceProperties(stored []byte, found bool, f func(cur []byte) ([]byte, error)) ([]write, error) {
	var cur []byte
	if found {
		cur = bytes.Clone(stored) // f may keep it; the read's buffer is not its
	}
	next, err := f(cur)
	if err != nil {
		return nil, err
	}
	if len(next) > MaxServiceProperties {
		return nil, newError(ErrInvalidInput, "service properties of %d bytes; at most %d are stored", len(next), MaxServiceProperties)
	}
	switch {
	case len(next) == 0 && !found:
		return nil, nil
	case len(next) == 0:
		return []write{{key: metaServiceProps, del: true}}, nil
	case found && bytes.Equal(next, stored):
		return nil, nil
	}
	return []write{{key: metaServiceProps, value: bytes.Clone(next)}}, nil
}

// decodeCatalogRecord decodes the catalog record of table name read under
// key (found false: none, ErrTableNotFound).
func decodeCatalogRecord(name string, key, cur []byte, found bool) (tableRecord, error) {
	if !found {
		return tableRecord{}, newError(ErrTableNotFound, "table %q does not exist", name)
	}
	rec, err := decodeTableRecord(cur)
	if err != nil {
		return rec, fmt.Errorf("%w (key %q)", err, key)
	}
	return rec, nil
}

// planCreateIndex decides CreateIndex of index idx on props of table name
// from its catalog record read: the record with the index declared, not
// ready, under the next index ID, and its write. Index names are compared
// case-insensitively (findIndex). An index of that name and those
// properties declared already is returned with no writes (its build
// resumes if it is not ready), or, when it is one SetExpiry declared
// (forExpiry false: the caller's own declaration), with the write of the
// record that makes it the caller's (its ForExpiry mark cleared, so that
// the policy's end leaves it); of that name otherwise, ErrIndexExists;
// another name on exactly those properties, a *DuplicateIndexError naming
// the index declared. forExpiry marks a new index as SetExpiry's.
func planCreateIndex(name, lower string, cur []byte, found bool, idx string, props []string, forExpiry, covering bool) (*tableRecord, indexDef, []write, error) {
	key := keyenc.CatalogKey(lower)
	rec, err := decodeCatalogRecord(name, key, cur, found)
	if err != nil {
		return nil, indexDef{}, nil, err
	}
	if i := findIndex(rec.Indexes, idx); i >= 0 {
		x := rec.Indexes[i]
		if !slices.Equal(x.Props, props) {
			return nil, indexDef{}, nil, newError(ErrIndexExists, "table %q already has an index %q on %s", name, x.Name, strings.Join(x.Props, ", "))
		}
		if !x.ForExpiry || forExpiry {
			return &rec, x, nil, nil // declared already: nothing to write, a build to resume if not ready
		}
		rec.Indexes = slices.Clone(rec.Indexes)
		rec.Indexes[i].ForExpiry = false
		return &rec, rec.Indexes[i], []write{{key: key, value: rec.append(nil)}}, nil
	}
	next := uint32(1)
	for _, x := range rec.Indexes {
		if slices.Equal(x.Props, props) {
			return nil, indexDef{}, nil, &DuplicateIndexError{Table: name, Name: idx, Existing: x.Name, Properties: slices.Clone(props)}
		}
		next = max(next, x.ID+1)
	}
	if len(rec.Indexes) >= maxIndexes {
		return nil, indexDef{}, nil, newError(ErrInvalidInput, "table %q has %d indexes, the most a table may have", name, len(rec.Indexes))
	}
	def := indexDef{ID: next, Name: idx, Props: props, ForExpiry: forExpiry, Covering: covering}
	rec.Indexes = append(slices.Clip(rec.Indexes), def)
	return &rec, def, []write{{key: key, value: rec.append(nil)}}, nil
}

// planDropIndex decides DropIndex of index idx of table name from its
// catalog record read: the record without it, its write and the range
// deletion of its entries.
func planDropIndex(name, lower string, cur []byte, found bool, idx string) (*tableRecord, []write, error) {
	key := keyenc.CatalogKey(lower)
	rec, err := decodeCatalogRecord(name, key, cur, found)
	if err != nil {
		return nil, nil, err
	}
	i := findIndex(rec.Indexes, idx)
	if i < 0 {
		return nil, nil, errNoIndex(name, idx)
	}
	if err := checkDropExpiryIndex(name, &rec, i); err != nil {
		return nil, nil, err
	}
	prefix := keyenc.AppendIndexPrefix(nil, rec.ID, rec.Indexes[i].ID)
	rec.Indexes = slices.Delete(slices.Clone(rec.Indexes), i, i+1)
	return &rec, []write{
		{key: key, value: rec.append(nil)},
		{key: prefix, del: true, end: keyenc.PrefixEnd(prefix)},
	}, nil
}

// planBuildIndex decides a step of the build of index id of table name
// from its catalog record read and the entities read under keys (vals[i],
// found[i] false: deleted since the build listed it): the entries of the
// entities found, and the record with the index's cursor after the last
// key, or, when last, the index ready. An index no longer declared, or
// ready already, is ErrIndexNotFound or no writes; so is one whose cursor
// is no longer from, the cursor the keys were listed after (the build was
// restarted, or another build of it stepped, meanwhile): the step's caller
// lists the keys again.
//
// With nest (the engine's batches are storage.NestedSetters), the entry of
// the table's first covering index and the entity, written again as it was
// read, are set in one buffer, as the entity's writes set them
// (indexMaintainer), so the entry costs no copy of the record.
func planBuildIndex(name, lower string, cur []byte, found bool, id uint32, from []byte, keys, vals [][]byte, efound []bool, last, nest bool) (*tableRecord, []write, error) {
	key := keyenc.CatalogKey(lower)
	rec, err := decodeCatalogRecord(name, key, cur, found)
	if err != nil {
		return nil, nil, err
	}
	rec.Indexes = slices.Clone(rec.Indexes)
	x := findIndexByID(rec.Indexes, id)
	if x == nil {
		return nil, nil, newError(ErrIndexNotFound, "table %q: the index being built was dropped", name)
	}
	if x.Ready || !bytes.Equal(x.Cursor, from) {
		return &rec, nil, nil
	}
	// The entity shares its record with the entry of the table's first
	// covering index alone, as its writes make it (indexMaintainer).
	nest = nest && x.Covering && x == &rec.Indexes[slices.IndexFunc(rec.Indexes, func(d indexDef) bool { return d.Covering })]
	var ws []write
	var vbuf [maxIndexProperties]Value
	for i, k := range keys {
		if !efound[i] {
			continue
		}
		v, ok, err := indexValues(vbuf[:0], x, vals[i])
		if err != nil {
			return nil, nil, fmt.Errorf("%w (key %q)", err, k)
		}
		if !ok {
			continue
		}
		entry := write{key: appendIndexEntry(nil, rec.ID, x, k, v), value: emptyValue}
		if x.Covering {
			if nest {
				ws = append(ws, write{key: k, value: vals[i]}, entry)
				nestIn(ws, len(ws)-2, 0) // the entry's value is the entity's key and record
				continue
			}
			entry.value = coveringValue(nil, k, vals[i])
		}
		ws = append(ws, entry)
	}
	if last {
		x.Ready, x.Cursor = true, nil
	} else if len(keys) > 0 {
		x.Cursor = bytes.Clone(keys[len(keys)-1][keyenc.TablePrefixLen:])
	}
	return &rec, append(ws, write{key: key, value: rec.append(nil)}), nil
}
