package localtable

import (
	"context"
	"slices"
	"strings"

	"github.com/localtable/localtable/internal/keyenc"
)

// Repairing an index.
//
// Verify compares every index with its table. An index it finds wrong (an
// entry missing, extra or stale: the store was damaged, or written to
// around localtable) is repaired by RebuildIndex: one commit deletes all
// its entries and declares it not ready, as it was when first declared on
// a table of entities, and the build (buildIndex) then indexes the table
// again in bounded steps, each one commit of the write pipeline, while
// writes go on and keep the index from the first commit on. The planner
// does not use the index from the first commit until the last.

// RebuildIndex rebuilds the index named name from the table's entities:
// it deletes every entry of the index and builds it again, as CreateIndex
// builds an index declared on a table of entities, returning once it is
// ready. It repairs an index that Verify finds wrong.
//
// The rebuild is online: it runs in steps of a bounded number of entities,
// each its own commit, and writes into the table go on between the steps
// and keep the index right. From its first commit to its last, the index
// is not ready and queries do not read it. If the rebuild stops (ctx is
// canceled, the process ends), the index stays declared and not ready,
// holding exactly the entries of the entities the rebuild reached and of
// those written since: CreateIndex with the same name and properties
// resumes it, and RebuildIndex starts it over. An index the table does not
// declare is ErrIndexNotFound.
func (t *Table) RebuildIndex(ctx context.Context, name string) error {
	a := t.a
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	id, err := t.restartIndex(ctx, name)
	if err != nil {
		return err
	}
	return t.buildIndex(ctx, id)
}

// restartIndex is RebuildIndex's first commit: it deletes the entries of
// index name and declares it not ready, its build not begun, and returns
// its ID.
func (t *Table) restartIndex(ctx context.Context, name string) (uint32, error) {
	a := t.a
	lower := strings.ToLower(t.name)
	var id uint32
	err := t.indexDDL(ctx, "rebuilding index "+name+" of table "+t.name, func(rs *readSet, lt *liveTable) (*metaPlan, error) {
		rec, def, ws, err := planRebuildIndex(t.name, lower, rs.vals[0], rs.found[0], name)
		if err != nil {
			return nil, err
		}
		id = def.ID
		return &metaPlan{writes: ws, finish: func(err error) {
			if err == nil {
				a.adopt(lower, rec)
			}
		}}, nil
	})
	return id, err
}

// planRebuildIndex decides the first commit of RebuildIndex of index idx
// of table name from its catalog record read: the record with the index
// not ready and its build not begun, its write, and the range deletion of
// the index's entries. An index the table does not declare is
// ErrIndexNotFound.
func planRebuildIndex(name, lower string, cur []byte, found bool, idx string) (*tableRecord, indexDef, []write, error) {
	key := keyenc.CatalogKey(lower)
	rec, err := decodeCatalogRecord(name, key, cur, found)
	if err != nil {
		return nil, indexDef{}, nil, err
	}
	i := findIndex(rec.Indexes, idx)
	if i < 0 {
		return nil, indexDef{}, nil, errNoIndex(name, idx)
	}
	rec.Indexes = slices.Clone(rec.Indexes)
	x := &rec.Indexes[i]
	x.Ready, x.Cursor = false, nil
	prefix := keyenc.AppendIndexPrefix(nil, rec.ID, x.ID)
	return &rec, *x, []write{
		{key: key, value: rec.append(nil)},
		{key: prefix, del: true, end: keyenc.PrefixEnd(prefix)},
	}, nil
}
