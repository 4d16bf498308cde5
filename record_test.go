package localtable

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func sampleProps() Properties {
	return Properties{
		"S": StringValue("héllo"), "E": StringValue(""), "I32": Int32Value(math.MinInt32),
		"I64": Int64Value(math.MaxInt64), "D": DoubleValue(-0.5), "NaN": DoubleValue(math.NaN()),
		"T": BoolValue(true), "F": BoolValue(false),
		"DT":  DateTimeValue(time.Date(2001, 2, 3, 4, 5, 6, 700, time.UTC)),
		"G":   GUIDValue(MustParseGUID("4185404a-5818-48c3-b9be-f217df0dba6f")),
		"Bin": BinaryValue([]byte{0, 1, 255}),
	}
}

func TestRecordRoundTrip(t *testing.T) {
	p := sampleProps()
	p["Null"] = Value{}
	b := appendRecord(nil, 12345, p)
	ticks, got, err := decodeRecord(b, nil)
	if err != nil || ticks != 12345 {
		t.Fatalf("decode: %d %v", ticks, err)
	}
	delete(p, "Null")
	if len(got) != len(p) {
		t.Fatalf("got %d properties, want %d", len(got), len(p))
	}
	for k, v := range p {
		if !got[k].Equal(v) {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	_, sel, err := decodeRecord(b, map[string]bool{"I64": true, "X": true})
	if err != nil || len(sel) != 1 || sel["I64"].Int64() != math.MaxInt64 {
		t.Errorf("projection = %v, %v", sel, err)
	}
	// Every truncation of a record is an error, never a panic.
	for i := 0; i < len(b); i++ {
		if _, _, err := decodeRecord(b[:i], nil); err == nil {
			t.Errorf("truncated at %d decoded without error", i)
		}
	}
}

func TestTableRecordRoundTrip(t *testing.T) {
	r := tableRecord{ID: 9, Name: "MyTable", Policies: []AccessPolicy{
		{ID: "a", Permission: "ra", Start: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "b", Expiry: time.Date(2030, 1, 1, 0, 0, 0, 5, time.UTC)},
	}}
	got, err := decodeTableRecord(r.append(nil))
	if err != nil || got.ID != 9 || got.Name != "MyTable" || len(got.Policies) != 2 ||
		!got.Policies[1].Expiry.Equal(r.Policies[1].Expiry) || got.Policies[0].Permission != "ra" {
		t.Errorf("decoded %+v, %v", got, err)
	}
}

// TestTableRecordIndexes: a record with indexes is version 2 and
// round-trips them; one without stays version 1, which a localtable that
// predates indexes reads; a version 1 record with index bytes after it, or
// a version 2 record without indexes, does not decode.
func TestTableRecordIndexes(t *testing.T) {
	plain := tableRecord{ID: 3, Name: "T", Policies: []AccessPolicy{{ID: "p"}}}
	if b := plain.append(nil); b[0] != tableRecordVersion1 {
		t.Fatalf("a record without indexes is version %d", b[0])
	}
	r := plain
	r.Indexes = []indexDef{
		{ID: 1, Name: "byA", Props: []string{"A"}, Ready: true},
		{ID: 4, Name: "byBC", Props: []string{"B", "C"}, Cursor: []byte("pk\x00\x01rk\x00\x01")},
	}
	b := r.append(nil)
	if b[0] != tableRecordVersion2 {
		t.Fatalf("a record with indexes is version %d", b[0])
	}
	got, err := decodeTableRecord(b)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(r) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, r)
	}
	if id, ok := tableRecordID(b); !ok || id != 3 {
		t.Fatalf("tableRecordID = %d, %v", id, ok)
	}
	v1 := append([]byte{tableRecordVersion1}, b[1:]...)
	if _, err := decodeTableRecord(v1); err == nil {
		t.Error("a version 1 record with indexes after it decodes")
	}
	v2 := append([]byte{tableRecordVersion2}, plain.append(nil)[1:]...)
	if _, err := decodeTableRecord(append(v2, 0)); err == nil {
		t.Error("a version 2 record of no index decodes")
	}
}

func FuzzRecord(f *testing.F) {
	f.Add(appendRecord(nil, 1, sampleProps()))
	f.Add(appendRecord(nil, 0, nil))
	f.Add(recordAsV1(appendRecord(nil, 1, sampleProps())))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		ticks, props, err := decodeRecord(b, nil)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes, in its version: the
		// encoding is canonical.
		re := appendRecord(nil, ticks, props)
		if b[0] == recordV1 {
			re = recordAsV1(re)
		}
		if string(re) != string(b) {
			t.Fatalf("%x decodes to %v which encodes to %x", b, props, re)
		}
	})
}

func FuzzTableRecord(f *testing.F) {
	f.Add(tableRecord{ID: 1, Name: "t", Policies: []AccessPolicy{{ID: "x", Permission: "r"}}}.append(nil))
	f.Add(tableRecord{ID: 1, Name: "t", Indexes: []indexDef{{ID: 1, Name: "i", Props: []string{"P", "Q"}, Cursor: []byte{1}}}}.append(nil))
	f.Add(tableRecord{ID: 1, Name: "t", Expiry: "At", Indexes: []indexDef{{ID: 1, Name: "i", Props: []string{"At"}, Ready: true}}}.append(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeTableRecord(b) // must not panic
	})
}
