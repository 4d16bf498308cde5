package entityjson_test

import (
	"errors"
	"fmt"

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
