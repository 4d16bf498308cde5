// Package localtable is the Azure Table Storage data model as an embeddable
// Go library: an in-process table store over a pluggable ordered key-value
// engine (in memory, pebble on disk, or etcd, which several processes on
// several machines share: see Options.Engine).
//
// There are only a few types in localtable: Account, Table, Entity and
// Value. An Account holds tables; a Table holds entities ordered by
// (PartitionKey, RowKey); an Entity carries typed properties, each a Value
// of one of the eight Edm types. Every rule of the service's data model is
// enforced, and every violation is an *Error carrying the service's error
// code, so code tested against localtable behaves as it will against Azure.
package localtable
