// Package rawquery lets the server write the entities of a query straight
// from their stored records, without decoding each into an Entity and its
// Properties map, which the public API has no call for: a query's
// response is written entity by entity as the scan finds them.
//
// Package localtable provides the query (Set, in its init) and package
// server uses it (Get). This package is below localtable, which imports
// it, so it cannot name localtable's types: Func takes them as type
// parameters, and each side names them in its call, where the compiler
// checks its function against Func. The two calls must agree on them;
// Get panics, when the server's package is initialized, if they do not.
package rawquery

import (
	"context"
	"fmt"
	"iter"
)

// Visit receives one entity of a query as stored: its keys, its Timestamp
// in ticks, and its custom properties in name order, of value type V
// (localtable.Value). They, and the String, Binary and Guid values, are
// valid only during the call; an error it returns ends the query with it.
type Visit[V any] = func(pk, rk string, ticks int64, props iter.Seq2[string, V]) error

// Func runs a query of table t (a *localtable.Table) as its Query method
// does with opts (a localtable.QueryOptions whose Select is nil), but
// hands each entity the page would hold to visit, as stored, and returns
// the page (a localtable.QueryPage) without its Entities.
type Func[T, O, P, V any] func(t T, ctx context.Context, opts O, visit Visit[V]) (P, error)

// query is the Func that Set was given.
var query any

// Set makes f the query that Get returns. Package localtable calls it
// once, when it is initialized, with (*Table).queryStored.
func Set[T, O, P, V any](f Func[T, O, P, V]) { query = f }

// Get returns the query that Set was given. It panics if Set was not
// called, or was called with other types.
func Get[T, O, P, V any]() Func[T, O, P, V] {
	f, ok := query.(Func[T, O, P, V])
	if !ok {
		panic(fmt.Sprintf("rawquery: Get[%T] of a query Set as %T", f, query))
	}
	return f
}
