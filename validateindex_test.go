package localtable_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/localtable/localtable"
)

// TestValidateIndex: what CreateIndex refuses, refused without a table,
// as ErrInvalidInput, with one message (not an error's text inside
// another's).
func TestValidateIndex(t *testing.T) {
	if err := localtable.ValidateIndex("byTotal", "Total", "Status"); err != nil {
		t.Errorf("a valid index: %v", err)
	}
	for _, c := range []struct {
		name  string
		props []string
		want  string
	}{
		{"", []string{"A"}, "index name"},
		{"9lives", []string{"A"}, "index name"},
		{"x", nil, "names 0 properties"},
		{"x", []string{"A", "B", "C", "D", "E"}, "names 5 properties"},
		{"x", []string{"A", "A"}, `names property "A" twice`},
		{"x", []string{"PartitionKey"}, "system property"},
		{"x", []string{"Timestamp"}, "system property"},
		{"x", []string{"a b"}, "cannot be indexed"},
	} {
		err := localtable.ValidateIndex(c.name, c.props...)
		if !errors.Is(err, localtable.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ValidateIndex(%q, %q) = %v, want ErrInvalidInput with %q", c.name, c.props, err, c.want)
		}
		if err != nil && strings.Count(err.Error(), "localtable:") != 1 {
			t.Errorf("ValidateIndex(%q, %q): an error inside an error: %v", c.name, c.props, err)
		}
	}
}
