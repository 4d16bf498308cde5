package entityjson

import (
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/localtable/localtable"
)

// The service reads an annotated entity property sent as a JSON string
// with the .NET parser of its type (its OData reader converts a string to
// any primitive type with Convert.ChangeType under the invariant culture,
// a Guid with new Guid(string) and Binary with Convert.FromBase64String).
// These functions accept what those parsers accept, for the forms a
// client may plausibly send.

// parseDotNetBool reads a Boolean as Boolean.Parse does: "true" or
// "false" in any case, with white space and NULs around it.
func parseDotNetBool(s string) (v, ok bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == 0 })
	switch {
	case strings.EqualFold(s, "true"):
		return true, true
	case strings.EqualFold(s, "false"):
		return false, true
	}
	return false, false
}

// isNumberSpace reports the white space .NET number parsing allows around
// a number: tab, line feed, vertical tab, form feed, carriage return and
// space.
func isNumberSpace(r rune) bool { return r == ' ' || (r >= '\t' && r <= '\r') }

// trimNumberSpace removes the white space around an integer, which
// Int32.Parse and Int64.Parse allow (NumberStyles.Integer); what remains
// must be an optional sign and decimal digits, as strconv.ParseInt in
// base 10 reads them.
func trimNumberSpace(s string) string { return strings.TrimFunc(s, isNumberSpace) }

// parseDotNetDouble reads a Double as Double.Parse does with
// NumberStyles.Float and AllowThousands under the invariant culture: white
// space around, an optional sign, digits with ',' group separators after
// the first digit, an optional fraction and exponent, or one of the
// symbols NaN, Infinity and -Infinity (also +Infinity and +NaN). A value
// beyond the range of a float64 is an error, as it is in .NET Framework.
func parseDotNetDouble(s string) (float64, bool) {
	s = strings.TrimFunc(s, isNumberSpace)
	switch s {
	case "NaN", "+NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	var b strings.Builder
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		b.WriteByte(s[i])
		i++
	}
	digits := 0
	for ; i < len(s) && (isDigit(s[i]) || (s[i] == ',' && digits > 0)); i++ {
		if s[i] != ',' {
			b.WriteByte(s[i])
			digits++
		}
	}
	if i < len(s) && s[i] == '.' {
		b.WriteByte('.')
		for i++; i < len(s) && isDigit(s[i]); i++ {
			b.WriteByte(s[i])
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		b.WriteByte('e')
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			b.WriteByte(s[i])
			i++
		}
		exp := 0
		for ; i < len(s) && isDigit(s[i]); i++ {
			b.WriteByte(s[i])
			exp++
		}
		if exp == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(b.String(), 64)
	return f, err == nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseDotNetGUID reads a Guid in the forms new Guid(string) accepts that
// clients send: 8-4-4-4-12 hexadecimal digits ("D"), the same in braces
// ("B") or parentheses ("P"), or 32 undivided digits ("N"), with white
// space around. The "X" form of hexadecimal constants is not accepted.
func parseDotNetGUID(s string) (localtable.GUID, error) {
	s = strings.TrimSpace(s)
	switch {
	case len(s) == 38 && s[0] == '(' && s[37] == ')':
		s = s[1:37]
	case len(s) == 32 && !strings.Contains(s, "-"):
		s = s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
	}
	return localtable.ParseGUID(s)
}

// dropBase64Space removes the white space Convert.FromBase64String
// ignores anywhere in its input (space, tab, carriage return, line feed),
// for strings.Map.
func dropBase64Space(r rune) rune {
	switch r {
	case ' ', '\t', '\r', '\n':
		return -1
	}
	return r
}

// isBase64Space reports whether r is white space dropBase64Space drops.
func isBase64Space(r rune) bool { return dropBase64Space(r) < 0 }
