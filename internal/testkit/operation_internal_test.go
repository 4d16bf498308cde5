package testkit

import (
	"testing"

	"github.com/localtable/localtable/internal/reqclass"
)

// TestOperations checks the kit's operation names against package
// reqclass's table of operations: each constant names one operation, and
// no two operations share a name.
func TestOperations(t *testing.T) {
	names := map[Operation]reqclass.Op{}
	for _, o := range append(reqclass.Ops(), reqclass.Unknown) {
		n := operationOf(o)
		if p, dup := names[n]; dup {
			t.Errorf("%v and %v are both %s", p, o, n)
		}
		names[n] = o
	}
	for _, c := range []Operation{OpCreateTable, OpDeleteTable, OpListTables, OpGetACL, OpSetACL,
		OpGetServiceProperties, OpSetServiceProperties, OpGetServiceStats, OpInsert, OpUpdate, OpMerge,
		OpUpsertReplace, OpUpsertMerge, OpDelete, OpGet, OpQuery, OpBatch, OpPreflight, OpWatchChanges, OpOther} {
		o, ok := names[c]
		if !ok {
			t.Errorf("%s names no operation", c)
			continue
		}
		if c.IsWrite() != o.IsWrite() {
			t.Errorf("%s: IsWrite %v, the operation's %v", c, c.IsWrite(), o.IsWrite())
		}
	}
}
