package localtable

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/localtable/localtable/internal/keyenc"
)

// VerifyReport is what Account.Verify found.
type VerifyReport struct {
	Tables []TableReport // in the order of the catalog (by lower-cased name)
	Keys   int           // keys read
	// Problems are those of no table: catalog records that do not decode,
	// entities of no table, unknown keys, metadata.
	Problems []string
}

// TableReport is what Verify found of one table.
type TableReport struct {
	Name       string   // the table's name
	Entities   int      // entities read
	Partitions int      // distinct partition keys among them
	Problems   []string // what is wrong with the table's records
	// RepairIndexes names the table's indexes Verify found wrong (an
	// entry missing, extra or stale), in the order they were declared:
	// Table.RebuildIndex (localtable index repair TABLE NAME) rebuilds
	// each from the table.
	RepairIndexes []string
}

// OK reports whether Verify found no problem.
func (r *VerifyReport) OK() bool {
	if len(r.Problems) > 0 {
		return false
	}
	for _, t := range r.Tables {
		if len(t.Problems) > 0 {
			return false
		}
	}
	return true
}

// maxProblems bounds the problems listed per table (and for the account);
// the last entry then says how many more there were.
const maxProblems = 50

func addProblem(list *[]string, more *int, format string, args ...any) {
	if len(*list) < maxProblems {
		*list = append(*list, fmt.Sprintf(format, args...))
		return
	}
	*more++
}

// Verify reads every key of the account's store, from one snapshot, and
// checks that it is what localtable writes: every catalog record decodes,
// is filed under its lower-cased name, names a valid table and a table ID
// of its own below the next ID to assign; every entity key decodes and
// belongs to a table of the catalog; every entity record decodes, and the
// entity it holds (keys, property names and values, size) passes the data
// model's rules, with a Timestamp no later than the clock's persisted
// high-water mark; every index of a table holds exactly the entries of
// its entities (a missing entry, an extra one, one of an entity whose
// value differs, are reported, and the index is named in the table's
// RepairIndexes, for Table.RebuildIndex; an index being built is checked
// up to the entity its build reached); the metadata decodes; no other key
// exists; the change feed's records decode, and each entity a change
// names is in its table at the change's time or among the feed's images,
// each of which has its marker. Problems
// are reported, not returned as errors: the error is for failing to read.
func (a *Account) Verify(ctx context.Context) (*VerifyReport, error) {
	if err := a.check(ctx); err != nil {
		return nil, err
	}
	snap, err := a.eng.NewSnapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	it, err := snap.NewIter(nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	rep := &VerifyReport{}
	var more int
	byID := map[uint64]int{} // table ID → index in rep.Tables
	tableMore := map[int]int{}
	idx := map[int]*indexCheck{} // of the tables with indexes, by index in rep.Tables
	var nextID uint64
	var clockMark int64 = -1
	var maxTicks int64
	var maxTicksAt string
	lastTable, lastPK := -1, ""
	images := imageCheck{}
	for ok := it.First(); ok; ok = it.Next() {
		if rep.Keys%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rep.Keys++
		k, v := it.Key(), it.Value()
		switch k[0] {
		case keyenc.PrefixCatalog:
			lower := string(k[1:])
			rec, err := decodeTableRecord(v)
			if err != nil {
				addProblem(&rep.Problems, &more, "catalog record %q does not decode: %v", lower, err)
				continue
			}
			tr := TableReport{Name: rec.Name}
			if strings.ToLower(rec.Name) != lower {
				addProblem(&tr.Problems, new(int), "filed under %q, not its lower-cased name", lower)
			}
			if err := ValidateTableName(rec.Name); err != nil {
				addProblem(&tr.Problems, new(int), "the name is not valid: %v", err)
			}
			if other, dup := byID[rec.ID]; dup {
				addProblem(&tr.Problems, new(int), "table ID %d is also %s's", rec.ID, rep.Tables[other].Name)
			}
			byID[rec.ID] = len(rep.Tables)
			rep.Tables = append(rep.Tables, tr)
			if len(rec.Indexes) > 0 {
				idx[len(rep.Tables)-1] = newIndexCheck(rec)
			}
		case keyenc.PrefixEntity:
			if len(k) < keyenc.TablePrefixLen {
				addProblem(&rep.Problems, &more, "entity key %q is too short", k)
				continue
			}
			id := binary.BigEndian.Uint64(k[1:keyenc.TablePrefixLen])
			ti, known := byID[id]
			pk, rk, kerr := keyenc.DecodeEntityKey(k)
			if !known {
				addProblem(&rep.Problems, &more, "entity key %q belongs to table ID %d, which the catalog lacks", k, id)
				continue
			}
			tr := &rep.Tables[ti]
			m := tableMore[ti]
			if kerr != nil {
				addProblem(&tr.Problems, &m, "entity key %q does not decode: %v", k, kerr)
				tableMore[ti] = m
				continue
			}
			tr.Entities++
			if ti != lastTable || pk != lastPK || tr.Partitions == 0 {
				tr.Partitions++
				lastTable, lastPK = ti, pk
			}
			ticks, props, err := decodeRecord(v, nil)
			if err != nil {
				addProblem(&tr.Problems, &m, "entity (%q, %q): the record does not decode: %v", pk, rk, err)
			} else {
				e := Entity{PartitionKey: pk, RowKey: rk, Properties: props}
				if err := validateEntity(&e); err != nil {
					addProblem(&tr.Problems, &m, "entity (%q, %q) breaks a rule: %v", pk, rk, err)
				}
				if ticks > maxTicks {
					maxTicks, maxTicksAt = ticks, fmt.Sprintf("entity (%q, %q) of %s", pk, rk, tr.Name)
				}
				if ic := idx[ti]; ic != nil {
					ic.entity(k, v)
				}
			}
			tableMore[ti] = m
		case keyenc.PrefixMeta:
			t, ok := decodeTicks(v)
			if string(k) == string(metaClock) || string(k) == string(metaSweeper) {
				t, _, ok = decodeMark(v)
			}
			switch {
			case string(k) == string(metaServiceProps): // an opaque blob
				if len(v) == 0 || len(v) > MaxServiceProperties {
					addProblem(&rep.Problems, &more, "the service properties are %d bytes: not 1 to %d", len(v), MaxServiceProperties)
				}
			case !ok:
				addProblem(&rep.Problems, &more, "metadata %q does not decode", k[1:])
			case string(k) == string(metaClock):
				clockMark = t
			case string(k) == string(metaNextID):
				nextID = uint64(t)
			case string(k) == string(metaFeedRev), string(k) == string(metaSweeper):
			case string(k) == string(metaFormat):
				// A read-only account reads an older store as it is,
				// without raising its format (see checkFormat).
				if _, err := planFormat(v, true); t != formatVersion && (!a.readOnly || err != nil) {
					addProblem(&rep.Problems, &more, "the store's format version is %d; this localtable reads version %d", t, formatVersion)
				}
			default:
				addProblem(&rep.Problems, &more, "unknown metadata %q", k[1:])
			}
		case keyenc.PrefixIndex:
			if len(k) < keyenc.IndexPrefixLen {
				addProblem(&rep.Problems, &more, "index key %q is too short", k)
				continue
			}
			ti, known := byID[binary.BigEndian.Uint64(k[1:keyenc.TablePrefixLen])]
			if !known || idx[ti] == nil {
				addProblem(&rep.Problems, &more, "index entry %q belongs to no index of a table of the catalog", k)
				continue
			}
			m := tableMore[ti]
			idx[ti].entry(k, v, &rep.Tables[ti].Problems, &m)
			tableMore[ti] = m
		case keyenc.PrefixFeed:
			if _, err := decodeFeedRecord(k, v, 0, func(*Change) bool { return true }); err != nil {
				addProblem(&rep.Problems, &more, "feed record %q does not decode: %v", k, err)
			}
		case keyenc.PrefixFeedImage:
			images.key(k, v, &rep.Problems, &more)
		default:
			addProblem(&rep.Problems, &more, "unknown key %q", k)
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	images.unmarked(&rep.Problems, &more)
	if err := verifyFeedRefs(ctx, snap, &rep.Problems, &more); err != nil {
		return nil, err
	}
	for ti, ic := range idx {
		m := tableMore[ti]
		ic.missing(&rep.Tables[ti].Problems, &m)
		tableMore[ti] = m
		tr := &rep.Tables[ti]
		for _, x := range ic.rec.Indexes {
			if ic.bad[x.ID] {
				tr.RepairIndexes = append(tr.RepairIndexes, x.Name)
				tr.Problems = append(tr.Problems, fmt.Sprintf("index %s is wrong: Table.RebuildIndex, or localtable index repair %s %s, rebuilds it from the table", x.Name, tr.Name, x.Name))
			}
		}
	}
	for id, ti := range byID {
		if nextID != 0 && id >= nextID {
			addProblem(&rep.Tables[ti].Problems, new(int), "table ID %d is not below the next ID to assign, %d", id, nextID)
		}
	}
	if len(byID) > 0 && nextID == 0 {
		addProblem(&rep.Problems, &more, "the next table ID is not recorded")
	}
	if maxTicks > 0 && maxTicks > clockMark {
		addProblem(&rep.Problems, &more, "%s has a Timestamp after the clock's persisted mark", maxTicksAt)
	}
	for ti, m := range tableMore {
		if m > 0 {
			rep.Tables[ti].Problems = append(rep.Tables[ti].Problems, fmt.Sprintf("and %d more problems", m))
		}
	}
	if more > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("and %d more problems", more))
	}
	return rep, nil
}

// indexCheck checks the indexes of one table: the entries its entities
// call for, gathered as Verify reads them (entities sort before index
// entries), against the entries stored.
type indexCheck struct {
	rec      tableRecord
	want     map[string]wantEntry // entries expected, by key
	entities map[string]bool      // S(pk) S(rk) of the table's entities
	bad      map[uint32]bool      // IDs of the indexes found wrong
	seed     maphash.Seed         // of the hashes of values (valueSum)
	scratch  []byte
}

func newIndexCheck(rec tableRecord) *indexCheck {
	return &indexCheck{rec: rec, want: map[string]wantEntry{}, entities: map[string]bool{}, bad: map[uint32]bool{}, seed: maphash.MakeSeed()}
}

// wantEntry is an index entry Verify expects: a hash of its value (the
// record a covering index's entry holds: see coveringValue; 0 for an
// empty value), and whether it was seen.
type wantEntry struct {
	sum  uint64
	seen bool
}

// valueSum returns the hash of an index entry's value that wantEntry
// keeps: 0 for an empty value.
func (c *indexCheck) valueSum(v []byte) uint64 {
	if len(v) == 0 {
		return 0
	}
	return maphash.Bytes(c.seed, v) | 1
}

// entity adds the entries the entity of key k and record v calls for.
func (c *indexCheck) entity(k, v []byte) {
	ek := k[keyenc.TablePrefixLen:]
	c.entities[string(ek)] = true
	var buf [maxIndexProperties]Value
	for i := range c.rec.Indexes {
		x := &c.rec.Indexes[i]
		if !x.Ready && (x.Cursor == nil || bytes.Compare(ek, x.Cursor) > 0) {
			continue // not built yet: its entry may or may not be there
		}
		vals, ok, err := indexValues(buf[:0], x, v)
		if err != nil || !ok {
			continue
		}
		sum := uint64(0)
		if x.Covering {
			c.scratch = coveringValue(c.scratch[:0], k, v)
			sum = c.valueSum(c.scratch)
		}
		c.want[string(appendIndexEntry(nil, c.rec.ID, x, k, vals))] = wantEntry{sum: sum}
	}
}

// entry checks a stored index entry.
func (c *indexCheck) entry(k, v []byte, problems *[]string, more *int) {
	id := binary.BigEndian.Uint32(k[keyenc.TablePrefixLen:keyenc.IndexPrefixLen])
	x := findIndexByID(c.rec.Indexes, id)
	if x == nil {
		addProblem(problems, more, "index entry %q belongs to index ID %d, which the table does not declare", k, id)
		return
	}
	if len(v) != 0 && !x.Covering {
		addProblem(problems, more, "index %s: entry %q has a value", x.Name, k)
		c.bad[id] = true
	}
	if w, ok := c.want[string(k)]; ok && !w.seen {
		c.want[string(k)] = wantEntry{sum: w.sum, seen: true}
		if x.Covering && c.valueSum(v) != w.sum {
			// The record it holds is not the entity's (or, an empty value,
			// it holds none).
			ek, _ := indexEntityKey(k, len(x.Props))
			pk, rk, _ := keyenc.DecodePair(ek)
			addProblem(problems, more, "index %s: entry %q does not hold the record of entity (%q, %q)", x.Name, k, pk, rk)
			c.bad[id] = true
		}
		return
	}
	ek, err := indexEntityKey(k, len(x.Props))
	if err != nil {
		addProblem(problems, more, "index %s: entry %q does not decode: %v", x.Name, k, err)
		c.bad[id] = true
		return
	}
	pk, rk, err := keyenc.DecodePair(ek)
	if !x.Ready && (x.Cursor == nil || bytes.Compare(ek, x.Cursor) > 0) && err == nil && c.entities[string(ek)] {
		return // not built that far: the build writes it again from the entity
	}
	c.bad[id] = true
	switch {
	case err != nil:
		addProblem(problems, more, "index %s: entry %q does not decode: %v", x.Name, k, err)
	case c.entities[string(ek)]:
		addProblem(problems, more, "index %s: stale entry %q for entity (%q, %q), whose values differ", x.Name, k, pk, rk)
	default:
		addProblem(problems, more, "index %s: extra entry %q for entity (%q, %q), which does not exist", x.Name, k, pk, rk)
	}
}

// missing reports the entries expected and not seen.
func (c *indexCheck) missing(problems *[]string, more *int) {
	var keys []string
	for k, w := range c.want {
		if !w.seen {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		id := binary.BigEndian.Uint32([]byte(k[keyenc.TablePrefixLen:keyenc.IndexPrefixLen]))
		x := findIndexByID(c.rec.Indexes, id)
		c.bad[id] = true
		ek, _ := indexEntityKey([]byte(k), len(x.Props))
		pk, rk, _ := keyenc.DecodePair(ek)
		addProblem(problems, more, "index %s: missing entry %q for entity (%q, %q)", x.Name, k, pk, rk)
	}
}
