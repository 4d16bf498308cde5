package server

import (
	"regexp"
	"strings"

	"github.com/localtable/localtable"
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
	pk, rk, err := parseKeys(inner)
	if err != nil && lenient {
		if m := greedyKeys.FindStringSubmatch(inner); m != nil {
			pk, rk, err = m[1], m[2], nil
		}
	}
	if err != nil {
		return resource{}, err
	}
	res.pk, res.rk = pk, rk
	return res, nil
}

var greedyKeys = regexp.MustCompile(`^\s*PartitionKey\s*=\s*'(.*)'\s*,\s*RowKey\s*=\s*'(.*)'\s*$`)

func errBadKeys() error {
	return wireError(localtable.CodeInvalidInput, "The entity path must be (PartitionKey='…',RowKey='…') with OData string literals.")
}

// parseKeys reads "PartitionKey='…',RowKey='…'" strictly.
func parseKeys(s string) (pk, rk string, err error) {
	var havePK, haveRK bool
	for i := 0; ; {
		i = skipSpace(s, i)
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			return "", "", errBadKeys()
		}
		name := strings.TrimSpace(s[i : i+eq])
		i = skipSpace(s, i+eq+1)
		val, n, ok := readODataString(s[i:])
		if !ok {
			return "", "", errBadKeys()
		}
		i += n
		switch {
		case name == "PartitionKey" && !havePK:
			pk, havePK = val, true
		case name == "RowKey" && !haveRK:
			rk, haveRK = val, true
		default:
			return "", "", errBadKeys()
		}
		i = skipSpace(s, i)
		if i == len(s) {
			break
		}
		if s[i] != ',' {
			return "", "", errBadKeys()
		}
		i++
	}
	if !havePK || !haveRK {
		return "", "", errBadKeys()
	}
	return pk, rk, nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// readODataString reads a quoted OData string literal at the start of s
// and returns its value and length.
func readODataString(s string) (string, int, bool) {
	if s == "" || s[0] != '\'' {
		return "", 0, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", 0, false
}

// quoteOData writes s as an OData string literal.
func quoteOData(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
