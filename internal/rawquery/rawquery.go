// Package rawquery lets the server write the entities of a query straight
// from their stored records, without decoding each into an Entity and its
// Properties map, which the public API has no call for: a query's
// response is written entity by entity as the scan finds them.
package rawquery

// Query runs a query of a *localtable.Table as its Query method does, but
// hands each entity the page would hold to visit, as stored, and returns
// the page without its Entities. Its type is
//
//	func(t *localtable.Table, ctx context.Context, opts localtable.QueryOptions,
//		visit func(pk, rk string, ticks int64, props iter.Seq2[string, localtable.Value]) error,
//	) (localtable.QueryPage, error)
//
// visit receives an entity's keys, its Timestamp in ticks, and its custom
// properties in name order. They, and the String, Binary and Guid Values,
// are valid only during the call; an error visit returns ends the query
// with it. opts.Select must be nil. Package localtable sets Query when it
// is initialized.
var Query any
