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
	var lt *liveTable
	var err error
	if a.ve != nil {
		lt, err = a.fresh(ctx, name) // another process may have deleted it
	} else {
		lt, err = a.lookup(ctx, name)
	}
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
	if a.ve != nil {
		return a.createShared(ctx, name, lower)
	}
	cat := a.cat.Load()
	if lt := cat.byName[lower]; lt != nil {
		return &Table{a: a, name: lt.name}, false, nil
	}
	rec := &tableRecord{ID: a.nextID, Name: name}
	b := a.eng.NewBatch()
	defer b.Close()
	if err := b.Set(keyenc.CatalogKey(lower), rec.append(nil)); err != nil {
		return nil, false, err
	}
	if err := b.Set(metaNextID, encodeTicks(int64(rec.ID+1))); err != nil {
		return nil, false, err
	}
	if h := a.beforeCatalogCommit; h != nil {
		h("create", name)
	}
	if err := b.Commit(true); err != nil {
		return nil, false, err
	}
	a.nextID++
	// Published after the commit: until then, writes into the table fail
	// with ErrTableNotFound, as the table does not exist yet.
	a.cat.Store(cat.with(lower, newLiveTable(rec)))
	return &Table{a: a, name: name}, true, nil
}

// DeleteTable deletes a table and all its entities. The entities are
// removed with one range deletion, not read one by one, so deleting a large
// table is cheap. A missing table is ErrTableNotFound (service code
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
	if a.ve != nil {
		return a.deleteShared(ctx, name, lower)
	}
	cat := a.cat.Load()
	lt := cat.byName[lower]
	if lt == nil {
		return errNoTable(name)
	}
	prefix := keyenc.AppendTableID(nil, lt.id)
	b := a.eng.NewBatch()
	defer b.Close()
	if err := b.Delete(keyenc.CatalogKey(lower)); err != nil {
		return err
	}
	if err := b.DeleteRange(prefix, keyenc.PrefixEnd(prefix)); err != nil {
		return err
	}
	// Wait for the writes into the table, and refuse the next ones.
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.dropped.Store(true)
	if h := a.beforeCatalogCommit; h != nil {
		h("delete", name)
	}
	if err := b.Commit(true); err != nil {
		lt.dropped.Store(false)
		return err
	}
	if h := a.beforeCatalogCommit; h != nil {
		h("delete-committed", name)
	}
	a.cat.Store(cat.without(lower))
	return nil
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
	cat := a.cat.Load()
	if a.ve != nil { // other processes may have created and deleted tables
		var err error
		if cat, err = a.syncCatalog(ctx); err != nil {
			return page, err
		}
	}
	i := 0
	if opts.NextTableName != "" {
		i, _ = slices.BinarySearch(cat.sorted, strings.ToLower(opts.NextTableName))
	}
	probe := Entity{Properties: Properties{}}
	for ; i < len(cat.sorted); i++ {
		lt := cat.byName[cat.sorted[i]]
		if len(page.Tables) == top {
			page.NextTableName = lt.name
			break
		}
		if opts.Filter != nil {
			probe.Properties["TableName"] = StringValue(lt.name)
			if !opts.Filter.Match(&probe) {
				continue
			}
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
