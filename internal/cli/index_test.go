package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// runOut runs the command in-process and returns its standard output,
// failing the test on an error.
func runOut(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("%v: %v (%s)", args, err, errb.String())
	}
	return out.String()
}

func TestIndexCommandOffline(t *testing.T) {
	dir := t.TempDir()
	loc := []string{"--location", dir}
	runOut(t, append([]string{"tables", "create", "Orders"}, loc...)...)
	for i := range 40 {
		runOut(t, append([]string{"put", "Orders", "p", fmt.Sprint(i), fmt.Sprintf("Total@Edm.Double=%d.5", i), "Status=open"}, loc...)...)
	}
	if got := runOut(t, append([]string{"index", "create", "Orders", "ByTotal", "Total"}, loc...)...); !strings.Contains(got, "created index ByTotal on Orders (Total)") {
		t.Fatalf("create: %q", got)
	}
	runOut(t, append([]string{"index", "create", "Orders", "ByStatus", "Status", "Total"}, loc...)...)
	got := runOut(t, append([]string{"index", "list", "Orders"}, loc...)...)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 || strings.Fields(lines[1])[0] != "ByTotal" || strings.Join(strings.Fields(lines[2]), " ") != "ByStatus Status,Total ready" {
		t.Fatalf("list:\n%s", got)
	}
	// The query uses it.
	if got := runOut(t, append([]string{"query", "Orders", "--filter", "Total gt 38.0", "--explain"}, loc...)...); !strings.Contains(got, "read through index ByTotal") || !strings.Contains(got, "returned 2,") {
		t.Fatalf("query --explain does not name the index:\n%s", got)
	}
	// A second create of the same name fails, naming it.
	err := run(context.Background(), append([]string{"index", "create", "Orders", "ByTotal", "Status"}, loc...), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "ByTotal") {
		t.Fatalf("duplicate create: %v", err)
	}
	runOut(t, append([]string{"index", "drop", "Orders", "ByTotal"}, loc...)...)
	if got := runOut(t, append([]string{"index", "list", "Orders"}, loc...)...); strings.Contains(got, "ByTotal") {
		t.Fatalf("after drop:\n%s", got)
	}
	err = run(context.Background(), append([]string{"index", "drop", "Orders", "ByTotal"}, loc...), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "ResourceNotFound") {
		t.Fatalf("drop of a dropped index: %v", err)
	}
	for _, bad := range [][]string{{"index", "list"}, {"index", "frob", "Orders"}, {"index", "create", "Orders", "X"}, {"index", "drop", "Orders"}} {
		if err := run(context.Background(), append(bad, loc...), &bytes.Buffer{}, &bytes.Buffer{}); exitCode(err) != 2 {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
}
