package entityjson_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
)

// An entity written and read back: Int64 and DateTime carry annotations,
// a Double keeps its fraction, and every value returns with its type.
func Example() {
	e := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{
		"Count": localtable.Int32Value(7),
		"Ratio": localtable.DoubleValue(1),
		"Big":   localtable.Int64Value(9007199254740993),
	}}
	b := entityjson.Append(nil, &e, nil)
	fmt.Println(string(b))

	back, err := entityjson.Decode(b, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"Big", "Count", "Ratio"} {
		v := back.Properties[name]
		fmt.Println(name, v.Kind(), entityjson.FormatValueText(v))
	}
	// Output:
	// {"PartitionKey":"p","RowKey":"r","Big@odata.type":"Edm.Int64","Big":"9007199254740993","Count":7,"Ratio":1.0}
	// Big Edm.Int64 9007199254740993
	// Count Edm.Int32 7
	// Ratio Edm.Double 1
}

// A body the service refuses: the error carries the service's code.
func ExampleDecode_error() {
	_, err := entityjson.Decode([]byte(`{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Int64","N":5}`), false)
	var le *localtable.Error
	if errors.As(err, &le) {
		fmt.Println(le.Code, errors.Is(err, localtable.ErrInvalidInput))
	}
	// Output:
	// InvalidInput true
}

// An entity as a query response carries it, with its ETag and Timestamp
// (System), read back with them.
func ExampleAppend_system() {
	e := localtable.Entity{
		PartitionKey: "p",
		RowKey:       "r",
		Timestamp:    time.Date(2024, 5, 6, 7, 8, 9, 100, time.UTC),
		ETag:         `W/"datetime'2024-05-06T07%3A08%3A09.0000001Z'"`,
		Properties:   localtable.Properties{"Name": localtable.StringValue("it's")},
	}
	b := entityjson.Append(nil, &e, &entityjson.Options{System: true})
	fmt.Println(string(b))
	back, err := entityjson.Decode(b, true)
	fmt.Println(back.ETag == e.ETag, back.Timestamp.Equal(e.Timestamp), err)
	// Output:
	// {"PartitionKey":"p","RowKey":"r","odata.etag":"W/\"datetime'2024-05-06T07%3A08%3A09.0000001Z'\"","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-06T07:08:09.0000001Z","Name":"it's"}
	// true true <nil>
}

// A value's text without JSON, as a CSV column typed by its header holds
// it, and back.
func ExampleParseValueText() {
	for _, c := range []struct {
		text string
		kind localtable.Kind
	}{
		{"9007199254740993", localtable.KindInt64},
		{"2024-05-06T07:08:09.1234567Z", localtable.KindDateTime},
		{"Infinity", localtable.KindDouble},
		{"AQID", localtable.KindBinary},
	} {
		v, err := entityjson.ParseValueText("Col", c.text, c.kind)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(v.Kind(), entityjson.FormatValueText(v))
	}
	_, err := entityjson.ParseValueText("Col", "12x", localtable.KindInt32)
	fmt.Println(localtable.ErrorCodeOf(err))
	// Output:
	// Edm.Int64 9007199254740993
	// Edm.DateTime 2024-05-06T07:08:09.1234567Z
	// Edm.Double Infinity
	// Edm.Binary AQID
	// InvalidInput
}
