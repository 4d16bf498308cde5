package entityjson_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
)

// everyKind is an entity holding every Edm type at its edges.
func everyKind() localtable.Entity {
	g, _ := localtable.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	return localtable.Entity{PartitionKey: "p \"q\"\u2028", RowKey: "r\u00e9\U0001F600", Properties: localtable.Properties{
		"S": localtable.StringValue("line\nnext\t\"quoted\" \\ é"), "Empty": localtable.StringValue(""),
		"I32": localtable.Int32Value(math.MinInt32), "I32b": localtable.Int32Value(7),
		"I64": localtable.Int64Value(math.MaxInt64), "I64b": localtable.Int64Value(-1),
		"D": localtable.DoubleValue(1), "Dneg0": localtable.DoubleValue(math.Copysign(0, -1)), "Dbig": localtable.DoubleValue(1e21),
		"Dtiny": localtable.DoubleValue(5e-324), "Dfrac": localtable.DoubleValue(0.1), "NaN": localtable.DoubleValue(math.NaN()),
		"Inf": localtable.DoubleValue(math.Inf(1)), "NInf": localtable.DoubleValue(math.Inf(-1)),
		"B": localtable.BoolValue(true), "Bf": localtable.BoolValue(false),
		"T":   localtable.DateTimeValue(time.Date(2024, 2, 29, 23, 59, 59, 123456700, time.UTC)),
		"T0":  localtable.DateTimeValue(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)),
		"G":   localtable.GUIDValue(g),
		"Bin": localtable.BinaryValue([]byte{0, 1, 2, 0xff}), "BinEmpty": localtable.BinaryValue(nil),
	}}
}

func sameEntity(t *testing.T, got, want localtable.Entity) {
	t.Helper()
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey || len(got.Properties) != len(want.Properties) {
		t.Fatalf("got %q/%q with %d properties, want %q/%q with %d", got.PartitionKey, got.RowKey, len(got.Properties), want.PartitionKey, want.RowKey, len(want.Properties))
	}
	for name, w := range want.Properties {
		g := got.Properties[name]
		if g.Kind() != w.Kind() || !g.Equal(w) || (w.Kind() == localtable.KindDouble && math.Signbit(g.Double()) != math.Signbit(w.Double())) {
			t.Errorf("%s: got %v (%v), want %v (%v)", name, g, g.Kind(), w, w.Kind())
		}
	}
}

func TestRoundTripsEveryKind(t *testing.T) {
	want := everyKind()
	b := entityjson.Append(nil, &want, nil)
	got, err := entityjson.Decode(b, false)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	sameEntity(t, got, want)
	if again := entityjson.Append(nil, &got, nil); string(again) != string(b) {
		t.Fatalf("not stable:\n%s\n%s", b, again)
	}
}

func TestSystemMembers(t *testing.T) {
	e := localtable.Entity{PartitionKey: "p", RowKey: "r", ETag: `W/"datetime'2024-01-02T03%3A04%3A05.0000001Z'"`,
		Timestamp: time.Date(2024, 1, 2, 3, 4, 5, 100, time.UTC), Properties: localtable.Properties{"N": localtable.Int32Value(1)}}
	b := entityjson.Append(nil, &e, &entityjson.Options{System: true})
	const want = `{"PartitionKey":"p","RowKey":"r","odata.etag":"W/\"datetime'2024-01-02T03%3A04%3A05.0000001Z'\"","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-01-02T03:04:05.0000001Z","N":1}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	got, err := entityjson.Decode(b, true)
	if err != nil || got.ETag != e.ETag || !got.Timestamp.Equal(e.Timestamp) {
		t.Fatalf("with system: %v %q %v", err, got.ETag, got.Timestamp)
	}
	got, err = entityjson.Decode(b, false)
	if err != nil || got.ETag != "" || !got.Timestamp.IsZero() {
		t.Fatalf("without system: %v %q %v", err, got.ETag, got.Timestamp)
	}
	if b := entityjson.Append(nil, &e, nil); string(b) != `{"PartitionKey":"p","RowKey":"r","N":1}` {
		t.Fatalf("without system: %s", b)
	}
}

func TestDecodeErrors(t *testing.T) {
	for in, code := range map[string]localtable.ErrorCode{
		`{"RowKey":"r"}`: localtable.CodePropertiesNeedValue,
		`{"PartitionKey":"p","RowKey":"r","A":1,"A":2}`:                            localtable.CodeDuplicatePropertiesSpecified,
		`{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int64","A":5}`:       localtable.CodeInvalidInput,
		`{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Nope","A":"5"}`:      localtable.CodeInvalidInput,
		`{"PartitionKey":"p","RowKey":"r"`:                                         localtable.CodeInvalidInput,
		`[1]`:                                                                      localtable.CodeInvalidInput,
		`{"PartitionKey":"p","RowKey":"r","A":{"x":1}}`:                            localtable.CodeInvalidInput,
		`{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Guid","A":"nothex"}`: localtable.CodeInvalidInput,
	} {
		_, err := entityjson.Decode([]byte(in), false)
		var le *localtable.Error
		if !errors.As(err, &le) || le.Code != code {
			t.Errorf("%s: %v, want %s", in, err, code)
		}
	}
}

func TestValueTextRoundTrips(t *testing.T) {
	for name, v := range everyKind().Properties {
		text := entityjson.FormatValueText(v)
		got, err := entityjson.ParseValueText(name, text, v.Kind())
		if err != nil {
			t.Errorf("%s: %q: %v", name, text, err)
			continue
		}
		if got.Kind() != v.Kind() || !got.Equal(v) || (v.Kind() == localtable.KindDouble && math.Signbit(got.Double()) != math.Signbit(v.Double())) {
			t.Errorf("%s: %q read back as %v, want %v", name, text, got, v)
		}
	}
	if _, err := entityjson.ParseValueText("N", "12x", localtable.KindInt32); err == nil {
		t.Error("12x as Int32: no error")
	}
	if got := entityjson.FormatValueText(localtable.DoubleValue(1)); got != "1" {
		t.Errorf("Double 1 as text: %q", got)
	}
}

// With Annotate, a JSON re-encoding that loses the difference between 1.0
// and 1 (as aztables makes, through map[string]any) keeps the types.
func TestAnnotateSurvivesReencoding(t *testing.T) {
	want := everyKind()
	b := entityjson.Append(nil, &want, &entityjson.Options{Annotate: true})
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	re, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := entityjson.Decode(re, false)
	if err != nil {
		t.Fatalf("%s: %v", re, err)
	}
	sameEntity(t, got, want)
	// Without it, the re-encoding turns the Double 1.0 into an Int32.
	b = entityjson.Append(nil, &want, nil)
	m = nil
	json.Unmarshal(b, &m)
	re, _ = json.Marshal(m)
	if got, _ := entityjson.Decode(re, false); got.Properties["D"].Kind() != localtable.KindInt32 {
		t.Fatalf("re-encoded without annotations: D is %v", got.Properties["D"].Kind())
	}
}
