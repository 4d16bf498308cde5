package localtable_test

import (
	"fmt"
	"time"

	"github.com/localtable/localtable"
)

// Order is an entity type: its keys, the service's Timestamp and ETag, and
// its custom properties.
type Order struct {
	Customer string    `table:"PartitionKey"`
	ID       string    `table:"RowKey"`
	Updated  time.Time `table:"Timestamp"`
	Version  localtable.ETag

	Item     string
	Quantity int32
	Total    float64
	Shipped  *time.Time `table:",omitempty"`
	Note     string     `table:"note,omitempty"`
	Internal string     `table:"-"`
}

func ExampleMarshal() {
	e, err := localtable.Marshal(Order{
		Customer: "alice",
		ID:       "0001",
		Item:     "teapot",
		Quantity: 2,
		Total:    39.5,
		Internal: "not stored",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.PartitionKey, e.RowKey)
	for _, name := range []string{"Item", "Quantity", "Total", "Shipped", "note"} {
		if v, ok := e.Properties[name]; ok {
			fmt.Printf("%s %s = %v\n", name, v.Kind(), v)
		} else {
			fmt.Printf("%s absent\n", name)
		}
	}
	// Output:
	// alice 0001
	// Item Edm.String = teapot
	// Quantity Edm.Int32 = 2
	// Total Edm.Double = 39.5
	// Shipped absent
	// note absent
}

func ExampleUnmarshal() {
	e := localtable.Entity{
		PartitionKey: "bob",
		RowKey:       "0002",
		Timestamp:    time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC),
		ETag:         `W/"datetime'2024-05-06T07%3A08%3A09.0000000Z'"`,
		Properties: localtable.Properties{
			"Item":     localtable.StringValue("kettle"),
			"Quantity": localtable.Int32Value(1),
			"Total":    localtable.Int32Value(25), // an Int32 fills a float64
			"Shipped":  localtable.DateTimeValue(time.Date(2024, 5, 7, 12, 0, 0, 0, time.UTC)),
			"Color":    localtable.StringValue("red"), // no field: ignored
		},
	}
	var o Order
	if err := localtable.Unmarshal(e, &o); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Customer, o.ID, o.Updated.Format(time.RFC3339), o.Version)
	fmt.Println(o.Item, o.Quantity, o.Total, o.Shipped.Format(time.DateOnly), o.Note == "")

	// Widening stops where a value could be lost.
	e.Properties["Quantity"] = localtable.Int64Value(1)
	fmt.Println(localtable.Unmarshal(e, &o))
	// Output:
	// bob 0002 2024-05-06T07:08:09Z W/"datetime'2024-05-06T07%3A08%3A09.0000000Z'"
	// kettle 1 25 2024-05-07 true
	// localtable: Unmarshal: property "Quantity" is Edm.Int64, which cannot be stored in struct localtable_test.Order field Quantity of type int32; tag the field `table:",int64"` to accept Edm.Int64 values that fit
}
