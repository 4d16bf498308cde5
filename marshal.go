package localtable

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrUnsupportedType is wrapped by the errors of [Marshal] and [Unmarshal]
// for a Go type that has no table mapping: a struct field of an unsupported
// type, a key field that is not a string, an argument that is not a
// struct, or a struct with no field that maps to a key or a property. Test
// for it with errors.Is.
var ErrUnsupportedType = errors.New("localtable: unsupported type")

// Marshal returns the entity that the struct v (or the struct v points to)
// describes. Each exported field becomes a property named after the field,
// with the Edm type natural to the field's Go type:
//
//	string                              Edm.String
//	int8, int16, int32, uint8, uint16   Edm.Int32
//	int, int64, uint32                  Edm.Int64
//	float32, float64                    Edm.Double
//	bool                                Edm.Boolean
//	time.Time                           Edm.DateTime (UTC, truncated to 100 ns)
//	GUID                                Edm.Guid
//	[]byte                              Edm.Binary (a nil slice is absent)
//	Value                               the value as it is (null is absent)
//
// Types defined on these (type Status int32) map as their underlying type.
// A pointer to one of these types maps like the type itself, and a nil
// pointer is an absent property. Other types (uint, uint64, maps, slices
// other than []byte, channels, functions, interfaces, arrays other than
// GUID, and structs other than time.Time and Value) are an error wrapping
// [ErrUnsupportedType], naming the struct, the field and its type.
//
// v must describe an entity: a struct none of whose fields maps to a key
// or a property (one with no exported fields, such as time.Time or Value,
// or whose fields are all skipped, or only a Timestamp and an ETag) is an
// error wrapping [ErrUnsupportedType], not an empty entity. A struct of
// properties alone (the keys empty) or of the keys alone is an entity.
//
// The field tag "table" changes the mapping. Its form is
// `table:"Name,option,..."`: Name, if not empty, is the property name, and
// the options are:
//
//	omitempty  leave the property out when the field has its zero value
//	           (zero number, false, "", a nil or empty []byte, a zero
//	           time.Time, a zero GUID, a null Value, a nil pointer)
//	int32      store an integer field as Edm.Int32 (an error if the value
//	           does not fit)
//	int64      store an integer field as Edm.Int64
//
// The tag `table:"-"` skips the field. Property names are not checked here;
// writing the entity does that.
//
// Anonymous (embedded) struct fields, and pointers to structs, are flattened
// as encoding/json does: their fields are promoted, and a field at a
// shallower depth hides one of the same name deeper down; of fields at the
// same depth a tagged one wins, and two fields that still collide are an
// error. A nil embedded pointer contributes no properties. An embedded
// field with a tag name is not flattened, and being a struct, is an error.
//
// Some fields are special:
//   - A field whose property name is "PartitionKey" or "RowKey" sets the key;
//     it must be a string.
//   - A field named "Timestamp" must be a time.Time; Marshal ignores it, and
//     Unmarshal sets it to [Entity.Timestamp].
//   - A field of type [ETag], whatever its name, is copied to [Entity.ETag],
//     and set from it by Unmarshal.
//
// A zero time.Time (January 1 of year 1) is stored as such, and writing it
// fails with OutOfRangeInput: the service's DateTime range begins in 1601.
// Use omitempty or a *time.Time for a time that may be unset.
//
// The returned entity's Properties is never nil. Marshal is safe for
// concurrent use; it caches what it learns of each struct type.
func Marshal(v any) (Entity, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return Entity{}, fmt.Errorf("localtable: Marshal(nil %v)", rv.Type())
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return Entity{}, fmt.Errorf("%w: Marshal of %v: want a struct or a pointer to a struct", ErrUnsupportedType, typeString(v))
	}
	p := planFor(rv.Type())
	if p.err != nil {
		return Entity{}, p.err
	}
	e := Entity{Properties: make(Properties, len(p.fields))}
	for i := range p.fields {
		f := &p.fields[i]
		fv, ok := fieldToRead(rv, f.index)
		if !ok {
			continue
		}
		switch f.role {
		case rolePartitionKey:
			e.PartitionKey = fv.String()
			continue
		case roleRowKey:
			e.RowKey = fv.String()
			continue
		case roleETag:
			e.ETag = ETag(fv.String())
			continue
		case roleTimestamp:
			continue
		}
		if f.ptr {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		} else if f.omitEmpty && f.isEmpty(fv) {
			continue
		}
		val, err := f.encode(p.typ, fv)
		if err != nil {
			return Entity{}, err
		}
		if !val.IsNull() {
			e.Properties[f.name] = val
		}
	}
	return e, nil
}

// Unmarshal stores the entity e in the struct that v points to, mapping
// properties to fields as [Marshal] describes. Properties with no field are
// ignored; a struct with no field for a key or a property is an error
// wrapping [ErrUnsupportedType], as for Marshal.
//
// Unmarshal sets every mapped field: a field whose property is absent (or
// null) is set to its zero value, a pointer field to nil. This differs from
// encoding/json, which leaves such fields alone, so that a struct reused for
// a sequence of entities holds exactly the last one. A nil embedded struct
// pointer is allocated when one of its fields has a property (an error if
// its type is unexported, as encoding/json does).
//
// A property must have the Edm type of its field, with these exceptions:
// an Edm.Int32 fills any integer field (and a float64) if the value fits, an
// Edm.Int64 fills an int, int64 or uint32 field (or one tagged int64) if
// the value fits, and any property fills a [Value] field. A time.Time field
// receives the time in UTC. Other combinations are an error naming the
// property, its Edm type, and the field and its Go type; Unmarshal then
// stops, leaving v partly filled.
//
// Unmarshal is safe for concurrent use with distinct v.
func Unmarshal(e Entity, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("localtable: Unmarshal into %s: want a non-nil pointer to a struct", typeString(v))
	}
	rv = rv.Elem()
	if rv.Kind() != reflect.Struct {
		return fmt.Errorf("%w: Unmarshal into %s: want a non-nil pointer to a struct", ErrUnsupportedType, typeString(v))
	}
	p := planFor(rv.Type())
	if p.err != nil {
		return p.err
	}
	for i := range p.fields {
		f := &p.fields[i]
		switch f.role {
		case rolePartitionKey, roleRowKey, roleETag, roleTimestamp:
			fv, err := fieldToWrite(rv, f, p.typ)
			if err != nil {
				return err
			}
			switch f.role {
			case rolePartitionKey:
				fv.SetString(e.PartitionKey)
			case roleRowKey:
				fv.SetString(e.RowKey)
			case roleETag:
				fv.SetString(string(e.ETag))
			case roleTimestamp:
				*fv.Addr().Interface().(*time.Time) = e.Timestamp
			}
			continue
		}
		val, ok := e.Properties[f.name]
		if !ok || val.IsNull() {
			if fv, ok := fieldToRead(rv, f.index); ok {
				fv.SetZero()
			}
			continue
		}
		fv, err := fieldToWrite(rv, f, p.typ)
		if err != nil {
			return err
		}
		if f.ptr {
			nv := reflect.New(f.typ)
			if err := f.decode(p.typ, nv.Elem(), val); err != nil {
				return err
			}
			fv.Set(nv)
			continue
		}
		if err := f.decode(p.typ, fv, val); err != nil {
			return err
		}
	}
	return nil
}

func typeString(v any) string {
	if v == nil {
		return "nil"
	}
	return reflect.TypeOf(v).String()
}

// role says what a field maps to.
type role uint8

const (
	roleProperty role = iota
	rolePartitionKey
	roleRowKey
	roleTimestamp
	roleETag
)

// goKind is how a field's Go type is read and written.
type goKind uint8

const (
	goString goKind = iota
	goInt           // signed integers
	goUint          // unsigned integers
	goFloat
	goBool
	goTime
	goGUID
	goBytes
	goValue
)

var (
	timeType  = reflect.TypeFor[time.Time]()
	guidType  = reflect.TypeFor[GUID]()
	valueType = reflect.TypeFor[Value]()
	etagType  = reflect.TypeFor[ETag]()
)

// field is the mapping of one struct field, found once per type.
type field struct {
	name      string       // property name
	goName    string       // the field's path for messages, such as "Inner.Age"
	index     []int        // path of field indexes from the outer struct
	depth     int          // len(index)-1, for dominance
	tagged    bool         // the name comes from a tag
	role      role         // what the field maps to
	ptr       bool         // the field is a *typ
	typ       reflect.Type // the field's type, or its element type if ptr
	gk        goKind       // how typ is read and written
	edm       Kind         // the Edm type Marshal writes
	omitEmpty bool         // the omitempty option
}

// plan is the mapping of one struct type.
type plan struct {
	typ    reflect.Type
	fields []field // in field order
	err    error   // the type cannot be mapped
}

var plans sync.Map // reflect.Type → *plan

func planFor(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	p := makePlan(t)
	actual, _ := plans.LoadOrStore(t, p)
	return actual.(*plan)
}

func makePlan(t reflect.Type) *plan {
	p := &plan{typ: t}
	var all []field
	if err := collectFields(t, t, nil, "", map[reflect.Type]bool{t: true}, &all); err != nil {
		p.err = err
		return p
	}
	// Choose, for each name, the dominant field as encoding/json does.
	byName := make(map[string][]int)
	var order []string
	for i, f := range all {
		key := f.name
		if f.role == roleETag {
			key = "\x00ETag" // any field of type ETag, whatever its name
		}
		if _, ok := byName[key]; !ok {
			order = append(order, key)
		}
		byName[key] = append(byName[key], i)
	}
	for _, key := range order {
		idx := byName[key]
		best := -1
		ambiguous := false
		for _, i := range idx {
			f := &all[i]
			switch {
			case best < 0, f.depth < all[best].depth,
				f.depth == all[best].depth && f.tagged && !all[best].tagged:
				best, ambiguous = i, false
			case f.depth == all[best].depth && f.tagged == all[best].tagged:
				ambiguous = true
			}
		}
		if ambiguous {
			var names []string
			for _, i := range idx {
				if all[i].depth == all[best].depth && all[i].tagged == all[best].tagged {
					names = append(names, all[i].goName)
				}
			}
			what := fmt.Sprintf("property %q", all[best].name)
			if all[best].role == roleETag {
				what = "the ETag"
			}
			p.err = fmt.Errorf("localtable: struct %v: fields %s collide on %s", t, strings.Join(names, " and "), what)
			return p
		}
		p.fields = append(p.fields, all[best])
	}
	// A struct that maps to nothing (time.Time, no exported fields) is
	// not an entity: mapping it to an empty one would hide the mistake.
	if !slices.ContainsFunc(p.fields, func(f field) bool { return f.role != roleTimestamp && f.role != roleETag }) {
		p.err = fmt.Errorf("%w: struct %v has no field that maps to a key or a property: an entity's struct needs exported fields (PartitionKey, RowKey, properties)", ErrUnsupportedType, t)
	}
	return p
}

// collectFields appends the fields of struct type t, reached from root
// through index, to all. onPath holds the struct types being flattened, to
// stop embedding cycles.
func collectFields(root, t reflect.Type, index []int, prefix string, onPath map[reflect.Type]bool, all *[]field) error {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("table")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if !sf.IsExported() && et.Kind() != reflect.Struct {
				continue
			}
			if name == "" && et.Kind() == reflect.Struct && et != timeType && et != valueType {
				if onPath[et] {
					continue
				}
				onPath[et] = true
				err := collectFields(root, et, append(index[:len(index):len(index)], i), prefix+sf.Name+".", onPath, all)
				delete(onPath, et)
				if err != nil {
					return err
				}
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		f := field{
			name:   sf.Name,
			goName: prefix + sf.Name,
			index:  append(index[:len(index):len(index)], i),
			depth:  len(index),
			tagged: name != "",
		}
		if name != "" {
			f.name = name
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("localtable: struct %v field %s: %s", root, f.goName, fmt.Sprintf(format, args...))
		}
		var typeOpt Kind
		if hasTag && opts != "" {
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty":
					f.omitEmpty = true
				case "int32":
					typeOpt = KindInt32
				case "int64":
					typeOpt = KindInt64
				default:
					return fail("unknown tag option %q in `table:%q`", o, tag)
				}
			}
		}
		if typeOpt != KindNull && (ft == etagType || f.name == PartitionKeyName || f.name == RowKeyName || f.name == TimestampName) {
			return fail("tag option %s needs an integer property field", typeOpt)
		}
		if ft == etagType {
			f.role, f.typ, f.gk = roleETag, ft, goString
			*all = append(*all, f)
			continue
		}
		switch f.name {
		case PartitionKeyName, RowKeyName:
			if ft.Kind() != reflect.String {
				return fmt.Errorf("%w: struct %v field %s: %s must be a string, not %v", ErrUnsupportedType, root, f.goName, f.name, ft)
			}
			f.role, f.typ, f.gk = rolePartitionKey, ft, goString
			if f.name == RowKeyName {
				f.role = roleRowKey
			}
			*all = append(*all, f)
			continue
		case TimestampName:
			if ft != timeType {
				return fmt.Errorf("%w: struct %v field %s: Timestamp must be a time.Time, not %v", ErrUnsupportedType, root, f.goName, ft)
			}
			f.role, f.typ, f.gk = roleTimestamp, ft, goTime
			*all = append(*all, f)
			continue
		}
		if ft.Kind() == reflect.Pointer {
			f.ptr = true
			ft = ft.Elem()
		}
		f.typ = ft
		var ok bool
		f.gk, f.edm, ok = natural(ft)
		if !ok || ft == etagType {
			return fmt.Errorf("%w: struct %v field %s has type %v", ErrUnsupportedType, root, f.goName, sf.Type)
		}
		if typeOpt != KindNull {
			if f.gk != goInt && f.gk != goUint {
				return fail("tag option %s needs an integer field, not %v", typeOpt, sf.Type)
			}
			f.edm = typeOpt
		}
		*all = append(*all, f)
	}
	return nil
}

// natural returns how values of t are read and written and the Edm type
// they map to, or false if t has no mapping.
func natural(t reflect.Type) (goKind, Kind, bool) {
	switch t {
	case timeType:
		return goTime, KindDateTime, true
	case guidType:
		return goGUID, KindGUID, true
	case valueType:
		return goValue, KindNull, true
	}
	switch t.Kind() {
	case reflect.String:
		return goString, KindString, true
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return goInt, KindInt32, true
	case reflect.Int, reflect.Int64:
		return goInt, KindInt64, true
	case reflect.Uint8, reflect.Uint16:
		return goUint, KindInt32, true
	case reflect.Uint32:
		return goUint, KindInt64, true
	case reflect.Float32, reflect.Float64:
		return goFloat, KindDouble, true
	case reflect.Bool:
		return goBool, KindBool, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return goBytes, KindBinary, true
		}
	}
	return 0, 0, false
}

// isEmpty reports whether fv, of a non-pointer field, is empty for
// omitempty.
func (f *field) isEmpty(fv reflect.Value) bool {
	switch f.gk {
	case goTime:
		return readTime(fv).IsZero()
	case goBytes:
		return fv.Len() == 0
	case goValue:
		return readValue(fv).IsNull()
	}
	return fv.IsZero()
}

// encode returns the property value of fv, the field's value or the value
// its pointer points to.
func (f *field) encode(t reflect.Type, fv reflect.Value) (Value, error) {
	switch f.gk {
	case goString:
		return StringValue(fv.String()), nil
	case goInt:
		n := fv.Int()
		if f.edm == KindInt32 {
			if n < math.MinInt32 || n > math.MaxInt32 {
				return Value{}, fmt.Errorf("localtable: Marshal: struct %v field %s: %d overflows Edm.Int32", t, f.goName, n)
			}
			return Int32Value(int32(n)), nil
		}
		return Int64Value(n), nil
	case goUint:
		n := fv.Uint()
		if f.edm == KindInt32 {
			if n > math.MaxInt32 {
				return Value{}, fmt.Errorf("localtable: Marshal: struct %v field %s: %d overflows Edm.Int32", t, f.goName, n)
			}
			return Int32Value(int32(n)), nil
		}
		return Int64Value(int64(n)), nil // at most a uint32
	case goFloat:
		return DoubleValue(fv.Float()), nil
	case goBool:
		return BoolValue(fv.Bool()), nil
	case goTime:
		return DateTimeValue(readTime(fv)), nil
	case goGUID:
		return GUIDValue(readGUID(fv)), nil
	case goBytes:
		if fv.IsNil() {
			return Value{}, nil
		}
		return BinaryValue(fv.Bytes()), nil
	case goValue:
		return readValue(fv), nil
	}
	panic("localtable: unreachable")
}

// decode stores val in fv, a settable value of type f.typ.
func (f *field) decode(t reflect.Type, fv reflect.Value, val Value) error {
	k := val.Kind()
	switch f.gk {
	case goString:
		if k == KindString {
			fv.SetString(val.String())
			return nil
		}
	case goInt, goUint:
		var n int64
		switch {
		case k == KindInt32:
			n = int64(val.Int32())
		case k == KindInt64 && f.edm == KindInt64:
			n = val.Int64()
		default:
			return f.mismatch(t, val)
		}
		if f.gk == goInt {
			if fv.OverflowInt(n) {
				return f.overflow(t, val)
			}
			fv.SetInt(n)
		} else {
			if n < 0 || fv.OverflowUint(uint64(n)) {
				return f.overflow(t, val)
			}
			fv.SetUint(uint64(n))
		}
		return nil
	case goFloat:
		switch {
		case k == KindDouble:
			d := val.Double()
			if fv.OverflowFloat(d) {
				return f.overflow(t, val)
			}
			fv.SetFloat(d)
			return nil
		case k == KindInt32 && fv.Kind() == reflect.Float64:
			fv.SetFloat(float64(val.Int32()))
			return nil
		}
	case goBool:
		if k == KindBool {
			fv.SetBool(val.Bool())
			return nil
		}
	case goTime:
		if k == KindDateTime {
			*fv.Addr().Interface().(*time.Time) = val.Time()
			return nil
		}
	case goGUID:
		if k == KindGUID {
			*fv.Addr().Interface().(*GUID) = val.GUID()
			return nil
		}
	case goBytes:
		if k == KindBinary {
			fv.SetBytes(val.Binary())
			return nil
		}
	case goValue:
		*fv.Addr().Interface().(*Value) = val
		return nil
	}
	return f.mismatch(t, val)
}

func (f *field) mismatch(t reflect.Type, val Value) error {
	hint := ""
	if val.Kind() == KindInt64 && (f.gk == goInt || f.gk == goUint) {
		hint = "; tag the field `table:\",int64\"` to accept Edm.Int64 values that fit"
	}
	return fmt.Errorf("localtable: Unmarshal: property %q is %v, which cannot be stored in struct %v field %s of type %v%s",
		f.name, val.Kind(), t, f.goName, f.typ, hint)
}

func (f *field) overflow(t reflect.Type, val Value) error {
	return fmt.Errorf("localtable: Unmarshal: property %q %v value %s overflows struct %v field %s of type %v",
		f.name, val.Kind(), val.String(), t, f.goName, f.typ)
}

// readTime, readGUID and readValue read struct-typed fields without
// allocating when fv is addressable.
func readTime(fv reflect.Value) time.Time {
	if fv.CanAddr() {
		return *fv.Addr().Interface().(*time.Time)
	}
	return fv.Interface().(time.Time)
}

func readGUID(fv reflect.Value) GUID {
	if fv.CanAddr() {
		return *fv.Addr().Interface().(*GUID)
	}
	return fv.Interface().(GUID)
}

func readValue(fv reflect.Value) Value {
	if fv.CanAddr() {
		return *fv.Addr().Interface().(*Value)
	}
	return fv.Interface().(Value)
}

// fieldToRead returns the field of v at index, or false if the path goes
// through a nil embedded pointer.
func fieldToRead(v reflect.Value, index []int) (reflect.Value, bool) {
	if len(index) == 1 {
		return v.Field(index[0]), true
	}
	for n, i := range index {
		if n > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v, true
}

// fieldToWrite returns the field of the addressable struct v at f.index,
// allocating nil embedded pointers on the way.
func fieldToWrite(v reflect.Value, f *field, t reflect.Type) (reflect.Value, error) {
	if len(f.index) == 1 {
		return v.Field(f.index[0]), nil
	}
	for n, i := range f.index {
		if n > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, fmt.Errorf("localtable: Unmarshal: struct %v field %s: cannot set embedded pointer to unexported struct %v",
						t, f.goName, v.Type().Elem())
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v, nil
}
