package localtabletest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
)

// Seed creates table if it does not exist and inserts entities into it,
// straight into the account: no request is logged and no fault applies.
// An entity may be:
//   - a localtable.Entity or *localtable.Entity;
//   - JSON in the service's entity format ([]byte, json.RawMessage or a
//     string), with "Name@odata.type" annotations for the types JSON
//     lacks (Edm.Int64, Edm.DateTime, Edm.Guid, Edm.Binary);
//   - a map[string]any or any json.Marshaler (aztables.EDMEntity): the
//     JSON aztables would send for it, read as the server reads it;
//   - a struct (or pointer to one), mapped by localtable.Marshal.
//
// A failure (a bad value, a duplicate key) fails the test, naming the
// entity.
func (s *Server) Seed(t testing.TB, table string, entities ...any) {
	t.Helper()
	ctx := context.Background()
	tbl, err := s.Account.CreateTableIfNotExists(ctx, table)
	if err != nil {
		t.Fatalf("localtabletest: Seed: %v", err)
	}
	for i, v := range entities {
		e, err := toEntity(v)
		if err == nil {
			_, err = tbl.Insert(ctx, e)
		}
		if err != nil {
			t.Fatalf("localtabletest: Seed %s: entity %d: %v", table, i, err)
		}
	}
}

// SeedJSONL seeds table from JSON Lines: one entity per line in the
// service's JSON entity format (see Seed); blank lines are skipped. The
// output of Dump reads back.
func (s *Server) SeedJSONL(t testing.TB, table string, r io.Reader) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 8<<20)
	var entities []any
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		e, err := entityjson.Decode(b, false)
		if err != nil {
			t.Fatalf("localtabletest: SeedJSONL %s: line %d: %v", table, line, err)
		}
		entities = append(entities, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("localtabletest: SeedJSONL %s: %v", table, err)
	}
	s.Seed(t, table, entities...)
}

// SeedFile seeds table from a JSON Lines file (see SeedJSONL), such as
// testdata/orders.jsonl.
func (s *Server) SeedFile(t testing.TB, table, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("localtabletest: SeedFile: %v", err)
	}
	defer f.Close()
	s.SeedJSONL(t, table, f)
}

// toEntity converts a value Seed accepts.
func toEntity(v any) (localtable.Entity, error) {
	switch x := v.(type) {
	case localtable.Entity:
		return x, nil
	case *localtable.Entity:
		return *x, nil
	case []byte:
		return entityjson.Decode(x, false)
	case json.RawMessage:
		return entityjson.Decode(x, false)
	case string:
		return entityjson.Decode([]byte(x), false)
	case json.Marshaler, map[string]any:
		b, err := json.Marshal(x)
		if err != nil {
			return localtable.Entity{}, err
		}
		return entityjson.Decode(b, false)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Struct {
		return localtable.Marshal(v)
	}
	return localtable.Entity{}, fmt.Errorf("localtabletest: cannot seed a %T", v)
}

// Entities returns every entity of table, in key order.
func (s *Server) Entities(t testing.TB, table string) []localtable.Entity {
	t.Helper()
	var out []localtable.Entity
	for e, err := range s.Account.Table(table).QueryAll(context.Background(), nil) {
		if err != nil {
			t.Fatalf("localtabletest: reading %s: %v", table, err)
		}
		out = append(out, e)
	}
	return out
}

// Dump returns table's entities as JSON Lines in key order, one entity
// per line with its properties sorted by name and typed by annotations,
// without Timestamps: a listing that reads well in a failure message,
// diffs line by line, and seeds a table again (SeedJSONL).
func (s *Server) Dump(t testing.TB, table string) string {
	t.Helper()
	return strings.Join(jsonLines(s.Entities(t, table)), "")
}

func jsonLines(es []localtable.Entity) []string {
	lines := make([]string, len(es))
	for i := range es {
		lines[i] = string(entityjson.Append(nil, &es[i], nil)) + "\n"
	}
	return lines
}

// AssertTable checks that table holds exactly the entities want (any
// value Seed accepts, in any order), comparing keys, property names,
// types and values, not Timestamps or ETags. On a mismatch it fails the
// test (and goes on) with a go-cmp diff (-want +got) of the two tables,
// each entity by its keys, each property as its Edm type and value:
//
//	  map[string]map[string]string{
//	  	`(p, 2)`: {
//	- 		"N": "Edm.Int64 2",
//	+ 		"N": "Edm.Int32 2",
//	  	},
//	- 	`(p, 3)`: {},
//	  }
func (s *Server) AssertTable(t testing.TB, table string, want ...any) {
	t.Helper()
	wantEs := make([]localtable.Entity, len(want))
	for i, v := range want {
		e, err := toEntity(v)
		if err != nil {
			t.Fatalf("localtabletest: AssertTable: want[%d]: %v", i, err)
		}
		wantEs[i] = e
	}
	if diff := cmp.Diff(contents(wantEs), contents(s.Entities(t, table))); diff != "" {
		t.Errorf("localtabletest: table %s differs (-want +got):\n%s", table, diff)
	}
}

// contents maps each entity's keys to its properties' types and values.
func contents(es []localtable.Entity) map[string]map[string]string {
	m := make(map[string]map[string]string, len(es))
	for _, e := range es {
		props := make(map[string]string, len(e.Properties))
		for name, v := range e.Properties {
			if v.IsNull() {
				continue
			}
			text := v.String()
			if v.Kind() == localtable.KindString {
				text = strconv.Quote(text)
			}
			props[name] = v.Kind().String() + " " + text
		}
		m["("+keyText(e.PartitionKey)+", "+keyText(e.RowKey)+")"] = props
	}
	return m
}

// keyText is a key as written in a diff: as it is, or quoted if it holds
// anything a reader could miss.
func keyText(k string) string {
	if k == "" || strings.ContainsAny(k, " ,()\"\\") || strconv.Quote(k) != `"`+k+`"` {
		return strconv.Quote(k)
	}
	return k
}

// Snapshot saves the account's data (tables, entities with their
// Timestamps and ETags, access policies), to return to with Restore. On
// the in-memory engine it costs O(1). It is released when the test ends.
func (s *Server) Snapshot(t testing.TB) *localtable.Checkpoint {
	t.Helper()
	cp, err := s.Account.Checkpoint(context.Background())
	if err != nil {
		t.Fatalf("localtabletest: Snapshot: %v", err)
	}
	t.Cleanup(func() { cp.Close() })
	return cp
}

// Restore returns the account's data to a Snapshot, for example at the
// start of each subtest, and forgets tables "being deleted"
// (WithDeleteTableDelay). Fault rules, latency, the request log, the
// service properties and the Clock stay as they are.
func (s *Server) Restore(t testing.TB, cp *localtable.Checkpoint) {
	t.Helper()
	if err := s.kit.Restore(context.Background(), s.Account, cp); err != nil {
		t.Fatalf("localtabletest: Restore: %v", err)
	}
}

// Reset empties the account, as Restore to a Snapshot of the new server.
func (s *Server) Reset(t testing.TB) {
	t.Helper()
	s.Restore(t, s.initial)
}
