package entityjson

import (
	"encoding/json"
	"unicode/utf8"
	"unsafe"
)

// scanFlatObject reads the common shape of an entity line quickly: one
// JSON object whose member names hold no escapes and whose values are
// strings, numbers, true, false or null, each member name once. It
// returns ok false for anything else (nested values, escaped names,
// duplicate names, invalid or trailing data), and the caller then reads
// the body with ReadObject, which reports the exact error. For the
// objects it accepts it returns what ReadObject returns: the names in
// order and each value's raw JSON. With frozen (b is never written) the
// names alias b instead of copying it.
func scanFlatObject(b []byte, frozen bool) (keys []string, vals map[string]json.RawMessage, ok bool) {
	i := skipJSONSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, nil, false
	}
	i = skipJSONSpace(b, i+1)
	vals = make(map[string]json.RawMessage, 16)
	if i < len(b) && b[i] == '}' {
		return nil, vals, skipJSONSpace(b, i+1) == len(b)
	}
	keys = make([]string, 0, 16)
	for {
		// A member name without escapes.
		if i >= len(b) || b[i] != '"' {
			return nil, nil, false
		}
		start := i + 1
		j := start
		for j < len(b) && b[j] != '"' {
			if b[j] == '\\' || b[j] < 0x20 {
				return nil, nil, false
			}
			j++
		}
		if j >= len(b) || !utf8.Valid(b[start:j]) {
			return nil, nil, false
		}
		var name string
		if frozen && j > start {
			name = unsafe.String(&b[start], j-start)
		} else {
			name = string(b[start:j])
		}
		i = skipJSONSpace(b, j+1)
		if i >= len(b) || b[i] != ':' {
			return nil, nil, false
		}
		i = skipJSONSpace(b, i+1)
		end, valid := scanScalar(b, i)
		if !valid {
			return nil, nil, false
		}
		if _, dup := vals[name]; dup {
			return nil, nil, false
		}
		vals[name] = json.RawMessage(b[i:end])
		keys = append(keys, name)
		i = skipJSONSpace(b, end)
		if i >= len(b) {
			return nil, nil, false
		}
		switch b[i] {
		case ',':
			i = skipJSONSpace(b, i+1)
		case '}':
			return keys, vals, skipJSONSpace(b, i+1) == len(b)
		default:
			return nil, nil, false
		}
	}
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanScalar returns the end of the JSON string, number, true, false or
// null at b[i:], and whether there is a valid one.
func scanScalar(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		for j := i + 1; j < len(b); j++ {
			switch c := b[j]; {
			case c == '"':
				return j + 1, true
			case c < 0x20:
				return j, false
			case c == '\\':
				j++
				if j >= len(b) {
					return j, false
				}
				switch b[j] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				case 'u':
					if j+4 >= len(b) || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
						return j, false
					}
					j += 4
				default:
					return j, false
				}
			}
		}
		return len(b), false
	case c == 't':
		return i + 4, len(b) >= i+4 && string(b[i:i+4]) == "true"
	case c == 'f':
		return i + 5, len(b) >= i+5 && string(b[i:i+5]) == "false"
	case c == 'n':
		return i + 4, len(b) >= i+4 && string(b[i:i+4]) == "null"
	case c == '-' || isDigit(c):
		return scanNumber(b, i)
	}
	return i, false
}

// scanNumber scans a number of JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
