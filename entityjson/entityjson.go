package entityjson

import (
	"encoding/json"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/edmfmt"
)

// Options say what Append writes besides the keys and
// the custom properties.
type Options struct {
	// System adds odata.etag and Timestamp (annotated Edm.DateTime), as a
	// response carries them. Readers that write the entity ignore both.
	System bool
	// Annotate annotates every Int32 and Double value too
	// ("Edm.Int32", "Edm.Double"), for clients that re-encode the JSON
	// they are given: aztables reads an entity into a map[string]any,
	// which turns the Double 1.0 into the number 1, an Int32 unannotated.
	Annotate bool
}

// Append appends e to b as one JSON object of the service's
// entity format: PartitionKey, RowKey, then the custom properties sorted
// by name, each annotated with "Name@odata.type" where its JSON form does
// not name its type (Edm.Int64, Edm.Binary, Edm.DateTime, Edm.Guid, and a
// non-finite Edm.Double), as at odata=minimalmetadata. Int32 and Double
// stay apart without annotations: a Double is always written with a
// fraction or an exponent ("1.0", "1e+21"). Decode reads it back
// to an equal entity, so every Edm value round-trips exactly. Null
// properties are not written.
func Append(b []byte, e *localtable.Entity, opts *Options) []byte {
	b = append(b, `{"PartitionKey":`...)
	b = AppendString(b, e.PartitionKey)
	b = append(b, `,"RowKey":`...)
	b = AppendString(b, e.RowKey)
	if opts != nil && opts.System {
		if e.ETag != "" {
			b = append(b, `,"odata.etag":`...)
			b = AppendString(b, string(e.ETag))
		}
		if !e.Timestamp.IsZero() {
			b = append(b, `,"Timestamp@odata.type":"Edm.DateTime","Timestamp":`...)
			b = AppendString(b, edmfmt.DateTime7(e.Timestamp))
		}
	}
	for _, name := range sortedNames(e.Properties) {
		v := e.Properties[name]
		if v.IsNull() {
			continue
		}
		ann := Annotation(v)
		if ann == "" && opts != nil && opts.Annotate && (v.Kind() == localtable.KindInt32 || v.Kind() == localtable.KindDouble) {
			ann = v.Kind().String()
		}
		if ann != "" {
			b = append(b, ',')
			b = AppendString(b, name+AnnotationSuffix)
			b = append(b, ':')
			b = AppendString(b, ann)
		}
		b = append(b, ',')
		b = AppendString(b, name)
		b = append(b, ':')
		b = AppendValue(b, v)
	}
	return append(b, '}')
}

// Decode reads one entity from a JSON object of the service's
// entity format, as the service reads a request body: "Name@odata.type"
// annotations type the values, unannotated numbers are Edm.Int32 when
// integral and in range and Edm.Double otherwise, null drops a property,
// and odata.* members are ignored. Both keys are required. With system,
// odata.etag and Timestamp, when present, are read into ETag and
// Timestamp (as a response carries them); otherwise they are ignored, as a
// write ignores them. Errors are *localtable.Error values with the
// service's codes (InvalidInput, PropertiesNeedValue,
// DuplicatePropertiesSpecified). A string of invalid UTF-8, or with a lone
// surrogate escape such as "\ud800", is refused (InvalidInput naming the
// property; PropertyNameInvalid for a member name), never read as U+FFFD.
func Decode(data []byte, system bool) (localtable.Entity, error) {
	keys, vals, ok := scanFlatObject(data, false)
	if !ok {
		var err error
		if keys, vals, err = ReadObject(data); err != nil {
			return localtable.Entity{}, err
		}
	}
	e, _, err := decodeMembers(keys, vals, true, false)
	if err != nil || !system {
		return e, err
	}
	if raw, ok := vals["odata.etag"]; ok {
		var tag string
		if json.Unmarshal(raw, &tag) == nil {
			e.ETag = localtable.ETag(tag)
		}
	}
	if raw, ok := vals[localtable.TimestampName]; ok {
		v, err := decodeValue(localtable.TimestampName, raw, localtable.KindDateTime.String(), false)
		if err != nil {
			return e, err
		}
		if !v.IsNull() {
			e.Timestamp = v.Time()
		}
	}
	return e, nil
}

// ParseValueText reads text as a value of kind, as the service reads a
// JSON string annotated with that Edm type: integers in decimal, Double
// also as NaN, Infinity and -Infinity, Boolean as true or false, DateTime
// in RFC 3339 (UTC when it names no zone), Guid in its 8-4-4-4-12 form,
// Binary in base64. name names the property in errors, which are
// *localtable.Error values (InvalidInput).
func ParseValueText(name, text string, kind localtable.Kind) (localtable.Value, error) {
	if kind == localtable.KindString {
		return localtable.StringValue(text), nil
	}
	raw := AppendString(nil, text)
	return decodeValue(name, raw, kind.String(), false)
}

// FormatValueText returns the text of v that ParseValueText reads back to
// an equal value: the JSON string form of the service's format without
// quotes (a Double with the shortest digits that round-trip, or NaN,
// Infinity, -Infinity; a DateTime with up to 7 fractional digits). A null
// Value is "".
func FormatValueText(v localtable.Value) string {
	switch v.Kind() {
	case localtable.KindNull:
		return ""
	case localtable.KindString:
		return v.String()
	case localtable.KindDouble:
		return edmfmt.Double(v.Double())
	}
	s := string(AppendValue(nil, v))
	if strings.HasPrefix(s, `"`) {
		var out string
		if json.Unmarshal([]byte(s), &out) == nil {
			return out
		}
	}
	return s
}
