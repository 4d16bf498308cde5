package server

import "github.com/localtable/localtable"

// DecodeEntity reads an entity from the service's JSON entity format, as
// the server reads an Insert Entity body: PartitionKey and RowKey as
// strings, other values typed by their "Name@odata.type" annotations or,
// without one, by their JSON type (an integer that fits is Edm.Int32, any
// other number Edm.Double, true and false Edm.Boolean, a string
// Edm.String). Timestamp, odata.* members and null values are ignored.
// Both keys are required; every error is a *localtable.Error with the
// service's code, as the server would answer it.
func DecodeEntity(body []byte) (localtable.Entity, error) {
	return decodeEntity(body, true)
}

// AppendEntityJSON appends e in the service's JSON entity format, as a
// query answers at odata=minimalmetadata without its odata.* members:
// PartitionKey, RowKey, then Timestamp when withTimestamp, then the
// properties sorted by name, with the annotations the service writes
// (Edm.Int64, Edm.DateTime, Edm.Guid, Edm.Binary, and Edm.Double for NaN
// and the infinities). A Double is written with a fraction ("2.0"), so
// DecodeEntity reads back every value with its type.
func AppendEntityJSON(b []byte, e *localtable.Entity, withTimestamp bool) []byte {
	b = append(b, `{"PartitionKey":`...)
	b = appendJSONString(b, e.PartitionKey)
	b = append(b, `,"RowKey":`...)
	b = appendJSONString(b, e.RowKey)
	if withTimestamp {
		b = append(b, `,"Timestamp":`...)
		b = appendJSONString(b, localtable.FormatDateTime7(e.Timestamp))
	}
	for _, name := range sortedNames(e.Properties) {
		v := e.Properties[name]
		if v.IsNull() {
			continue
		}
		if ann := annotation(v, metaMinimal); ann != "" {
			b = append(b, ',')
			b = appendJSONString(b, name+annotationSuffix)
			b = append(b, ':')
			b = appendJSONString(b, ann)
		}
		b = append(b, ',')
		b = appendJSONString(b, name)
		b = append(b, ':')
		b = appendValue(b, v)
	}
	return append(b, '}')
}
