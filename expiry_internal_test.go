package localtable

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestTableRecordExpiry: a record with an expiry policy is version 3 and
// round-trips it, with or without indexes; a build that reads versions 1
// and 2 alone refuses it (its check is knownTableRecord's, with 3); a
// version 3 record without the property does not decode.
func TestTableRecordExpiry(t *testing.T) {
	for _, r := range []tableRecord{
		{ID: 3, Name: "T", Expiry: "ExpiresAt"},
		{ID: 3, Name: "T", Expiry: "ExpiresAt", Policies: []AccessPolicy{{ID: "p"}}, Indexes: []indexDef{{ID: 2, Name: "byAt", Props: []string{"ExpiresAt"}, Ready: true}}},
	} {
		b := r.append(nil)
		if b[0] != tableRecordVersion3 {
			t.Fatalf("a record with an expiry policy is version %d", b[0])
		}
		got, err := decodeTableRecord(b)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(r) {
			t.Fatalf("decoded %+v, %v; want %+v", got, err, r)
		}
		if id, ok := tableRecordID(b); !ok || id != 3 {
			t.Fatalf("tableRecordID = %d, %v", id, ok)
		}
		noExpiry := r
		noExpiry.Expiry = ""
		if v := noExpiry.append(nil)[0]; v == tableRecordVersion3 {
			t.Fatalf("a record without a policy is version 3")
		}
		// The bytes of version 2 under version 3: no property, no record.
		if v2 := noExpiry.append(nil); v2[0] == tableRecordVersion2 {
			if _, err := decodeTableRecord(append([]byte{tableRecordVersion3}, v2[1:]...)); err == nil {
				t.Error("a version 3 record without the expiry property decodes")
			}
		}
		if _, err := decodeTableRecord(append([]byte{4}, b[1:]...)); err == nil {
			t.Error("a record of a later version decodes")
		}
	}
}

func TestPlanEntitiesExpiry(t *testing.T) {
	at := TimeToTicks(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	rec := appendRecord(nil, 100, Properties{"At": DateTimeTicksValue(at), "A": Int32Value(1)})
	other := appendRecord(nil, 100, Properties{"At": Int64Value(0)})
	e := Entity{PartitionKey: "p", RowKey: "r", Properties: Properties{"B": Int32Value(2)}}
	tag := etagOf(100)
	x := func(now int64) expiryCheck { return expiryCheck{prop: "At", now: now} }
	for _, tc := range []struct {
		name   string
		act    Action
		rec    []byte
		x      expiryCheck
		err    error // of the action
		exists bool
		skip   bool
	}{
		{"insert over a live one", Action{Type: ActionInsert, Entity: e}, rec, x(at - 1), ErrEntityExists, true, false},
		{"insert over an expired one (at now)", Action{Type: ActionInsert, Entity: e}, rec, x(at), nil, false, false},
		{"no policy", Action{Type: ActionInsert, Entity: e}, rec, expiryCheck{}, ErrEntityExists, true, false},
		{"not a DateTime: never expires", Action{Type: ActionInsert, Entity: e}, other, x(at), ErrEntityExists, true, false},
		{"update * of an expired one", Action{Type: ActionUpdateReplace, Entity: e, IfMatch: ETagAny}, rec, x(at), ErrEntityNotFound, false, false},
		{"merge with its ETag", Action{Type: ActionUpdateMerge, Entity: e, IfMatch: tag}, rec, x(at + 1), ErrEntityNotFound, false, false},
		{"delete of an expired one", Action{Type: ActionDelete, Entity: e}, rec, x(at), ErrEntityNotFound, false, false},
		{"upsert merge: an insert", Action{Type: ActionUpsertMerge, Entity: e}, rec, x(at), nil, false, false},
		{"expire an expired one", Action{Type: actionExpire, Entity: e, IfMatch: tag}, rec, x(at), nil, false, false},
		{"expire, another ETag", Action{Type: actionExpire, Entity: e, IfMatch: etagOf(99)}, rec, x(at), nil, false, true},
		{"expire a live one", Action{Type: actionExpire, Entity: e, IfMatch: tag}, rec, x(at - 1), nil, true, true},
		{"expire a missing one", Action{Type: actionExpire, Entity: e, IfMatch: tag}, nil, x(at), nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := planEntities("T", []Action{tc.act}, [][]byte{tc.rec}, []bool{tc.rec != nil}, nil, tc.x)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("err = %v; want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			st := p.steps[0]
			if st.exists != tc.exists || st.skip != tc.skip || st.merge {
				t.Fatalf("step = %+v; want exists %v, skip %v, no merge", st, tc.exists, tc.skip)
			}
			if tc.rec != nil && p.floor != 100 {
				t.Errorf("floor = %d; the stored Timestamp (100) floors the commit's even when expired", p.floor)
			}
			ws, tags := p.writeSet([]Action{tc.act}, [][]byte{[]byte("k")}, appendRecord(nil, 0, e.Properties), []int{len(appendRecord(nil, 0, e.Properties))}, 200, nil, nil)
			if tc.skip != (len(ws) == 0) {
				t.Fatalf("write set %v for a step that skips: %v", ws, tc.skip)
			}
			if tc.act.Type == actionExpire && !tc.skip && (!ws[0].del || tags[0] != tc.act.IfMatch) {
				t.Errorf("expire: writes %+v, tag %q; want a deletion tagged with the ETag deleted", ws, tags[0])
			}
		})
	}
}
