package tests

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/localtable/localtable"
)

type (
	age     int
	level   uint8
	label   string
	onOff   bool
	ratio   float32
	payload []byte
)

// TestAnyValue: AnyValue maps a Go value as Marshal maps a struct field of
// its type, named types and pointers included, and refuses the types
// Marshal refuses with an error, not a panic.
func TestAnyValue(t *testing.T) {
	when := time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
	n := int16(-7)
	var nilp *int32
	g := localtable.MustParseGUID("0f8fad5b-d9cb-469f-a165-70867728950e")
	for _, c := range []struct {
		in   any
		want localtable.Value
	}{
		{nil, localtable.Value{}},
		{"s", localtable.StringValue("s")},
		{int8(-3), localtable.Int32Value(-3)},
		{n, localtable.Int32Value(-7)},
		{&n, localtable.Int32Value(-7)},
		{int32(5), localtable.Int32Value(5)},
		{uint8(200), localtable.Int32Value(200)},
		{uint16(60000), localtable.Int32Value(60000)},
		{int(1) << 40, localtable.Int64Value(1 << 40)},
		{int64(-1), localtable.Int64Value(-1)},
		{uint32(4000000000), localtable.Int64Value(4000000000)},
		{float32(0.5), localtable.DoubleValue(0.5)},
		{1.25, localtable.DoubleValue(1.25)},
		{true, localtable.BoolValue(true)},
		{when, localtable.DateTimeValue(when)},
		{&when, localtable.DateTimeValue(when)},
		{g, localtable.GUIDValue(g)},
		{[]byte{1, 2}, localtable.BinaryValue([]byte{1, 2})},
		{[]byte(nil), localtable.Value{}},
		{localtable.Int64Value(9), localtable.Int64Value(9)},
		{nilp, localtable.Value{}},
		{age(42), localtable.Int64Value(42)},
		{level(7), localtable.Int32Value(7)},
		{label("x"), localtable.StringValue("x")},
		{onOff(true), localtable.BoolValue(true)},
		{ratio(2), localtable.DoubleValue(2)},
		{payload("ab"), localtable.BinaryValue([]byte("ab"))},
	} {
		got, err := localtable.AnyValue(c.in)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("AnyValue(%T %v) = %v %v, want %v", c.in, c.in, got, err, c.want)
		}
		if c.in == nil {
			continue
		}
		// Marshal maps a field of the same type to the same value.
		st := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeOf(c.in)}})
		sv := reflect.New(st).Elem()
		sv.Field(0).Set(reflect.ValueOf(c.in))
		e, err := localtable.Marshal(sv.Interface())
		if err != nil {
			t.Fatalf("Marshal of a %T field: %v", c.in, err)
		}
		if !e.Properties["F"].Equal(c.want) {
			t.Errorf("Marshal maps a %T field to %v, AnyValue to %v", c.in, e.Properties["F"], got)
		}
	}
	for _, bad := range []any{uint(1), uint64(1), map[string]int{}, struct{}{}, []int{1}, complex(1, 2), new(uint), make(chan int)} {
		v, err := localtable.AnyValue(bad)
		if !errors.Is(err, localtable.ErrUnsupportedType) || !v.IsNull() {
			t.Errorf("AnyValue(%T) = %v, %v; want ErrUnsupportedType", bad, v, err)
		}
	}
}
