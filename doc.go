// Package localtable is the Azure Table Storage data model as an embeddable
// Go library: an in-process table store over a pluggable ordered key-value
// engine (in memory, pebble on disk, or etcd, which several processes on
// several machines share: see Options.Engine).
//
// There are only a few types in localtable: an Account holds Tables, a
// Table holds Entities in (PartitionKey, RowKey) order, and an Entity's
// properties are typed Values; Open opens an Account, CreateTable makes a
// Table, and Insert, Get and Query write and read its Entities.
//
//	acct, err := localtable.Open(nil) // nil Options: in memory
//	if err != nil {
//		return err
//	}
//	defer acct.Close()
//	tbl, err := acct.CreateTable(ctx, "People")
//	if err != nil {
//		return err
//	}
//	_, err = tbl.Insert(ctx, localtable.Entity{
//		PartitionKey: "Smith",
//		RowKey:       "John",
//		Properties:   localtable.Properties{"Age": localtable.Int32Value(42)},
//	})
//	if err != nil {
//		return err
//	}
//	e, err := tbl.Get(ctx, "Smith", "John", nil)
//	if err != nil {
//		return err
//	}
//	fmt.Println(e.Properties["Age"].Int32()) // 42
//
// Every rule of the service's data model is enforced, and every violation
// is an *Error carrying the service's error code, so code tested against
// localtable behaves as it will against Azure.
//
// # Accounts and tables
//
// Open takes Options: the Engine that stores the data (nil for a new
// in-memory one; package storage/pebble's for data on disk) and the Clock
// that stamps Timestamps. The Account owns its engine until Close, which
// waits for the calls in flight; calls after it fail with ErrClosed.
// Accounts and Tables are safe for concurrent use.
//
// CreateTable, CreateTableIfNotExists, GetTable and DeleteTable manage
// tables; ListTables reads one page of the listing and Tables iterates over
// all of it. Table names follow the service's rules and are
// case-insensitive. Account.Table returns a handle without any I/O.
//
// # Entities and values
//
// An Entity is its keys, PartitionKey and RowKey; its Timestamp and ETag,
// which the account sets on every write; and its Properties, a map from
// names to Values. A Value is one of the eight Edm types, made by the
// constructor of its Kind (StringValue, Int32Value, Int64Value,
// DoubleValue, BoolValue, DateTimeValue, GUIDValue, BinaryValue) and read
// by its accessor (String, Int32, Int64, Double, Bool, Time, GUID, Binary;
// Any for any kind). The accessors panic for a value of another kind,
// except String, which gives any value's text. Marshal and Unmarshal map
// structs to entities; GetAs and QueryAs read entities as structs.
//
// # Writes
//
// Insert adds an entity and fails with ErrEntityExists if its keys are
// taken. Update replaces or merges (UpdateOptions.Mode) an existing entity,
// Upsert inserts or replaces or merges, and Delete removes one. Insert,
// Update and Upsert return the entity's new ETag. Setting
// UpdateOptions.IfMatch (or DeleteOptions.IfMatch) to the ETag read makes
// the write conditional: it fails with ErrConditionNotMet when another
// write came first, which is optimistic concurrency (see Table.Update's
// examples). Transact applies up to 100 Actions on one partition, all or
// none; a failing action is a *TransactionError naming its index.
//
// # Queries
//
// Query returns one page of the entities QueryOptions select, with a
// Continuation that resumes after it; QueryAll iterates over every page,
// Count counts and Partitions lists the partitions. A query's Filter is a
// Predicate: package filter parses the service's $filter syntax, builds
// filters from typed Go values, and plans them into key ranges, so that a
// query reads only the partitions and rows the filter can match. Leave
// the Filter unset to select every entity (a nil *filter.Filter is
// refused). A page holds at most PageSize entities (1,000) and reads at
// most ScanLimit (DefaultScanLimit, 50,000), so a sparse filter may give a
// short or empty page that still continues; QueryAll, QueryAs and Count
// follow continuations.
//
// # Errors
//
// The errors the service would also answer are *Error values: Code is the
// service's ErrorCode, Message says what was wrong. Test them with
// errors.Is against the sentinels (ErrTableNotFound, ErrEntityExists,
// ErrConditionNotMet, ErrInvalidInput and the others), or read the code
// with ErrorCodeOf or errors.As. The library's own conditions (ErrClosed,
// ErrEngineInUse) are plain errors. HTTP statuses are package server's
// business (server.HTTPStatus).
//
// # Tests and tools
//
// Checkpoint and Restore save and return to an account's data, so that
// each test case starts from one fixture; Verify checks every key of the
// store. Package localtabletest runs localtable as the Azure Tables
// service for tests of code written against the Azure SDK, and package
// server serves it over HTTP to any SDK.
package localtable
