package localtable

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/localtable/localtable/internal/keyenc"
)

// The plans are pure: each test gives a state as it would be read and
// checks the decision, with no engine.

func TestPlanEntities(t *testing.T) {
	stored := func(ticks int64, props Properties) []byte { return appendRecord(nil, ticks, props) }
	ent := func(rk string, props Properties) Entity {
		return Entity{PartitionKey: "p", RowKey: rk, Properties: props}
	}
	old := stored(100, Properties{"A": Int32Value(1), "B": StringValue("b")})
	tagOld := etagOf(100)
	type state struct {
		val   []byte
		found bool
	}
	absent, present := state{}, state{old, true}
	tests := []struct {
		name    string
		actions []Action
		state   []state
		want    error // the failing action's, nil for none
		index   int   // its index
		floor   int64
		stamp   bool
	}{
		{"insert new", []Action{{Type: ActionInsert, Entity: ent("a", nil)}}, []state{absent}, nil, 0, -1, true},
		{"insert existing", []Action{{Type: ActionInsert, Entity: ent("a", nil)}}, []state{present}, ErrEntityExists, 0, 100, false},
		{"update missing", []Action{{Type: ActionUpdateReplace, Entity: ent("a", nil)}}, []state{absent}, ErrEntityNotFound, 0, -1, false},
		{"update any", []Action{{Type: ActionUpdateReplace, Entity: ent("a", nil), IfMatch: ETagAny}}, []state{present}, nil, 0, 100, true},
		{"update matching", []Action{{Type: ActionUpdateMerge, Entity: ent("a", nil), IfMatch: tagOld}}, []state{present}, nil, 0, 100, true},
		{"update stale", []Action{{Type: ActionUpdateReplace, Entity: ent("a", nil), IfMatch: etagOf(99)}}, []state{present}, ErrConditionNotMet, 0, 100, false},
		{"delete stale", []Action{{Type: ActionDelete, Entity: ent("a", nil), IfMatch: etagOf(99)}}, []state{present}, ErrConditionNotMet, 0, 100, false},
		{"delete only: no stamp", []Action{{Type: ActionDelete, Entity: ent("a", nil)}}, []state{present}, nil, 0, 100, false},
		{"upsert either way", []Action{
			{Type: ActionUpsertReplace, Entity: ent("a", nil)},
			{Type: ActionUpsertMerge, Entity: ent("b", nil)},
		}, []state{absent, present}, nil, 0, 100, true},
		{"second action fails", []Action{
			{Type: ActionInsert, Entity: ent("a", nil)},
			{Type: ActionDelete, Entity: ent("b", nil)},
		}, []state{absent, absent}, ErrEntityNotFound, 1, -1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vals := make([][]byte, len(tc.state))
			found := make([]bool, len(tc.state))
			for i, s := range tc.state {
				vals[i], found[i] = s.val, s.found
			}
			p, i, err := planEntities("T", tc.actions, vals, found, nil, expiryCheck{})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("planEntities: %v", err)
				}
				if p.floor != tc.floor || p.stamp != tc.stamp {
					t.Errorf("floor, stamp = %d, %v; want %d, %v", p.floor, p.stamp, tc.floor, tc.stamp)
				}
				return
			}
			if !errors.Is(err, tc.want) || i != tc.index {
				t.Fatalf("planEntities = index %d, %v; want index %d, %v", i, err, tc.index, tc.want)
			}
		})
	}
}

func TestPlanEntitiesMerge(t *testing.T) {
	old := appendRecord(nil, 100, Properties{"A": Int32Value(1), "B": StringValue("b")})
	act := Action{Type: ActionUpdateMerge, Entity: Entity{PartitionKey: "p", RowKey: "a", Properties: Properties{
		"B": StringValue("new"), "C": BoolValue(true), "A": Value{}, // a null leaves A as it is
	}}}
	p, _, err := planEntities("T", []Action{act}, [][]byte{old}, []bool{true}, nil, expiryCheck{})
	if err != nil {
		t.Fatal(err)
	}
	st := p.steps[0]
	if !st.merge || st.ticks != 100 {
		t.Fatalf("step = %+v, want a merge of the entity at 100", st)
	}
	want := Properties{"A": Int32Value(1), "B": StringValue("new"), "C": BoolValue(true)}
	if len(st.merged) != len(want) {
		t.Fatalf("merged = %v, want %v", st.merged, want)
	}
	for k, v := range want {
		if !st.merged[k].Equal(v) {
			t.Errorf("merged[%s] = %v, want %v", k, st.merged[k], v)
		}
	}

	// The write set: the merge's record is encoded anew at the Timestamp,
	// and its ETag is the Timestamp's.
	keys := [][]byte{[]byte("k")}
	ws, tags := p.writeSet([]Action{act}, keys, nil, []int{0}, 200, nil, nil)
	if len(ws) != 1 || ws[0].del || string(ws[0].key) != "k" || tags[0] != etagOf(200) {
		t.Fatalf("writeSet = %+v, %v", ws, tags)
	}
	ticks, props, err := decodeSelected(ws[0].value, selection{})
	if err != nil || ticks != 200 || len(props) != 3 {
		t.Fatalf("written record = %d, %v, %v", ticks, props, err)
	}

	// A merge past the property limit fails at its index.
	big := Properties{}
	for i := range MaxCustomProperties {
		big[string(rune('a'+i%26))+string(rune('a'+i/26))] = Int32Value(int32(i))
	}
	act.Entity.Properties = big
	if _, i, err := planEntities("T", []Action{act}, [][]byte{old}, []bool{true}, nil, expiryCheck{}); !errors.Is(err, ErrTooManyProperties) || i != 0 {
		t.Fatalf("merge over the limit = %d, %v", i, err)
	}
}

func TestPlanEntitiesCorrupt(t *testing.T) {
	act := Action{Type: ActionUpdateReplace, Entity: Entity{PartitionKey: "p", RowKey: "a"}}
	if _, i, err := planEntities("T", []Action{act}, [][]byte{{9, 9}}, []bool{true}, nil, expiryCheck{}); err == nil || i != -1 {
		t.Fatalf("a corrupt record = index %d, %v; want index -1 and an error", i, err)
	}
}

func TestPlanEntitiesWriteSet(t *testing.T) {
	actions := []Action{
		{Type: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "a", Properties: Properties{"X": Int32Value(1)}}},
		{Type: ActionDelete, Entity: Entity{PartitionKey: "p", RowKey: "b"}},
		{Type: ActionUpsertReplace, Entity: Entity{PartitionKey: "p", RowKey: "c"}},
	}
	var recs []byte
	var ends []int
	for i := range actions {
		if actions[i].Type != ActionDelete {
			var err error
			if recs, _, err = appendValidRecord(recs, &actions[i].Entity); err != nil {
				t.Fatal(err)
			}
		}
		ends = append(ends, len(recs))
	}
	vals := [][]byte{nil, appendRecord(nil, 100, nil), nil}
	p, _, err := planEntities("T", actions, vals, []bool{false, true, false}, nil, expiryCheck{})
	if err != nil {
		t.Fatal(err)
	}
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	ws, tags := p.writeSet(actions, keys, recs, ends, 300, nil, nil)
	if len(ws) != 3 || ws[0].del || !ws[1].del || ws[2].del {
		t.Fatalf("writeSet = %+v", ws)
	}
	for _, i := range []int{0, 2} {
		if ticks, err := recordTicks(ws[i].value); err != nil || ticks != 300 {
			t.Errorf("record %d stamped %d, %v; want 300", i, ticks, err)
		}
	}
	if tags[0] != etagOf(300) || tags[1] != "" || tags[2] != etagOf(300) {
		t.Errorf("tags = %v", tags)
	}
}

func TestPlanCreateTable(t *testing.T) {
	rec := tableRecord{ID: 7, Name: "Orders"}
	existing, created, ws, err := planCreateTable("orders", "orders", rec.append(nil), true, nil, false, 3)
	if err != nil || created != nil || ws != nil || existing == nil || existing.Name != "Orders" {
		t.Fatalf("name taken: %v, %v, %v, %v", existing, created, ws, err)
	}
	// The next ID is the larger of the stored counter and the account's.
	for _, tc := range []struct {
		stored   []byte
		found    bool
		mine     uint64
		wantID   uint64
		wantNext int64
	}{
		{nil, false, 3, 3, 4},
		{encodeTicks(9), true, 3, 9, 10},
		{encodeTicks(2), true, 5, 5, 6},
	} {
		_, created, ws, err := planCreateTable("Items", "items", nil, false, tc.stored, tc.found, tc.mine)
		if err != nil || created == nil || created.ID != tc.wantID || created.Name != "Items" {
			t.Fatalf("%+v: created %v, %v", tc, created, err)
		}
		if len(ws) != 2 || string(ws[0].key) != string(keyenc.CatalogKey("items")) || string(ws[1].key) != string(metaNextID) {
			t.Fatalf("writes = %+v", ws)
		}
		if n, _ := decodeTicks(ws[1].value); n != tc.wantNext {
			t.Errorf("%+v: next ID written %d, want %d", tc, n, tc.wantNext)
		}
	}
	if _, _, _, err := planCreateTable("Items", "items", nil, false, []byte{1}, true, 1); err == nil {
		t.Error("a corrupt counter: no error")
	}
}

func TestPlanDeleteTable(t *testing.T) {
	if _, _, err := planDeleteTable("Gone", "gone", nil, false); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("missing table: %v", err)
	}
	rec := tableRecord{ID: 4, Name: "Orders"}
	got, ws, err := planDeleteTable("orders", "orders", rec.append(nil), true)
	if err != nil || got.ID != 4 {
		t.Fatalf("planDeleteTable = %v, %v", got, err)
	}
	prefix := keyenc.AppendTableID(nil, 4)
	if len(ws) != 2 || !ws[0].del || ws[0].end != nil || !ws[1].del || string(ws[1].key) != string(prefix) || string(ws[1].end) != string(keyenc.PrefixEnd(prefix)) {
		t.Fatalf("writes = %+v", ws)
	}
}

func TestPlanIndexes(t *testing.T) {
	if _, _, _, err := planCreateIndex("Gone", "gone", nil, false, "i", []string{"P"}, false, false); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("CreateIndex on a missing table: %v", err)
	}
	rec := tableRecord{ID: 4, Name: "Orders", Indexes: []indexDef{{ID: 2, Name: "old", Props: []string{"P"}, Ready: true}}}
	// Declared under the next ID, not ready.
	got, def, ws, err := planCreateIndex("Orders", "orders", rec.append(nil), true, "byQ", []string{"Q", "R"}, false, false)
	if err != nil || def.ID != 3 || def.Ready || len(got.Indexes) != 2 || len(ws) != 1 {
		t.Fatalf("planCreateIndex = %+v, %+v, %v, %v", got, def, ws, err)
	}
	stored := ws[0].value
	// The same again resumes: no writes; so does a ready index's (nothing
	// to build). Another definition of the name is ErrIndexExists.
	if _, def, ws, err := planCreateIndex("Orders", "orders", stored, true, "byQ", []string{"Q", "R"}, false, false); err != nil || ws != nil || def.ID != 3 {
		t.Fatalf("re-declaring a building index: %+v, %v, %v", def, ws, err)
	}
	if _, _, _, err := planCreateIndex("Orders", "orders", stored, true, "byQ", []string{"Q"}, false, false); !errors.Is(err, ErrIndexExists) {
		t.Fatalf("another definition: %v", err)
	}
	if _, def, ws, err := planCreateIndex("Orders", "orders", stored, true, "old", []string{"P"}, false, false); err != nil || ws != nil || !def.Ready || def.ID != 2 {
		t.Fatalf("re-declaring a ready index: %+v, %v, %v", def, ws, err)
	}
	if _, _, _, err := planCreateIndex("Orders", "orders", stored, true, "old", []string{"P", "Q"}, false, false); !errors.Is(err, ErrIndexExists) {
		t.Fatalf("another definition of a ready index: %v", err)
	}
	full := tableRecord{ID: 4, Name: "Orders"}
	for i := range maxIndexes {
		full.Indexes = append(full.Indexes, indexDef{ID: uint32(i + 1), Name: fmt.Sprint("i", i), Props: []string{fmt.Sprint("P", i)}})
	}
	if _, _, _, err := planCreateIndex("Orders", "orders", full.append(nil), true, "more", []string{"P"}, false, false); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("one index too many: %v", err)
	}

	// A build step: the entries of the entities found, the cursor after
	// the last key; the last step marks it ready.
	keys := [][]byte{keyenc.AppendEntityKey(nil, 4, "p", "a"), keyenc.AppendEntityKey(nil, 4, "p", "b"), keyenc.AppendEntityKey(nil, 4, "p", "c")}
	vals := [][]byte{appendRecord(nil, 1, Properties{"Q": Int32Value(1)}), nil, appendRecord(nil, 1, Properties{"R": Int32Value(1)})}
	found := []bool{true, false, true}
	got, ws, err = planBuildIndex("Orders", "orders", stored, true, 3, nil, keys, vals, found, false, false)
	if err != nil || len(ws) != 2 { // "a" has Q; "b" is gone; "c" lacks Q
		t.Fatalf("planBuildIndex = %v, %v", ws, err)
	}
	x := findIndexByID(got.Indexes, 3)
	if x.Ready || string(x.Cursor) != string(keys[2][keyenc.TablePrefixLen:]) {
		t.Fatalf("after a step: %+v", x)
	}
	want := appendIndexEntry(nil, 4, x, keys[0], []Value{Int32Value(1), {}})
	if string(ws[0].key) != string(want) || ws[0].del {
		t.Fatalf("entry %q, want %q", ws[0].key, want)
	}
	// A step listed after another cursor than the record's (a rebuild
	// restarted the build meanwhile, or another build stepped): no writes.
	if _, stale, err := planBuildIndex("Orders", "orders", ws[1].value, true, 3, nil, keys, vals, found, true, false); err != nil || stale != nil {
		t.Fatalf("a step listed after a cursor since moved: %v, %v; want no writes", stale, err)
	}
	got, _, err = planBuildIndex("Orders", "orders", ws[1].value, true, 3, x.Cursor, nil, nil, nil, true, false)
	if err != nil || !findIndexByID(got.Indexes, 3).Ready || findIndexByID(got.Indexes, 3).Cursor != nil {
		t.Fatalf("the last step: %+v, %v", got, err)
	}
	if _, _, err := planBuildIndex("Orders", "orders", stored, true, 9, nil, nil, nil, nil, true, false); !errors.Is(err, ErrIndexNotFound) {
		t.Fatalf("a dropped index's build: %v", err)
	}

	// Dropped: the record without it and its entries' range.
	got, ws, err = planDropIndex("Orders", "orders", stored, true, "byQ")
	prefix := keyenc.AppendIndexPrefix(nil, 4, 3)
	if err != nil || len(got.Indexes) != 1 || len(ws) != 2 || string(ws[1].key) != string(prefix) || string(ws[1].end) != string(keyenc.PrefixEnd(prefix)) {
		t.Fatalf("planDropIndex = %+v, %+v, %v", got, ws, err)
	}
	if _, _, err := planDropIndex("Orders", "orders", stored, true, "nope"); !errors.Is(err, ErrIndexNotFound) {
		t.Fatalf("dropping no index: %v", err)
	}
}

// TestPlanIndexNames: index names are case-insensitive for every lookup
// (create, drop, repair), keep their case as declared, and a second index
// on the same properties under another name is refused naming the first.
func TestPlanIndexNames(t *testing.T) {
	rec := tableRecord{ID: 4, Name: "Orders", Indexes: []indexDef{{ID: 2, Name: "ByScore", Props: []string{"Score"}, Ready: true}}}
	stored := rec.append(nil)
	// The same index in another case: declared already, its name as it was.
	got, def, ws, err := planCreateIndex("Orders", "orders", stored, true, "byscore", []string{"Score"}, false, false)
	if err != nil || ws != nil || def.ID != 2 || def.Name != "ByScore" || len(got.Indexes) != 1 {
		t.Fatalf("byscore on Score again: %+v, %v, %v", def, ws, err)
	}
	// Another definition of the name in another case: ErrIndexExists.
	if _, _, _, err := planCreateIndex("Orders", "orders", stored, true, "BYSCORE", []string{"Total"}, false, false); !errors.Is(err, ErrIndexExists) {
		t.Fatalf("BYSCORE on Total: %v; want ErrIndexExists", err)
	}
	// The same properties under another name: a DuplicateIndexError naming ByScore.
	_, _, _, err = planCreateIndex("Orders", "orders", stored, true, "other", []string{"Score"}, false, false)
	var de *DuplicateIndexError
	if !errors.As(err, &de) || de.Existing != "ByScore" || !errors.Is(err, ErrIndexExists) || !strings.Contains(err.Error(), `"ByScore"`) {
		t.Fatalf("other on Score: %v; want a DuplicateIndexError naming ByScore", err)
	}
	var le *Error
	if !errors.As(err, &le) || le.Code != CodeInvalidInput {
		t.Fatalf("other on Score: %v; want code InvalidInput", err)
	}
	// Properties in another order are another index.
	if _, _, ws, err := planCreateIndex("Orders", "orders", stored, true, "two", []string{"Total", "Score"}, false, false); err != nil || ws == nil {
		t.Fatalf("two on Total, Score: %v, %v", ws, err)
	}
	// Drop and repair find it in any case.
	if got, ws, err := planDropIndex("Orders", "orders", stored, true, "bySCORE"); err != nil || len(got.Indexes) != 0 || len(ws) != 2 {
		t.Fatalf("drop bySCORE: %+v, %v, %v", got, ws, err)
	}
	if _, def, _, err := planRebuildIndex("Orders", "orders", stored, true, "byscore"); err != nil || def.ID != 2 {
		t.Fatalf("repair byscore: %+v, %v", def, err)
	}
}

// TestPlanExpiryIndex: an index SetExpiry declared (ForExpiry) is dropped
// with its entries, in the policy's own commit, when the policy moves to
// another property or is cleared; an index of the table's own stays; and
// CreateIndex of the policy's index by its name makes it the table's own.
func TestPlanExpiryIndex(t *testing.T) {
	rec := tableRecord{ID: 4, Name: "Orders", Expiry: "A", Indexes: []indexDef{
		{ID: 1, Name: "expiry_A", Props: []string{"A"}, Ready: true, ForExpiry: true},
		{ID: 2, Name: "byB", Props: []string{"B"}, Ready: true},
	}}
	stored := rec.append(nil)
	back, err := decodeTableRecord(stored)
	if err != nil || !back.Indexes[0].ForExpiry || back.Indexes[1].ForExpiry {
		t.Fatalf("the record round trip: %+v, %v", back, err)
	}
	dropped := func(ws []write, id uint32) bool {
		prefix := keyenc.AppendIndexPrefix(nil, 4, id)
		return slices.ContainsFunc(ws, func(w write) bool {
			return w.del && string(w.key) == string(prefix) && string(w.end) == string(keyenc.PrefixEnd(prefix))
		})
	}
	// Moved to B (the table's own index): expiry_A goes, in the same writes as the record.
	got, ws, err := planSetExpiry("Orders", "orders", stored, true, "B")
	if err != nil || got.Expiry != "B" || len(got.Indexes) != 1 || got.Indexes[0].Name != "byB" || !dropped(ws, 1) || string(ws[0].key) != string(keyenc.CatalogKey("orders")) {
		t.Fatalf("SetExpiry B: %+v, %+v, %v", got, ws, err)
	}
	// Cleared: expiry_A goes too.
	got, ws, err = planSetExpiry("Orders", "orders", stored, true, "")
	if err != nil || got.Expiry != "" || len(got.Indexes) != 1 || !dropped(ws, 1) {
		t.Fatalf("ClearExpiry: %+v, %+v, %v", got, ws, err)
	}
	// Set to A again: nothing to write.
	if _, ws, err := planSetExpiry("Orders", "orders", stored, true, "A"); err != nil || ws != nil {
		t.Fatalf("SetExpiry A again: %+v, %v", ws, err)
	}
	// A policy on B cleared leaves byB, the table's own.
	onB := tableRecord{ID: 4, Name: "Orders", Expiry: "B", Indexes: []indexDef{{ID: 2, Name: "byB", Props: []string{"B"}, Ready: true}}}
	if got, ws, err := planSetExpiry("Orders", "orders", onB.append(nil), true, ""); err != nil || len(got.Indexes) != 1 || dropped(ws, 2) {
		t.Fatalf("ClearExpiry of a policy on the table's own index: %+v, %+v, %v", got, ws, err)
	}
	// CreateIndex of expiry_A (in any case) claims it: written without the mark.
	got, def, ws, err := planCreateIndex("Orders", "orders", stored, true, "Expiry_A", []string{"A"}, false, false)
	if err != nil || len(ws) != 1 || def.ForExpiry || got.Indexes[0].ForExpiry || got.Indexes[0].Name != "expiry_A" {
		t.Fatalf("claiming expiry_A: %+v, %+v, %v", def, ws, err)
	}
	if got, ws, err := planSetExpiry("Orders", "orders", ws[0].value, true, ""); err != nil || len(got.Indexes) != 2 || dropped(ws, 1) {
		t.Fatalf("ClearExpiry after the claim: %+v, %+v, %v", got, ws, err)
	}
}

func TestPlanSetPolicies(t *testing.T) {
	if _, _, err := planSetPolicies("Gone", "gone", nil, false, nil); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("missing table: %v", err)
	}
	rec := tableRecord{ID: 4, Name: "Orders", Policies: []AccessPolicy{{ID: "old"}}}
	got, ws, err := planSetPolicies("orders", "orders", rec.append(nil), true, []AccessPolicy{{ID: "new", Permission: "r"}})
	if err != nil || got.ID != 4 || got.Name != "Orders" || len(got.Policies) != 1 || got.Policies[0].ID != "new" {
		t.Fatalf("planSetPolicies = %+v, %v", got, err)
	}
	back, err := decodeTableRecord(ws[0].value)
	if err != nil || back.Policies[0].ID != "new" {
		t.Fatalf("written record = %+v, %v", back, err)
	}
}

func TestPlanClockMark(t *testing.T) {
	const nonce = 77
	for _, tc := range []struct {
		name      string
		stored    []byte
		found     bool
		mark      int64
		wantWrote int64
		wantPrev  int64
		noWrite   bool
	}{
		{"first", nil, false, 50, 50, 0, false},
		{"raise", encodeMark(40, 3), true, 50, 50, 40, false},
		{"stored covers it: one tick more", encodeMark(60, 3), true, 50, 61, 60, false},
		{"at the last tick", encodeTicks(maxTicks), true, 50, 0, maxTicks, true},
	} {
		wrote, prev, ws, err := planRaiseMark(tc.stored, tc.found, tc.mark, nonce)
		if err != nil || wrote != tc.wantWrote || prev != tc.wantPrev || (ws == nil) != tc.noWrite {
			t.Errorf("%s: planRaiseMark = %d, %d, %v, %v", tc.name, wrote, prev, ws, err)
			continue
		}
		if ws != nil {
			if v, n, ok := decodeMark(ws[0].value); !ok || v != wrote || n != nonce {
				t.Errorf("%s: wrote %d/%d, want %d/%d", tc.name, v, n, wrote, nonce)
			}
		}
	}
	if _, _, _, err := planRaiseMark([]byte{1, 2}, true, 5, nonce); err == nil {
		t.Error("a corrupt mark: no error")
	}
	// An account without a nonce stores the ticks alone, as it always has.
	if _, _, ws, _ := planRaiseMark(nil, false, 5, 0); len(ws[0].value) != 8 {
		t.Errorf("mark without nonce: %d bytes, want 8", len(ws[0].value))
	}

	// Lowering: only the account's own write, to the higher of its last
	// tick and what its write replaced (on a shared engine).
	for _, tc := range []struct {
		name   string
		stored []byte
		nonce  uint64
		want   int64
		moved  bool
	}{
		{"own write", encodeMark(90, nonce), nonce, 70, false},
		{"another's write", encodeMark(90, 5), nonce, 0, true},
		{"moved on", encodeMark(95, nonce), nonce, 0, true},
		{"alone: to the last tick", encodeMark(90, 0), 0, 60, false},
	} {
		ws, moved := planLowerMark(tc.stored, true, 90, 70, 60, tc.nonce)
		if moved != tc.moved {
			t.Errorf("%s: moved = %v", tc.name, moved)
			continue
		}
		if !moved {
			if v, _, _ := decodeMark(ws[0].value); v != tc.want {
				t.Errorf("%s: lowered to %d, want %d", tc.name, v, tc.want)
			}
		}
	}
	if _, moved := planLowerMark(nil, false, 90, 70, 60, nonce); !moved {
		t.Error("no mark stored: not moved")
	}
}

func TestPlanServiceProperties(t *testing.T) {
	set := func(b string) func([]byte) ([]byte, error) {
		return func([]byte) ([]byte, error) { return []byte(b), nil }
	}
	appendX := func(cur []byte) ([]byte, error) { return append(cur, 'x'), nil }
	boom := errors.New("boom")
	tests := []struct {
		name   string
		stored string
		found  bool
		f      func([]byte) ([]byte, error)
		want   []write // nil: no write
		err    error
	}{
		{"first set", "", false, set("<a/>"), []write{{key: metaServiceProps, value: []byte("<a/>")}}, nil},
		{"replace", "<a/>", true, set("<b/>"), []write{{key: metaServiceProps, value: []byte("<b/>")}}, nil},
		{"unchanged: no write", "<a/>", true, set("<a/>"), nil, nil},
		{"clear", "<a/>", true, set(""), []write{{key: metaServiceProps, del: true}}, nil},
		{"clear absent: no write", "", false, set(""), nil, nil},
		{"from the stored", "ab", true, appendX, []write{{key: metaServiceProps, value: []byte("abx")}}, nil},
		{"from none", "", false, appendX, []write{{key: metaServiceProps, value: []byte("x")}}, nil},
		{"f fails", "<a/>", true, func([]byte) ([]byte, error) { return nil, boom }, nil, boom},
		{"too large", "", false, set(string(make([]byte, MaxServiceProperties+1))), nil, ErrInvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stored []byte
			if tc.found {
				stored = []byte(tc.stored)
			}
			ws, err := planServiceProperties(stored, tc.found, tc.f)
			if !errors.Is(err, tc.err) || (tc.err != nil) != (err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if len(ws) != len(tc.want) {
				t.Fatalf("writes = %+v, want %+v", ws, tc.want)
			}
			for i := range ws {
				g, w := ws[i], tc.want[i]
				if string(g.key) != string(w.key) || string(g.value) != string(w.value) || g.del != w.del || g.end != nil {
					t.Errorf("write %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}
