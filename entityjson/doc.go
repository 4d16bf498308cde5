// Package entityjson is the Azure Table service's JSON format for one
// entity (docs/protocol.md §3), read and written exactly as the service reads
// and writes it: the request bodies of Insert, Update and Merge and the
// entities of query responses.
//
// Every tool that moves entities as JSON shares this one codec: the
// server's handlers, the command's JSONL import and export and its
// remote client, and localtabletest's state files.
//
// An entity is a JSON object of PartitionKey, RowKey and the custom
// properties. A value's JSON form names its type where it can (a string,
// a Boolean, an Int32 as an integral number, a Double always with a
// fraction or an exponent); the other types carry an annotation member,
// "Name@odata.type": "Edm.Int64" (Edm.Binary, Edm.DateTime, Edm.Guid,
// Edm.Int64, and the Double values NaN, Infinity and -Infinity, which
// travel as strings):
//
//	{"PartitionKey":"p","RowKey":"r","Count":7,"Ratio":0.5,
//	 "Big@odata.type":"Edm.Int64","Big":"9007199254740993"}
//
// Append writes an entity, Decode reads one back to an equal entity, so
// every Edm value round-trips exactly. DecodeRequest and ReadObject read
// request bodies as the server does; AppendString, AppendValue and
// Annotation are the pieces the server's responses are built from.
// ParseValueText and FormatValueText are a value's text without JSON
// quoting, for formats such as CSV that type a column apart from its
// values.
//
// Errors are *localtable.Error values with the service's error codes
// (InvalidInput, PropertiesNeedValue, DuplicatePropertiesSpecified), ready
// to be answered on the wire (with server.HTTPStatus of the code).
package entityjson
