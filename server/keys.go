package server

import (
	"regexp"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/odata"
)

// resourceKind is what the last path segment addresses.
type resourceKind int

const (
	resTable  resourceKind = iota // "t1": insert, ACL
	resQuery                      // "t1()": query entities
	resEntity                     // "t1(PartitionKey='…',RowKey='…')"
)

// resource is a parsed entity-path segment.
type resource struct {
	kind   resourceKind
	table  string
	pk, rk string
}

// parseResource reads an unescaped path segment: a table name, optionally
// followed by "()" or "(PartitionKey='…',RowKey='…')" with OData string
// rules (” is a quote; a space may follow the comma; either key may come
// first). With lenient, as for $batch sub-requests whose keys the SDKs do
// not quote-double, an unparsable key list is read greedily instead.
func parseResource(seg string, lenient bool) (resource, error) {
	open := strings.IndexByte(seg, '(')
	if open < 0 {
		if seg == "" {
			return resource{}, errInvalidURI("The requested URI does not represent any resource on the server.")
		}
		return resource{kind: resTable, table: seg}, nil
	}
	res := resource{table: seg[:open]}
	if res.table == "" || !strings.HasSuffix(seg, ")") {
		return resource{}, errInvalidURI("The requested URI does not represent any resource on the server.")
	}
	inner := seg[open+1 : len(seg)-1]
	if strings.TrimSpace(inner) == "" {
		res.kind = resQuery
		return res, nil
	}
	res.kind = resEntity
	pk, rk, err := odata.ParseKeys(inner)
	if err != nil && lenient {
		if m := greedyKeys.FindStringSubmatch(inner); m != nil {
			pk, rk, err = m[1], m[2], nil
		}
	}
	if err != nil {
		return resource{}, errBadKeys()
	}
	res.pk, res.rk = pk, rk
	return res, nil
}

var greedyKeys = regexp.MustCompile(`^\s*PartitionKey\s*=\s*'(.*)'\s*,\s*RowKey\s*=\s*'(.*)'\s*$`)

func errBadKeys() error {
	return wireError(localtable.CodeInvalidInput, "The entity path must be (PartitionKey='…',RowKey='…') with OData string literals.")
}
