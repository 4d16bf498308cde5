// Package acctengine gives this module's own tools and benchmarks the
// storage engine under a *localtable.Account, which the public API does not
// expose: an Account owns its engine, and writing to the engine directly
// bypasses every rule of the data model.
package acctengine

import "github.com/localtable/localtable/storage"

// Of returns the engine of account, a *localtable.Account. Package
// localtable sets it when it is initialized; it panics for anything else.
var Of func(account any) storage.Engine
