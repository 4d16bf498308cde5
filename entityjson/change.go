package entityjson

import (
	"strconv"

	"github.com/localtable/localtable"
)

// AppendChange appends c as one line of the change feed's stream (the
// server's GET /{account}/$changes, the explorer's view of a table's
// changes, 'localtable watch -o jsonl'), a JSON object and a newline:
//
//	{"revision":7,"commit":6,"last":true,"kind":"Insert","table":"Orders",
//	 "entity":{…}}
//
// kind is the ChangeKind's name; entity is written by appendEntity after
// an insert, replace or merge (nil means Append with System set), is the
// keys alone after a delete or an expiry, and is absent for a table's change and a
// Restored one (whose table is "").
func AppendChange(b []byte, c *localtable.Change, appendEntity func([]byte, *localtable.Entity) []byte) []byte {
	b = append(b, `{"revision":`...)
	b = strconv.AppendUint(b, uint64(c.Revision), 10)
	b = append(b, `,"commit":`...)
	b = strconv.AppendUint(b, uint64(c.Commit), 10)
	b = append(b, `,"last":`...)
	b = strconv.AppendBool(b, c.Last)
	b = append(b, `,"kind":`...)
	b = AppendString(b, c.Kind.String())
	b = append(b, `,"table":`...)
	b = AppendString(b, c.Table)
	switch {
	case !c.Kind.IsEntity():
	case c.Kind == localtable.ChangeDelete || c.Kind == localtable.ChangeExpired:
		b = append(b, `,"entity":{"PartitionKey":`...)
		b = AppendString(b, c.Entity.PartitionKey)
		b = append(b, `,"RowKey":`...)
		b = AppendString(b, c.Entity.RowKey)
		b = append(b, '}')
	default:
		b = append(b, `,"entity":`...)
		if appendEntity == nil {
			b = Append(b, &c.Entity, &Options{System: true})
		} else {
			b = appendEntity(b, &c.Entity)
		}
	}
	return append(b, "}\n"...)
}
