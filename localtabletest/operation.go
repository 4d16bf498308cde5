package localtabletest

import "github.com/localtable/localtable/internal/testkit"

// Operation is a Table service operation, named as the REST API
// reference names it.
type Operation = testkit.Operation

// The operations of the Table service.
const (
	OpCreateTable          = testkit.OpCreateTable
	OpDeleteTable          = testkit.OpDeleteTable
	OpListTables           = testkit.OpListTables // and GET Tables('name')
	OpGetACL               = testkit.OpGetACL
	OpSetACL               = testkit.OpSetACL
	OpGetServiceProperties = testkit.OpGetServiceProperties
	OpSetServiceProperties = testkit.OpSetServiceProperties
	OpGetServiceStats      = testkit.OpGetServiceStats
	OpInsert               = testkit.OpInsert
	OpUpdate               = testkit.OpUpdate        // PUT with If-Match
	OpMerge                = testkit.OpMerge         // MERGE or PATCH with If-Match
	OpUpsertReplace        = testkit.OpUpsertReplace // PUT without If-Match
	OpUpsertMerge          = testkit.OpUpsertMerge   // MERGE or PATCH without If-Match
	OpDelete               = testkit.OpDelete
	OpGet                  = testkit.OpGet // a GET of one entity by its keys
	OpQuery                = testkit.OpQuery
	OpBatch                = testkit.OpBatch        // $batch
	OpPreflight            = testkit.OpPreflight    // CORS OPTIONS
	OpWatchChanges         = testkit.OpWatchChanges // GET $changes, localtable's change feed
	OpOther                = testkit.OpOther        // anything else; the server refuses it
)
