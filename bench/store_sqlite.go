package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	lpebble "github.com/localtable/localtable/storage/pebble"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, "sqlite"
)

// sqliteStore keeps entities in SQLite (modernc.org/sqlite, pure Go) as
// rows of one table keyed by (table, PartitionKey, RowKey), one typed
// column per property. Columns rather than a JSON document, because that is
// what a user who knows the entity's shape writes, and it is SQLite at its
// fastest: the residual filters are plain typed comparisons (Age > 50,
// Score < 1.0) on columns, with no json_extract per row. WITHOUT ROWID
// keeps the rows clustered in key order, as localtable's are, so a range
// or partition is one contiguous B-tree scan. The journal is the WAL with
// synchronous=FULL: each commit is fsynced, as a pebble commit is. etag is
// a version number bumped by each write.
type sqliteStore struct {
	path string
	db   *sql.DB
	stmt struct{ get, ins, rng, part, full, ver, upd *sql.Stmt }
	tmpl row
}

const sqliteSchema = `CREATE TABLE entities (
	tbl TEXT NOT NULL, pk TEXT NOT NULL, rk TEXT NOT NULL,
	ts INTEGER NOT NULL, etag INTEGER NOT NULL,
	Name TEXT, Email TEXT, Notes TEXT, Age INTEGER, Visits INTEGER, Score REAL,
	Active INTEGER, Joined INTEGER, ID BLOB, Payload BLOB,
	PRIMARY KEY (tbl, pk, rk)
) WITHOUT ROWID`

const sqliteCols = `ts, etag, pk, rk, Name, Email, Notes, Age, Visits, Score, Active, Joined, ID, Payload`

// openSQLite opens the database file at path; sync is the synchronous
// pragma (FULL, or OFF for loading). The page cache is the size of
// localtable's pebble block cache (pebble.DefaultCacheSize).
func openSQLite(path, sync string) (*sql.DB, error) {
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(" + sync + ")" +
		"&_pragma=busy_timeout(10000)&_pragma=cache_size(-" + strconv.Itoa(lpebble.DefaultCacheSize>>10) + ")&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// newSQLite creates the database in dir and loads data set s in the given
// order, a thousand rows per transaction without fsync; then it reopens
// it with fsync on.
func newSQLite(dir string, s shape, order []int) (*sqliteStore, error) {
	st := &sqliteStore{path: filepath.Join(dir, "bench.db"), tmpl: templateRow("", "")}
	db, err := openSQLite(st.path, "OFF")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := db.Exec(sqliteSchema); err != nil {
		return nil, err
	}
	for start := 0; start < len(order); start += 1000 {
		tx, err := db.Begin()
		if err != nil {
			return nil, err
		}
		ins, err := tx.Prepare(sqliteInsert)
		if err != nil {
			tx.Rollback()
			return nil, err
		}
		for _, i := range order[start:min(start+1000, len(order))] {
			r := s.makeRow(i)
			if _, err := ins.Exec(insertArgs(&r)...); err != nil {
				tx.Rollback()
				return nil, err
			}
		}
		if err := tx.Commit(); err != nil {
			return nil, err
		}
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	return st, st.reopen(pk(0), rk(0))
}

const sqliteInsert = `INSERT INTO entities (tbl, ` + sqliteCols + `) VALUES ('bench', ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func insertArgs(r *row) []any {
	return []any{time.Now().UnixNano(), r.PartitionKey, r.RowKey, r.Name, r.Email, r.Notes, r.Age, r.Visits, r.Score, r.Active, r.Joined.UnixNano(), r.ID[:], r.Payload}
}

func (s *sqliteStore) reopen(pk, rk string) error {
	if s.db != nil {
		if err := s.db.Close(); err != nil {
			return err
		}
	}
	db, err := openSQLite(s.path, "FULL")
	if err != nil {
		return err
	}
	s.db = db
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.stmt.get, `SELECT ` + sqliteCols + ` FROM entities WHERE tbl = 'bench' AND pk = ? AND rk = ?`},
		{&s.stmt.ins, sqliteInsert},
		{&s.stmt.rng, `SELECT ` + sqliteCols + ` FROM entities WHERE tbl = 'bench' AND pk = ? AND rk >= ? AND rk < ? ORDER BY pk, rk`},
		{&s.stmt.part, `SELECT ` + sqliteCols + ` FROM entities WHERE tbl = 'bench' AND pk = ? AND Age > 50 ORDER BY pk, rk`},
		{&s.stmt.full, `SELECT ` + sqliteCols + ` FROM entities WHERE tbl = 'bench' AND Score < 1.0 ORDER BY pk, rk`},
		{&s.stmt.ver, `SELECT etag, Visits FROM entities WHERE tbl = 'bench' AND pk = ? AND rk = ?`},
		{&s.stmt.upd, `UPDATE entities SET Visits = ?, etag = etag + 1, ts = ? WHERE tbl = 'bench' AND pk = ? AND rk = ? AND etag = ?`},
	} {
		if *p.dst, err = db.Prepare(p.sql); err != nil {
			return err
		}
	}
	return s.get(pk, rk)
}

func (s *sqliteStore) name() string  { return "SQLite" }
func (s *sqliteStore) filters() bool { return true }

// scanRow reads one result row into r.
func scanRow(rows interface{ Scan(...any) error }, r *row) error {
	var ts, etag, joined int64
	var id []byte
	if err := rows.Scan(&ts, &etag, &r.PartitionKey, &r.RowKey, &r.Name, &r.Email, &r.Notes, &r.Age, &r.Visits, &r.Score, &r.Active, &joined, &id, &r.Payload); err != nil {
		return err
	}
	r.Joined = time.Unix(0, joined).UTC()
	if len(id) != 16 {
		return fmt.Errorf("ID of %d bytes", len(id))
	}
	r.ID = guid(id)
	return nil
}

func (s *sqliteStore) get(pk, rk string) error {
	var r row
	return scanRow(s.stmt.get.QueryRow(pk, rk), &r)
}

func (s *sqliteStore) insert(pk, rk string) error {
	r := s.tmpl
	r.PartitionKey, r.RowKey = pk, rk
	_, err := s.stmt.ins.Exec(insertArgs(&r)...)
	return err
}

func (s *sqliteStore) tx100(pk string, rks []string) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	ins := tx.Stmt(s.stmt.ins)
	r := s.tmpl
	r.PartitionKey = pk
	for _, rk := range rks {
		r.RowKey = rk
		if _, err := ins.Exec(insertArgs(&r)...); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

func (s *sqliteStore) remove(pk string, rks []string) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	for _, rk := range rks {
		if _, err := tx.Exec(`DELETE FROM entities WHERE tbl = 'bench' AND pk = ? AND rk = ?`, pk, rk); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

func (s *sqliteStore) count(q *sql.Stmt, args ...any) (int, error) {
	rows, err := q.Query(args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	var r row
	for rows.Next() {
		if err := scanRow(rows, &r); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

func (s *sqliteStore) rangeQuery(pk, lo, hi string) (int, error) {
	return s.count(s.stmt.rng, pk, lo, hi)
}

func (s *sqliteStore) partitionFilter(pk string) (int, error) { return s.count(s.stmt.part, pk) }

func (s *sqliteStore) fullFilter() (int, error) { return s.count(s.stmt.full) }

func (s *sqliteStore) update(pk, rk string) (int, error) {
	for conflicts := 0; ; conflicts++ {
		var etag, visits int64
		if err := s.stmt.ver.QueryRow(pk, rk).Scan(&etag, &visits); err != nil {
			return conflicts, err
		}
		// The write takes the write lock first (BEGIN IMMEDIATE, which
		// waits as busy_timeout says): an autocommit UPDATE would start
		// as a reader, and in WAL mode a reader whose snapshot another
		// writer has overtaken fails at once with SQLITE_BUSY.
		tx, err := s.db.Begin()
		if err != nil {
			return conflicts, err
		}
		res, err := tx.Stmt(s.stmt.upd).Exec(visits+1, time.Now().UnixNano(), pk, rk, etag)
		if err != nil {
			tx.Rollback()
			return conflicts, err
		}
		if err := tx.Commit(); err != nil {
			return conflicts, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return conflicts, err
		}
	}
}

func (s *sqliteStore) close() error { return s.db.Close() }
