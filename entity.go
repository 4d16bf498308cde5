package localtable

import (
	"strings"
	"time"

	"github.com/localtable/localtable/internal/edmfmt"
)

// The names of the system properties.
const (
	PartitionKeyName = "PartitionKey"
	RowKeyName       = "RowKey"
	TimestampName    = "Timestamp"
)

// Entity is a row of a table: its primary key (PartitionKey, RowKey), the
// server-owned Timestamp and ETag, and its custom properties.
//
// Timestamp and ETag are set by the account on every write and ignored when
// an Entity is written: values you put there are not stored.
type Entity struct {
	PartitionKey string
	RowKey       string
	Timestamp    time.Time  // last modification, 100 ns precision, UTC
	ETag         ETag       // changes on every write
	Properties   Properties // the custom properties
}

// Properties maps custom property names to values. A property whose value
// is null (the zero Value) is treated as absent when written.
type Properties map[string]Value

// Property returns the value of a property by name, including the system
// properties: PartitionKey and RowKey as Edm.String, Timestamp as
// Edm.DateTime (absent when zero). It is what filters evaluate.
func (e *Entity) Property(name string) (Value, bool) {
	switch name {
	case PartitionKeyName:
		return StringValue(e.PartitionKey), true
	case RowKeyName:
		return StringValue(e.RowKey), true
	case TimestampName:
		if e.Timestamp.IsZero() {
			return Value{}, false
		}
		return DateTimeValue(e.Timestamp), true
	}
	v, ok := e.Properties[name]
	if ok && v.IsNull() {
		return Value{}, false
	}
	return v, ok
}

// Set sets a custom property to v, allocating Properties as needed, and
// returns e for chaining.
func (e *Entity) Set(name string, v Value) *Entity {
	if e.Properties == nil {
		e.Properties = make(Properties)
	}
	e.Properties[name] = v
	return e
}

// Clone returns a copy of e whose Properties map is its own.
func (e Entity) Clone() Entity {
	if e.Properties != nil {
		p := make(Properties, len(e.Properties))
		for k, v := range e.Properties {
			p[k] = v
		}
		e.Properties = p
	}
	return e
}

// ETag is an entity version tag, in the service's form
// W/"datetime'2021-09-08T18%3A58%3A54.7899388Z'". It is opaque: compare it
// only for equality.
type ETag string

// ETagAny, as an If-Match condition, matches any existing entity.
const ETagAny ETag = "*"

// Time returns the Timestamp an ETag of the service's form names, and
// false for "*" or a malformed ETag.
func (t ETag) Time() (time.Time, bool) {
	ticks, ok := parseETag(t)
	if !ok {
		return time.Time{}, false
	}
	return TicksToTime(ticks), true
}

// etagFor returns the ETag of an entity last written at ticks.
func etagFor(ticks int64) ETag {
	s := edmfmt.DateTime7(TicksToTime(ticks))
	return ETag(`W/"datetime'` + strings.ReplaceAll(s, ":", "%3A") + `'"`)
}

// isWeakETag reports whether tag is a weak entity tag, W/"…" (the W in
// either case) with no unescaped quote inside: the If-Match values the
// service accepts besides "*". One of another form than the service's
// own (W/"wrong") is valid but never matches, so a write conditioned on
// it fails with UpdateConditionNotSatisfied; anything else, such as an
// unquoted value, a strong ETag "…" or a list of ETags, is InvalidInput.
func isWeakETag(tag ETag) bool {
	s := string(tag)
	if len(s) < 4 || (s[0] != 'W' && s[0] != 'w') || s[1] != '/' || s[2] != '"' || s[len(s)-1] != '"' {
		return false
	}
	inner := s[3 : len(s)-1]
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case '\\':
			i++ // an escaped character, a quote included
		case '"':
			return false
		}
	}
	return true
}

// parseETag returns the Timestamp ticks an ETag names, or false if it is not
// in the service's form.
func parseETag(tag ETag) (int64, bool) {
	s := string(tag)
	const pre, post = `W/"datetime'`, `'"`
	if !strings.HasPrefix(s, pre) || !strings.HasSuffix(s, post) || len(s) < len(pre)+len(post) {
		return 0, false
	}
	inner, ok := unescapePercent(s[len(pre) : len(s)-len(post)])
	if !ok {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, inner)
	if err != nil {
		return 0, false
	}
	return TimeToTicks(t), true
}

// unescapePercent decodes the %XX escapes of s, as the service escapes the
// colons of an ETag's time; false for a malformed escape.
func unescapePercent(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		hi, ok1 := hexValue(s[i+1])
		lo, ok2 := hexValue(s[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), true
}

// hexValue returns the value of the hexadecimal digit c, in either case.
func hexValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
