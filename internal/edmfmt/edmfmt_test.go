package edmfmt

import (
	"math"
	"testing"
	"time"
)

func TestDouble(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "-0"}, {1.5, "1.5"}, {-2, "-2"}, {0.1, "0.1"},
		{1e21, "1e+21"}, {1e-7, "1e-07"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
	} {
		if got := Double(c.f); got != c.want {
			t.Errorf("Double(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

func TestDateTime(t *testing.T) {
	east := time.FixedZone("east", 2*3600)
	for _, c := range []struct {
		t         time.Time
		trimmed   string
		sevenDigs string
	}{
		{time.Date(2021, 9, 8, 18, 58, 54, 789938800, time.UTC), "2021-09-08T18:58:54.7899388Z", "2021-09-08T18:58:54.7899388Z"},
		{time.Date(2021, 9, 8, 18, 58, 54, 500000000, time.UTC), "2021-09-08T18:58:54.5Z", "2021-09-08T18:58:54.5000000Z"},
		{time.Date(2021, 9, 8, 20, 58, 54, 0, east), "2021-09-08T18:58:54Z", "2021-09-08T18:58:54.0000000Z"},
		{time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), "1601-01-01T00:00:00Z", "1601-01-01T00:00:00.0000000Z"},
		{time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), "9999-12-31T23:59:59.9999999Z", "9999-12-31T23:59:59.9999999Z"},
	} {
		if got := DateTime(c.t); got != c.trimmed {
			t.Errorf("DateTime(%v) = %q, want %q", c.t, got, c.trimmed)
		}
		if got := DateTime7(c.t); got != c.sevenDigs {
			t.Errorf("DateTime7(%v) = %q, want %q", c.t, got, c.sevenDigs)
		}
	}
}
