package tests

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/localtable/localtable"
)

type status int32

type color string

type blob []byte

// allTypes has a field of every supported type.
type allTypes struct {
	PartitionKey string
	RowKey       string
	Timestamp    time.Time
	ETag         localtable.ETag

	S      string
	I8     int8
	I16    int16
	I32    int32
	I64    int64
	I      int
	U8     uint8
	U16    uint16
	U32    uint32
	F32    float32
	F64    float64
	B      bool
	T      time.Time
	G      localtable.GUID
	Bin    []byte
	V      localtable.Value
	Status status
	Color  color
	Blob   blob

	unexported string
}

var (
	testGUID = localtable.MustParseGUID("6f1b7a3e-0c2d-4e5f-8a9b-0c1d2e3f4a5b")
	testTime = time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
	testETag = localtable.ETag(`W/"datetime'2024-05-06T07%3A08%3A09.1234567Z'"`)
)

func marshalOK(t testing.TB, v any) localtable.Entity {
	t.Helper()
	e, err := localtable.Marshal(v)
	if err != nil {
		t.Fatalf("Marshal(%T): %v", v, err)
	}
	return e
}

func unmarshalOK(t testing.TB, e localtable.Entity, v any) {
	t.Helper()
	if err := localtable.Unmarshal(e, v); err != nil {
		t.Fatalf("Unmarshal(%T): %v", v, err)
	}
}

// wantErr checks that err is non-nil and contains every one of parts.
func wantErr(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want an error containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("err = %q, want it to contain %q", err, p)
		}
	}
}

func TestMarshalAllTypes(t *testing.T) {
	in := allTypes{
		PartitionKey: "pk",
		RowKey:       "rk",
		Timestamp:    testTime, // ignored by Marshal
		ETag:         testETag,
		S:            "hello",
		I8:           -8,
		I16:          -16,
		I32:          math.MinInt32,
		I64:          math.MaxInt64,
		I:            -1 << 40,
		U8:           255,
		U16:          65535,
		U32:          math.MaxUint32,
		F32:          1.5,
		F64:          math.Pi,
		B:            true,
		T:            testTime,
		G:            testGUID,
		Bin:          []byte{0, 1, 2, 255},
		V:            localtable.Int32Value(7),
		Status:       3,
		Color:        "red",
		Blob:         blob("xyz"),
		unexported:   "not stored",
	}
	got := marshalOK(t, in)
	want := localtable.Entity{
		PartitionKey: "pk",
		RowKey:       "rk",
		ETag:         testETag,
		Properties: localtable.Properties{
			"S":      localtable.StringValue("hello"),
			"I8":     localtable.Int32Value(-8),
			"I16":    localtable.Int32Value(-16),
			"I32":    localtable.Int32Value(math.MinInt32),
			"I64":    localtable.Int64Value(math.MaxInt64),
			"I":      localtable.Int64Value(-1 << 40),
			"U8":     localtable.Int32Value(255),
			"U16":    localtable.Int32Value(65535),
			"U32":    localtable.Int64Value(math.MaxUint32),
			"F32":    localtable.DoubleValue(1.5),
			"F64":    localtable.DoubleValue(math.Pi),
			"B":      localtable.BoolValue(true),
			"T":      localtable.DateTimeValue(testTime),
			"G":      localtable.GUIDValue(testGUID),
			"Bin":    localtable.BinaryValue([]byte{0, 1, 2, 255}),
			"V":      localtable.Int32Value(7),
			"Status": localtable.Int32Value(3),
			"Color":  localtable.StringValue("red"),
			"Blob":   localtable.BinaryValue([]byte("xyz")),
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}

	// A pointer to the struct marshals the same.
	if diff := cmp.Diff(want, marshalOK(t, &in)); diff != "" {
		t.Errorf("Marshal(&v) mismatch (-want +got):\n%s", diff)
	}

	// Unmarshal restores every field; Timestamp comes from the entity.
	got.Timestamp = testTime.Add(time.Hour)
	var back allTypes
	unmarshalOK(t, got, &back)
	in.Timestamp = got.Timestamp
	in.unexported = ""
	if diff := cmp.Diff(in, back, cmp.AllowUnexported(allTypes{})); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

type pointers struct {
	S   *string
	I32 *int32
	I64 *int64
	I   *int
	U8  *uint8
	F64 *float64
	F32 *float32
	B   *bool
	T   *time.Time
	G   *localtable.GUID
	Bin *[]byte
	V   *localtable.Value
}

func ptr[T any](v T) *T { return &v }

func TestMarshalPointers(t *testing.T) {
	t.Run("nil", func(t *testing.T) {
		got := marshalOK(t, pointers{})
		if diff := cmp.Diff(localtable.Properties{}, got.Properties); diff != "" {
			t.Errorf("nil pointers made properties (-want +got):\n%s", diff)
		}
		back := pointers{S: ptr("stale"), I: ptr(9)}
		unmarshalOK(t, got, &back)
		if diff := cmp.Diff(pointers{}, back); diff != "" {
			t.Errorf("absent properties did not leave nil pointers (-want +got):\n%s", diff)
		}
	})
	t.Run("set", func(t *testing.T) {
		in := pointers{
			S:   ptr(""),
			I32: ptr(int32(0)),
			I64: ptr(int64(-5)),
			I:   ptr(42),
			U8:  ptr(uint8(200)),
			F64: ptr(2.5),
			F32: ptr(float32(-0.25)),
			B:   ptr(false),
			T:   ptr(testTime),
			G:   ptr(testGUID),
			Bin: ptr([]byte("b")),
			V:   ptr(localtable.StringValue("v")),
		}
		got := marshalOK(t, in)
		want := localtable.Properties{
			"S":   localtable.StringValue(""),
			"I32": localtable.Int32Value(0),
			"I64": localtable.Int64Value(-5),
			"I":   localtable.Int64Value(42),
			"U8":  localtable.Int32Value(200),
			"F64": localtable.DoubleValue(2.5),
			"F32": localtable.DoubleValue(-0.25),
			"B":   localtable.BoolValue(false),
			"T":   localtable.DateTimeValue(testTime),
			"G":   localtable.GUIDValue(testGUID),
			"Bin": localtable.BinaryValue([]byte("b")),
			"V":   localtable.StringValue("v"),
		}
		if diff := cmp.Diff(want, got.Properties); diff != "" {
			t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
		}
		var back pointers
		unmarshalOK(t, got, &back)
		if diff := cmp.Diff(in, back); diff != "" {
			t.Errorf("round trip mismatch (-want +got):\n%s", diff)
		}
	})
}

type Base struct {
	PartitionKey string
	RowKey       string
	Name         string
	Created      time.Time
}

type Extra struct {
	Note  string
	Count int32
}

type audit struct {
	By string
}

type withEmbedded struct {
	Base
	*Extra
	audit
	Name string // hides Base.Name
	Size int64
}

func TestMarshalEmbedded(t *testing.T) {
	in := withEmbedded{
		Base:  Base{PartitionKey: "p", RowKey: "r", Name: "hidden", Created: testTime},
		Extra: &Extra{Note: "n", Count: 2},
		audit: audit{By: "me"},
		Name:  "outer",
		Size:  10,
	}
	got := marshalOK(t, in)
	want := localtable.Entity{
		PartitionKey: "p",
		RowKey:       "r",
		Properties: localtable.Properties{
			"Created": localtable.DateTimeValue(testTime),
			"Note":    localtable.StringValue("n"),
			"Count":   localtable.Int32Value(2),
			"By":      localtable.StringValue("me"),
			"Name":    localtable.StringValue("outer"),
			"Size":    localtable.Int64Value(10),
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}

	var back withEmbedded
	unmarshalOK(t, got, &back)
	in.Base.Name = "" // hidden: not stored
	if diff := cmp.Diff(in, back, cmp.AllowUnexported(withEmbedded{})); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}

	// A nil embedded pointer contributes nothing, and stays nil when its
	// properties are absent.
	in.Extra = nil
	got = marshalOK(t, in)
	if _, ok := got.Properties["Note"]; ok {
		t.Errorf("nil embedded pointer made property Note: %v", got.Properties)
	}
	back = withEmbedded{}
	unmarshalOK(t, got, &back)
	if back.Extra != nil {
		t.Errorf("Unmarshal allocated Extra with no properties: %+v", back.Extra)
	}
}

type hidden struct{ Secret string }

type withUnexportedPtr struct {
	*hidden
	Name string
}

func TestUnmarshalUnexportedEmbeddedPointer(t *testing.T) {
	// Marshal reads through it.
	got := marshalOK(t, withUnexportedPtr{hidden: &hidden{Secret: "s"}, Name: "n"})
	if diff := cmp.Diff(localtable.StringValue("s"), got.Properties["Secret"]); diff != "" {
		t.Errorf("Secret (-want +got):\n%s", diff)
	}
	// Unmarshal cannot allocate it...
	var v withUnexportedPtr
	wantErr(t, localtable.Unmarshal(got, &v), "cannot set embedded pointer", "hidden", "Secret")
	// ...but fills it when it is already there.
	v = withUnexportedPtr{hidden: &hidden{}}
	unmarshalOK(t, got, &v)
	if v.Secret != "s" || v.Name != "n" {
		t.Errorf("Unmarshal = %+v %+v", v, *v.hidden)
	}
}

type tagA struct{ X string }
type tagB struct {
	X string `table:"X"`
}
type tagWins struct {
	tagA
	tagB
}

type ambiguous struct {
	tagA
	Extra2
}

type Extra2 struct{ X int32 }

type cycle struct {
	*cycle
	Name string
}

func TestMarshalDominance(t *testing.T) {
	got := marshalOK(t, tagWins{tagA{"a"}, tagB{"b"}})
	if diff := cmp.Diff(localtable.Properties{"X": localtable.StringValue("b")}, got.Properties); diff != "" {
		t.Errorf("tagged field did not win (-want +got):\n%s", diff)
	}

	_, err := localtable.Marshal(ambiguous{})
	wantErr(t, err, "tests.ambiguous", "tagA.X and Extra2.X", `property "X"`)

	got = marshalOK(t, &cycle{Name: "c", cycle: &cycle{Name: "inner"}})
	if diff := cmp.Diff(localtable.Properties{"Name": localtable.StringValue("c")}, got.Properties); diff != "" {
		t.Errorf("cycle (-want +got):\n%s", diff)
	}
}

type tagged struct {
	ID      string           `table:"PartitionKey"`
	Sort    string           `table:"RowKey"`
	Renamed string           `table:"new_name"`
	Skipped string           `table:"-"`
	Dash    string           `table:"-,"`
	Small   int              `table:",int32"`
	Big     int32            `table:"big,int64"`
	Opt     string           `table:",omitempty"`
	OptN    int              `table:",omitempty"`
	OptT    time.Time        `table:",omitempty"`
	OptB    []byte           `table:",omitempty"`
	OptG    localtable.GUID  `table:",omitempty"`
	OptV    localtable.Value `table:",omitempty"`
	OptP    *int             `table:",omitempty"`
	OptF    float64          `table:"f,omitempty"`
	Version localtable.ETag  `table:"whatever"`
}

func TestMarshalTags(t *testing.T) {
	in := tagged{
		ID: "pk", Sort: "rk", Renamed: "r", Skipped: "s", Dash: "d",
		Small: -3, Big: 4, Version: testETag,
	}
	got := marshalOK(t, in)
	want := localtable.Entity{
		PartitionKey: "pk",
		RowKey:       "rk",
		ETag:         testETag,
		Properties: localtable.Properties{
			"new_name": localtable.StringValue("r"),
			"-":        localtable.StringValue("d"),
			"Small":    localtable.Int32Value(-3),
			"big":      localtable.Int64Value(4),
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	var back tagged
	unmarshalOK(t, got, &back)
	in.Skipped = ""
	if diff := cmp.Diff(in, back); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}

	// omitempty keeps non-zero values.
	in = tagged{Opt: "o", OptN: 1, OptT: testTime, OptB: []byte{1}, OptG: testGUID,
		OptV: localtable.BoolValue(false), OptP: ptr(0), OptF: 0.5}
	got = marshalOK(t, in)
	for _, name := range []string{"Opt", "OptN", "OptT", "OptB", "OptG", "OptV", "OptP", "f"} {
		if _, ok := got.Properties[name]; !ok {
			t.Errorf("omitempty dropped non-zero %s", name)
		}
	}
	// A zero time in a non-UTC location is still empty.
	in = tagged{OptT: time.Time{}.In(time.FixedZone("X", 3600)), OptB: []byte{}}
	got = marshalOK(t, in)
	if _, ok := got.Properties["OptT"]; ok {
		t.Errorf("omitempty kept a zero time")
	}
	if _, ok := got.Properties["OptB"]; ok {
		t.Errorf("omitempty kept an empty []byte")
	}
}

func TestMarshalTypeOption(t *testing.T) {
	type small struct {
		N int    `table:",int32"`
		U uint32 `table:",int32"`
	}
	_, err := localtable.Marshal(small{N: math.MaxInt32 + 1})
	wantErr(t, err, "localtable: ", "small", "field N", "2147483648", "Edm.Int32")
	_, err = localtable.Marshal(small{U: math.MaxInt32 + 1})
	wantErr(t, err, "field U", "overflows Edm.Int32")

	got := marshalOK(t, small{N: math.MinInt32, U: math.MaxInt32})
	want := localtable.Properties{"N": localtable.Int32Value(math.MinInt32), "U": localtable.Int32Value(math.MaxInt32)}
	if diff := cmp.Diff(want, got.Properties); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// ,int64 on an int32 field reads back Int64 values that fit.
	type wide struct {
		N int32 `table:",int64"`
	}
	var w wide
	unmarshalOK(t, localtable.Entity{Properties: localtable.Properties{"N": localtable.Int64Value(-7)}}, &w)
	if w.N != -7 {
		t.Errorf("N = %d, want -7", w.N)
	}
	err = localtable.Unmarshal(localtable.Entity{Properties: localtable.Properties{"N": localtable.Int64Value(1 << 40)}}, &w)
	wantErr(t, err, `"N"`, "Edm.Int64", "1099511627776", "overflows", "int32")
}

func TestMarshalTagErrors(t *testing.T) {
	type badOpt struct {
		A string `table:",omitEmpty"`
	}
	type optOnString struct {
		A string `table:",int32"`
	}
	type optOnKey struct {
		PartitionKey string `table:",int64"`
	}
	tests := []struct {
		name  string
		v     any
		parts []string
	}{
		{"unknown option", badOpt{}, []string{"badOpt", "field A", `unknown tag option "omitEmpty"`}},
		{"int32 on string", optOnString{}, []string{"optOnString", "field A", "Edm.Int32", "integer", "string"}},
		{"int64 on key", optOnKey{}, []string{"optOnKey", "PartitionKey", "Edm.Int64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := localtable.Marshal(tt.v)
			wantErr(t, err, tt.parts...)
			if errors.Is(err, localtable.ErrUnsupportedType) {
				t.Errorf("tag error %v wraps ErrUnsupportedType", err)
			}
		})
	}
}

func TestMarshalKeysTimestampETag(t *testing.T) {
	type keyed struct {
		PartitionKey string
		RowKey       color // a string type
		Timestamp    time.Time
		Tag          localtable.ETag
		Data         string
	}
	in := keyed{PartitionKey: "p", RowKey: "r", Timestamp: testTime, Tag: testETag, Data: "d"}
	got := marshalOK(t, in)
	want := localtable.Entity{
		PartitionKey: "p",
		RowKey:       "r",
		ETag:         testETag,
		Properties:   localtable.Properties{"Data": localtable.StringValue("d")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}

	ts := time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	e := localtable.Entity{PartitionKey: "P", RowKey: "R", Timestamp: ts, ETag: "etag",
		Properties: localtable.Properties{"Data": localtable.StringValue("x")}}
	var back keyed
	unmarshalOK(t, e, &back)
	wantBack := keyed{PartitionKey: "P", RowKey: "R", Timestamp: ts, Tag: "etag", Data: "x"}
	if diff := cmp.Diff(wantBack, back); diff != "" {
		t.Errorf("Unmarshal mismatch (-want +got):\n%s", diff)
	}
}

func TestMarshalUnsupportedTypes(t *testing.T) {
	type inner struct{ A string }
	tests := []struct {
		name   string
		v      any
		field  string
		goType string
	}{
		{"map", struct{ M map[string]int }{}, "field M", "map[string]int"},
		{"chan", struct{ C chan int }{}, "field C", "chan int"},
		{"func", struct{ F func() }{}, "field F", "func()"},
		{"slice", struct{ L []string }{}, "field L", "[]string"},
		{"array", struct{ A [4]byte }{}, "field A", "[4]uint8"},
		{"struct", struct{ N inner }{}, "field N", "tests.inner"},
		{"uint64", struct{ U uint64 }{}, "field U", "uint64"},
		{"uint", struct{ U uint }{}, "field U", "uint"},
		{"interface", struct{ X any }{}, "field X", "interface {}"},
		{"complex", struct{ X complex128 }{}, "field X", "complex128"},
		{"double pointer", struct{ P **string }{}, "field P", "**string"},
		{"pointer to struct", struct{ P *inner }{}, "field P", "*tests.inner"},
		{"ETag pointer", struct{ E *localtable.ETag }{}, "field E", "*localtable.ETag"},
		{"tagged embedded", struct {
			inner `table:"In"`
		}{}, "field inner", "tests.inner"},
		{"deep", struct{ withBad }{}, "field withBad.Bad", "map[int]int"},
		{"PartitionKey", struct{ PartitionKey int }{}, "PartitionKey must be a string", "int"},
		{"RowKey pointer", struct {
			K *string `table:"RowKey"`
		}{}, "RowKey must be a string", "*string"},
		{"Timestamp", struct{ Timestamp string }{}, "Timestamp must be a time.Time", "string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := localtable.Marshal(tt.v)
			if !errors.Is(err, localtable.ErrUnsupportedType) {
				t.Fatalf("Marshal err = %v, want ErrUnsupportedType", err)
			}
			wantErr(t, err, "localtable: ", "struct {", tt.field, tt.goType)
			// Unmarshal rejects the type the same way.
			p := reflectNew(tt.v)
			err = localtable.Unmarshal(localtable.Entity{}, p)
			if !errors.Is(err, localtable.ErrUnsupportedType) {
				t.Fatalf("Unmarshal err = %v, want ErrUnsupportedType", err)
			}
		})
	}
}

type withBad struct{ Bad map[int]int }

// reflectNew returns a pointer to a new zero value of v's type.
func reflectNew(v any) any { return reflect.New(reflect.TypeOf(v)).Interface() }

func TestMarshalBadArgument(t *testing.T) {
	_, err := localtable.Marshal(42)
	if !errors.Is(err, localtable.ErrUnsupportedType) {
		t.Errorf("Marshal(42) = %v, want ErrUnsupportedType", err)
	}
	wantErr(t, err, "int", "struct")
	_, err = localtable.Marshal(nil)
	wantErr(t, err, "nil")
	_, err = localtable.Marshal((*allTypes)(nil))
	wantErr(t, err, "nil *tests.allTypes")

	e := localtable.Entity{}
	wantErr(t, localtable.Unmarshal(e, allTypes{}), "tests.allTypes", "non-nil pointer")
	wantErr(t, localtable.Unmarshal(e, nil), "nil", "non-nil pointer")
	wantErr(t, localtable.Unmarshal(e, (*allTypes)(nil)), "non-nil pointer")
	var n int
	err = localtable.Unmarshal(e, &n)
	if !errors.Is(err, localtable.ErrUnsupportedType) {
		t.Errorf("Unmarshal(&int) = %v, want ErrUnsupportedType", err)
	}
}

func TestUnmarshalMismatch(t *testing.T) {
	type target struct {
		I32  int32
		I    int
		I8   int8
		U16  uint16
		U32  uint32
		F32  float32
		F64  float64
		S    string
		B    bool
		T    time.Time
		G    localtable.GUID
		Bin  []byte
		PI32 *int32
	}
	tests := []struct {
		name  string
		prop  string
		val   localtable.Value
		parts []string
	}{
		{"Int64 into int32", "I32", localtable.Int64Value(1), []string{`"I32"`, "Edm.Int64", "field I32", "int32", "`table:\",int64\"`"}},
		{"Int64 into *int32", "PI32", localtable.Int64Value(1), []string{`"PI32"`, "Edm.Int64", "field PI32", "int32"}},
		{"String into int", "I", localtable.StringValue("1"), []string{`"I"`, "Edm.String", "field I", "int"}},
		{"Double into int", "I", localtable.DoubleValue(1), []string{"Edm.Double", "int"}},
		{"Int64 into float64", "F64", localtable.Int64Value(1), []string{"Edm.Int64", "float64"}},
		{"Int32 into float32", "F32", localtable.Int32Value(1), []string{"Edm.Int32", "float32"}},
		{"Int32 into string", "S", localtable.Int32Value(1), []string{"Edm.Int32", "string"}},
		{"String into bool", "B", localtable.StringValue("true"), []string{"Edm.String", "bool"}},
		{"String into time", "T", localtable.StringValue("2024"), []string{"Edm.String", "time.Time"}},
		{"String into GUID", "G", localtable.StringValue(testGUID.String()), []string{"Edm.String", "localtable.GUID"}},
		{"String into []byte", "Bin", localtable.StringValue("x"), []string{"Edm.String", "[]uint8"}},
		{"Int32 overflows int8", "I8", localtable.Int32Value(300), []string{`"I8"`, "300", "overflows", "int8"}},
		{"negative into uint16", "U16", localtable.Int32Value(-1), []string{`"U16"`, "-1", "overflows", "uint16"}},
		{"Int64 overflows uint32", "U32", localtable.Int64Value(1 << 32), []string{"4294967296", "overflows", "uint32"}},
		{"Double overflows float32", "F32", localtable.DoubleValue(1e300), []string{"1e+300", "overflows", "float32"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v target
			err := localtable.Unmarshal(localtable.Entity{Properties: localtable.Properties{tt.prop: tt.val}}, &v)
			wantErr(t, err, append([]string{"localtable: Unmarshal", "tests.target"}, tt.parts...)...)
			if errors.Is(err, localtable.ErrUnsupportedType) {
				t.Errorf("mismatch %v wraps ErrUnsupportedType", err)
			}
		})
	}
}

func TestUnmarshalWidening(t *testing.T) {
	type target struct {
		I64  int64
		I    int
		IfL  int
		F64  float64
		I8   int8
		U32  uint32
		U32L uint32
		PI64 *int64
		F32  float32
		V    localtable.Value
	}
	e := localtable.Entity{Properties: localtable.Properties{
		"I64":  localtable.Int32Value(-1),
		"I":    localtable.Int32Value(2),
		"IfL":  localtable.Int64Value(1 << 40),
		"F64":  localtable.Int32Value(math.MaxInt32),
		"I8":   localtable.Int32Value(-128),
		"U32":  localtable.Int32Value(math.MaxInt32),
		"U32L": localtable.Int64Value(math.MaxUint32),
		"PI64": localtable.Int32Value(5),
		"F32":  localtable.DoubleValue(math.Inf(-1)),
		"V":    localtable.GUIDValue(testGUID),
	}}
	var got target
	unmarshalOK(t, e, &got)
	want := target{
		I64: -1, I: 2, IfL: 1 << 40, F64: math.MaxInt32, I8: -128, U32: math.MaxInt32,
		U32L: math.MaxUint32, PI64: ptr(int64(5)), F32: float32(math.Inf(-1)), V: localtable.GUIDValue(testGUID),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unmarshal mismatch (-want +got):\n%s", diff)
	}
}

func TestUnmarshalResetsAndIgnores(t *testing.T) {
	type target struct {
		A string
		B int64
		C *bool
		D []byte
		E localtable.Value
		F string `table:"-"`
	}
	v := target{A: "old", B: 9, C: ptr(true), D: []byte("old"), E: localtable.Int32Value(1), F: "kept"}
	e := localtable.Entity{Properties: localtable.Properties{
		"A":       localtable.StringValue("new"),
		"B":       {}, // null: absent
		"Unknown": localtable.StringValue("ignored"),
		"F":       localtable.StringValue("not mapped"),
	}}
	unmarshalOK(t, e, &v)
	want := target{A: "new", F: "kept"}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("Unmarshal mismatch (-want +got):\n%s", diff)
	}
}

func TestMarshalNullAndEmptyBinary(t *testing.T) {
	type bins struct {
		Nil   []byte
		Empty []byte
		Null  localtable.Value
		PNull *localtable.Value
	}
	got := marshalOK(t, bins{Empty: []byte{}, PNull: &localtable.Value{}})
	want := localtable.Properties{"Empty": localtable.BinaryValue(nil)}
	if diff := cmp.Diff(want, got.Properties); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	var back bins
	unmarshalOK(t, got, &back)
	if back.Nil != nil || back.Empty == nil || len(back.Empty) != 0 || back.PNull != nil {
		t.Errorf("Unmarshal = %#v, want Nil nil, Empty non-nil and empty, PNull nil", back)
	}
}

func TestMarshalDateTime(t *testing.T) {
	type times struct {
		T time.Time
		Z time.Time
		O time.Time `table:",omitempty"`
	}
	local := time.FixedZone("UTC+5", 5*3600)
	in := times{T: time.Date(2024, 2, 29, 23, 59, 59, 123456789, local)}
	got := marshalOK(t, in)

	// Truncated to 100 ns; the zero time is stored (ticks 0, year 1), and
	// omitempty leaves it out.
	want := localtable.Properties{
		"T": localtable.DateTimeValue(time.Date(2024, 2, 29, 18, 59, 59, 123456700, time.UTC)),
		"Z": localtable.DateTimeTicksValue(0),
	}
	if diff := cmp.Diff(want, got.Properties); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	if got.Properties["Z"].Time().Before(localtable.MinDateTime) != true {
		t.Errorf("zero time is within the service's range")
	}

	var back times
	unmarshalOK(t, got, &back)
	if back.T.Nanosecond() != 123456700 {
		t.Errorf("Nanosecond = %d, want 123456700", back.T.Nanosecond())
	}
	if back.T.Location() != time.UTC {
		t.Errorf("Location = %v, want UTC", back.T.Location())
	}
	if !back.T.Equal(in.T.Truncate(100)) {
		t.Errorf("T = %v, want %v", back.T, in.T.Truncate(100))
	}
	if !back.Z.IsZero() || back.Z != (time.Time{}) {
		t.Errorf("Z = %#v, want the zero time.Time", back.Z)
	}
	if !back.O.IsZero() {
		t.Errorf("O = %v, want zero", back.O)
	}
}

func TestMarshalConcurrent(t *testing.T) {
	type fresh struct {
		A string
		B int32
		Base
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := fresh{A: "a", B: int32(i), Base: Base{PartitionKey: "p"}}
			e, err := localtable.Marshal(in)
			if err != nil {
				t.Error(err)
				return
			}
			var out fresh
			if err := localtable.Unmarshal(e, &out); err != nil {
				t.Error(err)
				return
			}
			if diff := cmp.Diff(in, out); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}()
	}
	wg.Wait()
}

// bench is a 10-field struct.
type bench struct {
	PartitionKey string
	RowKey       string
	Name         string
	Email        string
	Age          int32
	Score        float64
	Visits       int64
	Active       bool
	Joined       time.Time
	ID           localtable.GUID
}

var benchValue = bench{
	PartitionKey: "users", RowKey: "0001", Name: "Ada", Email: "ada@example.com",
	Age: 36, Score: 99.5, Visits: 1 << 33, Active: true, Joined: testTime, ID: testGUID,
}

func BenchmarkMarshal(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := localtable.Marshal(&benchValue); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	e := marshalOK(b, benchValue)
	b.ReportAllocs()
	var v bench
	for b.Loop() {
		if err := localtable.Unmarshal(e, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMarshalStructWithoutMapping: a struct none of whose fields maps to a
// key or a property (time.Time, Value, a struct with no exported fields or
// with every field skipped, or only a Timestamp or an ETag) is not an
// entity: Marshal and Unmarshal refuse it with ErrUnsupportedType, naming
// the type, rather than map it to an empty entity. A struct with only the
// keys, or only properties, is an entity.
func TestMarshalStructWithoutMapping(t *testing.T) {
	type unexported struct{ a, b string }
	type skipped struct {
		A string `table:"-"`
	}
	type onlySystem struct {
		Timestamp time.Time
		Tag       localtable.ETag
	}
	for _, v := range []any{
		time.Now(), &time.Time{}, localtable.StringValue("x"), struct{}{}, unexported{"a", "b"}, skipped{"a"}, onlySystem{},
		struct{ sync.Mutex }{},
	} {
		name := reflect.TypeOf(v).String()
		e, err := localtable.Marshal(v)
		if !errors.Is(err, localtable.ErrUnsupportedType) {
			t.Errorf("Marshal(%s) = %+v, %v; want ErrUnsupportedType", name, e, err)
			continue
		}
		wantErr(t, err, strings.TrimPrefix(name, "*"), "no field")
		p := v
		if reflect.TypeOf(v).Kind() != reflect.Pointer {
			p = reflectNew(v)
		}
		if err := localtable.Unmarshal(localtable.Entity{PartitionKey: "p"}, p); !errors.Is(err, localtable.ErrUnsupportedType) {
			t.Errorf("Unmarshal into %s = %v, want ErrUnsupportedType", name, err)
		}
	}
	for _, v := range []any{
		struct{ PartitionKey, RowKey string }{"p", "r"},
		struct{ N int32 }{1},
		struct{ Opt *string }{},
	} {
		if _, err := localtable.Marshal(v); err != nil {
			t.Errorf("Marshal(%T): %v", v, err)
		}
	}
}
