package entityjson_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
)

// TestRefusesInvalidText: a string of invalid UTF-8, raw or escaped as a
// lone surrogate, is refused naming its property, never stored as U+FFFD,
// by every reader of the codec (Decode, DecodeRequest).
func TestRefusesInvalidText(t *testing.T) {
	cases := []struct {
		name, body, code, names string
	}{
		{"raw byte in value", `{"PartitionKey":"p","RowKey":"r","S":"a` + "\xff" + `b"}`, "InvalidInput", "'S'"},
		{"raw byte in escaped value", `{"PartitionKey":"p","RowKey":"r","S":"a\n` + "\xff" + `"}`, "InvalidInput", "'S'"},
		{"encoded surrogate in value", `{"PartitionKey":"p","RowKey":"r","S":"` + "\xed\xa0\x80" + `"}`, "InvalidInput", "'S'"},
		{"lone high surrogate", `{"PartitionKey":"p","RowKey":"r","S":"x\ud800y"}`, "InvalidInput", "'S'"},
		{"high surrogate at end", `{"PartitionKey":"p","RowKey":"r","S":"x\ud800"}`, "InvalidInput", "'S'"},
		{"lone low surrogate", `{"PartitionKey":"p","RowKey":"r","S":"\udc00"}`, "InvalidInput", "'S'"},
		{"two high surrogates", `{"PartitionKey":"p","RowKey":"r","S":"\ud800\ud800"}`, "InvalidInput", "'S'"},
		{"annotated value", `{"PartitionKey":"p","RowKey":"r","S@odata.type":"Edm.String","S":"\udfff"}`, "InvalidInput", "'S'"},
		{"partition key", `{"PartitionKey":"p` + "\xc3" + `","RowKey":"r"}`, "InvalidInput", "'PartitionKey'"},
		{"row key escape", `{"PartitionKey":"p","RowKey":"\ud83d"}`, "InvalidInput", "'RowKey'"},
		{"raw byte in name", `{"PartitionKey":"p","RowKey":"r","N` + "\xff" + `":1}`, "PropertyNameInvalid", "property name"},
		{"surrogate escape in name", `{"PartitionKey":"p","RowKey":"r","N\udc00":1}`, "PropertyNameInvalid", "property name"},
	}
	for _, c := range cases {
		_, err := entityjson.Decode([]byte(c.body), false)
		_, _, rerr := entityjson.DecodeRequest([]byte(c.body), true)
		for _, err := range []error{err, rerr} {
			var le *localtable.Error
			if !errors.As(err, &le) || string(le.Code) != c.code || !strings.Contains(le.Message, c.names) {
				t.Errorf("%s: got %v, want %s naming %s", c.name, err, c.code, c.names)
			}
		}
	}
	// Valid text still reads: a surrogate pair, escaped or not, and U+FFFD
	// itself.
	for _, body := range []string{
		`{"PartitionKey":"p","RowKey":"r","S":"\ud83d\ude00\n"}`,
		`{"PartitionKey":"p","RowKey":"r","S":"😀\ufffd` + "\xef\xbf\xbd" + `"}`,
		`{"PartitionKey":"p","RowKey":"r","S\u00e9":"\u00e9"}`,
	} {
		if _, err := entityjson.Decode([]byte(body), false); err != nil {
			t.Errorf("%s: %v", body, err)
		}
		if _, _, err := entityjson.DecodeRequest([]byte(body), true); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}
