package server

import (
	"net/http"

	"github.com/localtable/localtable/internal/reqclass"
)

// This file serves a table's expiry policy (localtable's Table.SetExpiry),
// a localtable extension: GET, PUT and DELETE /{acct}/{table}?comp=expiry.
// Like the indexes (indexes.go), they are authorized with the account key
// alone: the policy decides which entities every read of the table sees.

// MaxExpiryBody is the largest body of a Set Table Expiry request.
const MaxExpiryBody = 4 << 10

// ExpiryPolicy is the body of GET and PUT ?comp=expiry: the table's expiry
// property ("" in GET's answer: none).
type ExpiryPolicy struct {
	// Property is the name of the table's expiry property, an
	// Edm.DateTime; "" in GET's answer when the table has no policy.
	Property string `json:"Property"`
}

// serveExpiry serves Get Table Expiry (200 with {"Property": "…"}), Set
// Table Expiry (204, once the index the policy reads is built) and Delete
// Table Expiry (204).
func (rc *reqCtx) serveExpiry() {
	if !rc.accountKeyOnly("A table's expiry policy (comp=expiry, a localtable extension) is read and set") {
		return
	}
	t := rc.acct.data.Table(rc.cls.Table)
	ctx := rc.r.Context()
	switch rc.cls.Op {
	case reqclass.GetTableExpiry:
		prop, err := t.Expiry(ctx)
		if err != nil {
			rc.fail(err)
			return
		}
		rc.answerJSON(ExpiryPolicy{Property: prop})
	case reqclass.SetTableExpiry:
		var p ExpiryPolicy
		if !rc.readJSON(MaxExpiryBody, &p, `an expiry policy: want {"Property": "…"}`) {
			return
		}
		if err := t.SetExpiry(ctx, p.Property); err != nil {
			rc.fail(err)
			return
		}
		rc.writeHeader(http.StatusNoContent)
	case reqclass.DeleteTableExpiry:
		if err := t.ClearExpiry(ctx); err != nil {
			rc.fail(err)
			return
		}
		rc.writeHeader(http.StatusNoContent)
	}
}
