// Package tableio reads and writes entities as files: JSONL, one entity a
// line in the Table service's JSON entity format (package entityjson's
// Append and Decode), and CSV with typed column
// headers. The command's import and export and the explorer's downloads
// use it.
//
// # JSONL
//
// Each line is one JSON object as the service reads and writes entities:
// PartitionKey, RowKey, and the properties, annotated with
// "Name@odata.type" where the JSON value does not name the type. Every Edm
// value round-trips exactly. Blank lines are skipped; Timestamp and odata.*
// members are ignored on reading.
//
// # CSV
//
// The first record is the header. A column is named "Name" (an Edm.String)
// or "Name@Edm.Type", such as "Age@Edm.Int32"; PartitionKey and RowKey
// columns are required. A property whose type differs between entities has
// one column per type ("N@Edm.Int32", "N@Edm.String"), and each entity
// fills the one of its type. Values are written as FormatValueText writes
// them (RFC 3339 DateTimes, base64 Binary, NaN and Infinity Doubles). An
// empty unquoted field is an absent property; an empty String is written
// quoted, "". Fields are quoted as RFC 4180 quotes them.
package tableio

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Format is a file format of entities.
type Format int

// The formats.
const (
	JSONL Format = iota
	CSV
)

// String returns the format's name, "jsonl" or "csv".
func (f Format) String() string {
	if f == CSV {
		return "csv"
	}
	return "jsonl"
}

// ParseFormat reads a format name: jsonl (or json, ndjson) or csv.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "jsonl", "json", "ndjson":
		return JSONL, nil
	case "csv":
		return CSV, nil
	}
	return 0, fmt.Errorf("format %q: want jsonl or csv", s)
}

// FormatOf returns the format a file name's extension names (.csv is CSV,
// anything else JSONL).
func FormatOf(path string) Format {
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return CSV
	}
	return JSONL
}

// RecordError is a record that could not be read as an entity. Reading
// goes on after it.
type RecordError struct {
	Line int   // the line the record starts on, from 1
	Err  error // what was wrong
}

// Error returns "line N: why".
func (e *RecordError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the cause.
func (e *RecordError) Unwrap() error { return e.Err }
