package localtable

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/localtable/localtable/internal/keyenc"
)

// GetTable returns a handle to an existing table, named as it was created,
// or ErrTableNotFound.
func (a *Account) GetTable(ctx context.Context, name string) (*Table, error) {
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	defer a.exit()
	lt, err := a.strategy.current(ctx, name) // on a shared engine, another process may have deleted it
	if err != nil {
		return nil, err
	}
	return &Table{a: a, name: lt.name}, nil
}

// CreateTable creates a table. The name must match
// ^[A-Za-z][A-Za-z0-9]{2,62}$ and not be reserved; it is stored as given
// and looked up case-insensitively, so creating "Orders" when "orders"
// exists fails with ErrTableExists.
func (a *Account) CreateTable(ctx context.Context, name string) (*Table, error) {
	t, created, err := a.createTable(ctx, name)
	if err == nil && !created {
		err = newError(ErrTableExists, "table %q already exists (as %q)", name, t.name)
		t = nil
	}
	return t, err
}

// CreateTableIfNotExists creates a table unless one of that name (in any
// case) exists, and returns a handle to it either way.
func (a *Account) CreateTableIfNotExists(ctx context.Context, name string) (*Table, error) {
	t, _, err := a.createTable(ctx, name)
	return t, err
}

func (a *Account) createTable(ctx context.Context, name string) (*Table, bool, error) {
	if err := ValidateTableName(name); err != nil {
		return nil, false, err
	}
	if err := a.enter(ctx); err != nil {
		return nil, false, err
	}
	defer a.exit()
	lower := strings.ToLower(name)
	a.ddl.Lock()
	defer a.ddl.Unlock()
	var t *Table
	var created bool
	err := a.update(ctx, "creating table "+name, maxConflictRetries, [][]byte{keyenc.CatalogKey(lower), metaNextID}, func(rs *readSet) (*metaPlan, error) {
		existing, rec, ws, err := planCreateTable(name, lower, rs.vals[0], rs.found[0], rs.vals[1], rs.found[1], a.nextID)
		if err != nil {
			return nil, err
		}
		if existing != nil {
			t, created = &Table{a: a, name: a.adopt(lower, existing).name}, false
			return nil, nil
		}
		return &metaPlan{
			writes:  ws,
			changes: []change{{kind: changeTableCreated, tableID: rec.ID, table: name}},
			prepare: func() {
				if h := a.beforeCatalogCommit; h != nil {
					h("create", name)
				}
			},
			finish: func(err error) {
				if err != nil {
					return
				}
				// Published after the commit: until then, writes into the
				// table fail with ErrTableNotFound, as it does not exist yet.
				a.nextID = rec.ID + 1
				a.adopt(lower, rec)
				t, created = &Table{a: a, name: name}, true
			},
		}, nil
	})
	if err != nil {
		return nil, false, err
	}
	return t, created, nil
}

// DeleteTable deletes a table and all its entities. The entities are
// removed with one range deletion, not read one by one, so deleting a large
// table is cheap. (With the change feed on, on pebble, it first reads the
// feed kept, and keeps a copy of each of the table's entities that the
// feed names: see DefaultFeedChanges.) A missing table is ErrTableNotFound (service code
// ResourceNotFound). It waits for the writes in flight into the table;
// the calls on other tables go on meanwhile.
func (a *Account) DeleteTable(ctx context.Context, name string) error {
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	lower := strings.ToLower(name)
	a.ddl.Lock()
	defer a.ddl.Unlock()
	return a.update(ctx, "deleting table "+name, maxConflictRetries, [][]byte{keyenc.CatalogKey(lower)}, func(rs *readSet) (*metaPlan, error) {
		rec, ws, err := planDeleteTable(name, lower, rs.vals[0], rs.found[0])
		if !rs.found[0] {
			a.forget(lower, nil) // on a shared engine, another process deleted it
		}
		if err != nil {
			return nil, err
		}
		// This process's writes into the table finish first, and the next
		// ones find it dropped.
		lt := a.cat.Load().byName[lower]
		if lt != nil && lt.id != rec.ID {
			lt = nil
		}
		return &metaPlan{
			writes:  ws,
			changes: []change{{kind: changeTableDeleted, tableID: rec.ID, table: rec.Name}},
			prepare: func() {
				if lt != nil {
					lt.mu.Lock()
					lt.dropped.Store(true)
				}
				if h := a.beforeCatalogCommit; h != nil {
					h("delete", name)
				}
			},
			finish: func(err error) {
				if err == nil {
					if h := a.beforeCatalogCommit; h != nil {
						h("delete-committed", name)
					}
					a.forget(lower, nil)
				} else if lt != nil {
					lt.dropped.Store(false)
				}
				if lt != nil {
					lt.mu.Unlock()
				}
			},
		}, nil
	})
}

// errNoTable is DeleteTable's error for a table that does not exist.
func errNoTable(name string) error {
	return withCode(ErrTableNotFound, CodeResourceNotFound, "table %q does not exist", name)
}

// TableInfo describes a table in a listing.
type TableInfo struct {
	Name string // as created
}

// ListTablesOptions select and page a table listing. A nil
// *ListTablesOptions means the defaults: every table, in pages of 1,000.
type ListTablesOptions struct {
	// Filter selects tables; it sees each table as an entity with one
	// String property, TableName. nil lists every table. As in a query, a
	// nil pointer in it, or an Err, fails the listing (see Predicate).
	Filter Predicate
	// PageSize is the most tables one page holds (the service's $top): 1
	// to 1000, 0 meaning 1000.
	PageSize int
	// NextTableName resumes a listing where a previous page ended.
	NextTableName string
}

// TablesPage is one page of a table listing.
type TablesPage struct {
	// Tables are the page's tables, in name order.
	Tables []TableInfo
	// NextTableName, when not empty, is where the next page starts: pass it
	// in ListTablesOptions.NextTableName.
	NextTableName string
}

func pageSize(top int) (int, error) {
	switch {
	case top == 0:
		return MaxPageSize, nil
	case top < 0 || top > MaxPageSize:
		return 0, newError(ErrInvalidInput, "page size ($top) is %d; it must be 1 to %d", top, MaxPageSize)
	}
	return top, nil
}

// ListTables returns one page of tables, sorted by name (case-insensitive,
// as the names are unique), each named as created. nil opts means the
// defaults (see ListTablesOptions).
func (a *Account) ListTables(ctx context.Context, opts *ListTablesOptions) (TablesPage, error) {
	var o ListTablesOptions
	if opts != nil {
		o = *opts
	}
	return a.listTables(ctx, o)
}

// listTables is ListTables on options of its own.
func (a *Account) listTables(ctx context.Context, opts ListTablesOptions) (TablesPage, error) {
	var page TablesPage
	top, err := pageSize(opts.PageSize)
	if err != nil {
		return page, err
	}
	if err := checkPredicate(opts.Filter); err != nil {
		return page, err
	}
	if err := a.enter(ctx); err != nil {
		return page, err
	}
	defer a.exit()
	cat, err := a.strategy.tables(ctx) // on a shared engine, other processes create and delete tables
	if err != nil {
		return page, err
	}
	i := 0
	if opts.NextTableName != "" {
		i, _ = slices.BinarySearch(cat.sorted, strings.ToLower(opts.NextTableName))
	}
	probe := Entity{Properties: Properties{}}
	// The next page starts at the next table the filter selects, so that
	// the last page of a TableName range has no continuation, as the
	// service's has not, whatever tables follow the range.
	for ; i < len(cat.sorted); i++ {
		lt := cat.byName[cat.sorted[i]]
		if opts.Filter != nil {
			probe.Properties["TableName"] = StringValue(lt.name)
			if !opts.Filter.Match(&probe) {
				continue
			}
		}
		if len(page.Tables) == top {
			page.NextTableName = lt.name
			break
		}
		page.Tables = append(page.Tables, TableInfo{Name: lt.name})
	}
	return page, nil
}

// Tables returns an iterator over every table that opts select, walking all
// pages. It stops at the first error, which it yields. nil opts means the
// defaults (see ListTablesOptions); opts is read when Tables is called,
// not when the iterator runs.
func (a *Account) Tables(ctx context.Context, opts *ListTablesOptions) iter.Seq2[TableInfo, error] {
	var o ListTablesOptions
	if opts != nil {
		o = *opts
	}
	return func(yield func(TableInfo, error) bool) {
		opts := o // each run of the iterator starts afresh
		for {
			page, err := a.listTables(ctx, opts)
			if err != nil {
				yield(TableInfo{}, err)
				return
			}
			for _, t := range page.Tables {
				if !yield(t, nil) {
					return
				}
			}
			if page.NextTableName == "" {
				return
			}
			opts.NextTableName = page.NextTableName
		}
	}
}
