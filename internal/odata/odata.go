// Package odata reads and writes the OData string literals of the Table
// service's URLs and messages: a string in single quotes, a quote inside
// it doubled. It is the one quoting function and the one key-literal
// parser of the server, its authorization, the request classifier
// (package reqclass) and the entity codec.
package odata

import (
	"errors"
	"strings"
)

// Quote writes s as an OData string literal: in single quotes, each
// quote of s doubled.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// ReadString reads a quoted OData string literal at the start of s and
// returns its value and its length in s; ok is false when s does not
// start with a complete literal.
func ReadString(s string) (val string, n int, ok bool) {
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

// ErrBadKeys is ParseKeys's error for a key list it cannot read.
var ErrBadKeys = errors.New("odata: the key list must be PartitionKey='…',RowKey='…' with OData string literals")

// ParseKeys reads an entity's key list, the text inside the parentheses
// of t1(PartitionKey='a',RowKey='b') after percent-decoding: each key
// once, in either order, as an OData string literal, with spaces allowed
// around the names, the equals signs and the comma. Anything else is
// ErrBadKeys.
func ParseKeys(s string) (pk, rk string, err error) {
	var havePK, haveRK bool
	for i := 0; ; {
		i = skipSpace(s, i)
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			return "", "", ErrBadKeys
		}
		name := strings.TrimSpace(s[i : i+eq])
		i = skipSpace(s, i+eq+1)
		val, n, ok := ReadString(s[i:])
		if !ok {
			return "", "", ErrBadKeys
		}
		i += n
		switch {
		case name == "PartitionKey" && !havePK:
			pk, havePK = val, true
		case name == "RowKey" && !haveRK:
			rk, haveRK = val, true
		default:
			return "", "", ErrBadKeys
		}
		i = skipSpace(s, i)
		if i == len(s) {
			break
		}
		if s[i] != ',' {
			return "", "", ErrBadKeys
		}
		i++
	}
	if !havePK || !haveRK {
		return "", "", ErrBadKeys
	}
	return pk, rk, nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}
