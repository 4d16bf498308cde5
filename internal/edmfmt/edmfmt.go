// Package edmfmt writes Edm values in the Table service's text forms, as
// the wire, the $filter language and the module's tools show them.
package edmfmt

import (
	"math"
	"strconv"
	"time"
)

// Double formats f as the service does: shortest round-trip digits,
// "NaN", "Infinity" and "-Infinity" for the special values.
func Double(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// DateTime formats t in UTC as yyyy-MM-ddTHH:mm:ss.FFFFFFFZ: up to 7
// fractional digits with trailing zeros trimmed.
func DateTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.9999999Z")
}

// DateTime7 formats t in UTC with exactly 7 fractional digits, as the
// service writes Timestamp.
func DateTime7(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.0000000Z")
}
