package server_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// AppendEntityJSON and DecodeEntity round-trip every Edm type, and the
// text is the service's JSON with its annotations.
func TestEntityJSONRoundTrip(t *testing.T) {
	e := localtable.Entity{PartitionKey: "p\"1", RowKey: "r", Properties: localtable.Properties{
		"Bin":  localtable.BinaryValue([]byte{1, 2}),
		"Bool": localtable.BoolValue(true),
		"DT":   localtable.DateTimeValue(time.Date(2024, 5, 6, 7, 8, 9, 1234500, time.UTC)),
		"Dbl":  localtable.DoubleValue(2),
		"Guid": localtable.GUIDValue(localtable.MustParseGUID("4185404a-5818-48c3-b9be-f217df0dba6f")),
		"I32":  localtable.Int32Value(7),
		"I64":  localtable.Int64Value(1 << 40),
		"Inf":  localtable.DoubleValue(math.Inf(1)),
		"Str":  localtable.StringValue("x"),
	}}
	got := string(server.AppendEntityJSON(nil, &e, false))
	want := `{"PartitionKey":"p\"1","RowKey":"r","Bin@odata.type":"Edm.Binary","Bin":"AQI=","Bool":true,` +
		`"DT@odata.type":"Edm.DateTime","DT":"2024-05-06T07:08:09.0012345Z","Dbl":2.0,` +
		`"Guid@odata.type":"Edm.Guid","Guid":"4185404a-5818-48c3-b9be-f217df0dba6f","I32":7,` +
		`"I64@odata.type":"Edm.Int64","I64":"1099511627776","Inf@odata.type":"Edm.Double","Inf":"Infinity","Str":"x"}`
	if got != want {
		t.Fatalf("AppendEntityJSON:\n got %s\nwant %s", got, want)
	}
	back, err := server.DecodeEntity([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if back.PartitionKey != e.PartitionKey || back.RowKey != e.RowKey || len(back.Properties) != len(e.Properties) {
		t.Fatalf("DecodeEntity: %+v", back)
	}
	for name, v := range e.Properties {
		if !back.Properties[name].Equal(v) {
			t.Errorf("%s: got %v (%v), want %v (%v)", name, back.Properties[name], back.Properties[name].Kind(), v, v.Kind())
		}
	}
	ts := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	e = localtable.Entity{PartitionKey: "a", RowKey: "b", Timestamp: ts}
	if got := string(server.AppendEntityJSON(nil, &e, true)); got != `{"PartitionKey":"a","RowKey":"b","Timestamp":"2020-01-02T03:04:05.0000000Z"}` {
		t.Fatalf("with Timestamp: %s", got)
	}
}

func TestDecodeEntityErrors(t *testing.T) {
	for _, body := range []string{`{"PartitionKey":"p"}`, `{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Int64","N":"x"}`, `[1]`} {
		_, err := server.DecodeEntity([]byte(body))
		var le *localtable.Error
		if !errors.As(err, &le) || le.StatusCode != 400 {
			t.Errorf("%s: %v, want a 400 *localtable.Error", body, err)
		}
	}
}
