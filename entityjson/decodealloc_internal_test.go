package entityjson

import (
	"testing"
)

// TestDecodeRequestAllocs guards DecodeRequest's allocations on a common
// flat body: one copy of the body holds the names and string values, so
// the count does not grow with the number of properties.
func TestDecodeRequestAllocs(t *testing.T) {
	body := []byte(`{"PartitionKey":"p1","RowKey":"r1","Name":"Jonathan Smithson","Email":"jonathan.smithson@contoso.com",` +
		`"City":"Redmond","Age":42,"Visits@odata.type":"Edm.Int64","Visits":"1234567890123","Score":0.75,"Active":true,` +
		`"Joined@odata.type":"Edm.DateTime","Joined":"2020-05-01T12:00:00Z"}`)
	n := testing.AllocsPerRun(100, func() {
		if _, _, err := DecodeRequest(body, true); err != nil {
			t.Fatal(err)
		}
	})
	// The body's copy, the members' map and names, the Properties map and
	// its entries; a copy per name or string would be 30 and more.
	if n > 8 {
		t.Errorf("DecodeRequest: %v allocations, want at most 8", n)
	}
}
