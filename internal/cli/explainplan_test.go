package cli

import (
	"fmt"
	"strings"
	"testing"
)

// TestQueryExplainPlanNamesIndex: when query --explain reads through an
// index, its "plan:" line says so (Table.Explain's plan), rather than the
// filter's own "full scan", which contradicts the "read through index"
// line printed below the entities.
func TestQueryExplainPlanNamesIndex(t *testing.T) {
	loc := []string{"--location", t.TempDir()}
	runOut(t, append([]string{"tables", "create", "Orders"}, loc...)...)
	for i := range 40 {
		runOut(t, append([]string{"put", "Orders", "p", fmt.Sprint(i), fmt.Sprintf("Total@Edm.Double=%d.5", i)}, loc...)...)
	}
	runOut(t, append([]string{"index", "create", "Orders", "ByTotal", "Total"}, loc...)...)
	got := runOut(t, append([]string{"query", "Orders", "--filter", "Total gt 38.0", "--explain"}, loc...)...)
	if !strings.Contains(got, "read through index ByTotal") {
		t.Fatalf("the query did not read the index:\n%s", got)
	}
	plan, _, _ := strings.Cut(got, "PartitionKey")
	if strings.Contains(plan, "full scan") || !strings.Contains(plan, "ByTotal") {
		t.Errorf("the plan printed before the entities does not name the index it read:\n%s", got)
	}
}
