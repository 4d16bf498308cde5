package tests

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

func TestTransactAllActionTypes(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		for _, rk := range []string{"upd", "merge", "del"} {
			if _, err := tbl.Insert(ctx, tabletest.Ent("p", rk, "A", "old", "Keep", "k")); err != nil {
				t.Fatal(err)
			}
		}
		cur, _ := tbl.Get(ctx, "p", "upd", nil)
		tags, err := tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionInsert, Entity: tabletest.Ent("p", "new", "A", "ins")},
			{Type: localtable.ActionUpdateReplace, Entity: tabletest.Ent("p", "upd", "A", "rep"), IfMatch: cur.ETag},
			{Type: localtable.ActionUpdateMerge, Entity: tabletest.Ent("p", "merge", "A", "mer")},
			{Type: localtable.ActionUpsertReplace, Entity: tabletest.Ent("p", "ur", "A", "ur")},
			{Type: localtable.ActionUpsertMerge, Entity: tabletest.Ent("p", "um", "A", "um")},
			{Type: localtable.ActionDelete, Entity: tabletest.Ent("p", "del")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(tags) != 6 || tags[0] == "" || tags[5] != "" {
			t.Errorf("tags = %q", tags)
		}
		check := func(rk, a string, keep bool) {
			t.Helper()
			e, err := tbl.Get(ctx, "p", rk, nil)
			if err != nil {
				t.Fatalf("%s: %v", rk, err)
			}
			if e.Properties["A"].String() != a {
				t.Errorf("%s: A = %v, want %s", rk, e.Properties["A"], a)
			}
			if _, ok := e.Properties["Keep"]; ok != keep {
				t.Errorf("%s: Keep present = %v, want %v", rk, ok, keep)
			}
		}
		check("new", "ins", false)
		check("upd", "rep", false)
		check("merge", "mer", true)
		check("ur", "ur", false)
		check("um", "um", false)
		if _, err := tbl.Get(ctx, "p", "del", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Errorf("deleted entity: %v", err)
		}
	})
}

func TestTransactAllOrNothing(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		if _, err := tbl.Insert(ctx, tabletest.Ent("p", "exists", "V", 1)); err != nil {
			t.Fatal(err)
		}
		_, err := tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionInsert, Entity: tabletest.Ent("p", "a", "V", 1)},
			{Type: localtable.ActionUpsertMerge, Entity: tabletest.Ent("p", "b", "V", 1)},
			{Type: localtable.ActionInsert, Entity: tabletest.Ent("p", "exists", "V", 2)},
			{Type: localtable.ActionInsert, Entity: tabletest.Ent("p", "c", "V", 1)},
		})
		var te *localtable.TransactionError
		if !errors.As(err, &te) || te.Index != 2 || te.Err.Code != "EntityAlreadyExists" {
			t.Fatalf("err = %v, want action 2 EntityAlreadyExists", err)
		}
		if !errors.Is(err, localtable.ErrEntityExists) {
			t.Errorf("errors.Is(err, ErrEntityExists) = false")
		}
		for _, rk := range []string{"a", "b", "c"} {
			if _, err := tbl.Get(ctx, "p", rk, nil); !errors.Is(err, localtable.ErrEntityNotFound) {
				t.Errorf("entity %s after failed transaction: %v", rk, err)
			}
		}
		if e, _ := tbl.Get(ctx, "p", "exists", nil); e.Properties["V"].Int64() != 1 {
			t.Errorf("existing entity changed: %v", e.Properties)
		}
		// An invalid entity in the middle fails with its index, before any I/O.
		_, err = tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionInsert, Entity: tabletest.Ent("p", "a")},
			{Type: localtable.ActionInsert, Entity: tabletest.Ent("p", "b", "bad-name", 1)},
		})
		if !errors.As(err, &te) || te.Index != 1 || te.Err.Code != "PropertyNameInvalid" {
			t.Errorf("err = %v, want action 1 PropertyNameInvalid", err)
		}
		// A stale ETag.
		_, err = tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionUpsertReplace, Entity: tabletest.Ent("p", "a")},
			{Type: localtable.ActionDelete, Entity: tabletest.Ent("p", "exists"), IfMatch: `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`},
		})
		if !errors.As(err, &te) || te.Index != 1 || !errors.Is(err, localtable.ErrConditionNotMet) {
			t.Errorf("err = %v, want action 1 UpdateConditionNotSatisfied", err)
		}
		if _, err := tbl.Get(ctx, "p", "a", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Errorf("entity a after failed transaction: %v", err)
		}
	})
}

func TestTransactRules(t *testing.T) {
	many := func(n int) []localtable.Action {
		acts := make([]localtable.Action, n)
		for i := range acts {
			acts[i] = localtable.Action{Type: localtable.ActionUpsertReplace, Entity: tabletest.Ent("p", fmt.Sprint(i))}
		}
		return acts
	}
	bigs := func(n int) []localtable.Action { // n entities of ~512 KB of ASCII text
		acts := make([]localtable.Action, n)
		text := localtable.StringValue(strings.Repeat("x", 32000))
		for i := range acts {
			e := tabletest.Ent("p", fmt.Sprint(i))
			for j := 0; j < 16; j++ {
				e.Properties[fmt.Sprintf("S%02d", j)] = text
			}
			acts[i] = localtable.Action{Type: localtable.ActionUpsertReplace, Entity: e}
		}
		return acts
	}
	cases := []struct {
		name  string
		acts  []localtable.Action
		code  localtable.ErrorCode
		index int // -1: not a TransactionError
	}{
		{"100 actions", many(100), "", -1},
		{"101 actions", many(101), "InvalidInput", -1},
		{"empty", nil, "InvalidInput", -1},
		{"two partitions", []localtable.Action{{Entity: tabletest.Ent("p", "1")}, {Entity: tabletest.Ent("q", "2")}}, "CommandsInBatchActOnDifferentPartitions", 1},
		{"same row twice", []localtable.Action{{Entity: tabletest.Ent("p", "1")}, {Type: localtable.ActionDelete, Entity: tabletest.Ent("p", "1")}}, "InvalidDuplicateRow", 1},
		{"8 entities of 512 KB", bigs(8), "", -1},
		{"9 entities of 512 KB", bigs(9), "RequestBodyTooLarge", -1},
	}
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		for _, c := range cases {
			_, err := tbl.Transact(ctx, c.acts)
			if got := localtable.ErrorCodeOf(err); got != c.code {
				t.Errorf("%s: %v, want code %q", c.name, err, c.code)
				continue
			}
			var te *localtable.TransactionError
			if isTE := errors.As(err, &te); isTE != (c.index >= 0) || (isTE && te.Index != c.index) {
				t.Errorf("%s: %v, want TransactionError index %d", c.name, err, c.index)
			}
			// Either way, errors.As reaches the *Error with the code.
			var le *localtable.Error
			if c.code != "" && (!errors.As(err, &le) || le.Code != c.code) {
				t.Errorf("%s: errors.As(%v, *Error) = %v, want code %s", c.name, err, le, c.code)
			}
		}
		// Nothing of the failed ones was applied: 100 entities p/0..99 exist.
		n := 0
		for i := 0; i < 101; i++ {
			if _, err := tbl.Get(ctx, "p", fmt.Sprint(i), nil); err == nil {
				n++
			}
		}
		if n != 100 {
			t.Errorf("%d entities p/0..100 exist, want 100", n)
		}
		// A missing table fails with TableNotFound at index 0.
		_, err := a.Table("missing").Transact(ctx, []localtable.Action{{Entity: tabletest.Ent("p", "1")}})
		var te *localtable.TransactionError
		var le *localtable.Error
		if !errors.As(err, &te) || te.Index != 0 || !errors.Is(err, localtable.ErrTableNotFound) || !errors.As(err, &le) || le.Code != localtable.CodeTableNotFound {
			t.Errorf("transaction on missing table: %v", err)
		}
	})
}

// TestTransactIsolation checks that readers never see a transaction half
// applied: a transaction rewrites two entities with the same value, and
// readers must always see them equal.
func TestTransactIsolation(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		pair := func(v int) []localtable.Action {
			return []localtable.Action{
				// b first: a non-atomic apply would expose new b with old a.
				{Type: localtable.ActionUpsertReplace, Entity: tabletest.Ent("p", "b", "V", v)},
				{Type: localtable.ActionUpsertReplace, Entity: tabletest.Ent("p", "a", "V", v)},
			}
		}
		if _, err := tbl.Transact(ctx, pair(0)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= 300; i++ {
				if _, err := tbl.Transact(ctx, pair(i)); err != nil {
					t.Error(err)
					return
				}
			}
			close(done)
		}()
		for {
			select {
			case <-done:
				wg.Wait()
				return
			default:
			}
			// Reads of a and b are separate, so a can only be newer than b
			// if they are read out of order; read b first, then a.
			b, err1 := tbl.Get(ctx, "p", "b", nil)
			a, err2 := tbl.Get(ctx, "p", "a", nil)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if a.Properties["V"].Int64() < b.Properties["V"].Int64() {
				t.Fatalf("saw b=%v newer than a=%v", b.Properties["V"], a.Properties["V"])
			}
		}
	})
}
