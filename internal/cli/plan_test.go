package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tableio"
)

// TestPlanImport: import's plan reads the mode, the format, and the
// checkpoint's default, and refuses flags that do not go together.
func TestPlanImport(t *testing.T) {
	c := commands["import"]
	p, err := planImport(c, &importConfig{path: "rows.csv", mode: "merge", progress: "never"}, io.Discard)
	if err != nil || p.mode != localtable.ActionUpsertMerge || p.format != tableio.CSV || p.cpFile != "rows.csv.checkpoint" || p.showBar {
		t.Errorf("plan = %+v, %v", p, err)
	}
	if p, err := planImport(c, &importConfig{path: "-", mode: "insert", progress: "never"}, io.Discard); err != nil || p.cpFile != "" || p.mode != localtable.ActionInsert {
		t.Errorf("plan of - = %+v, %v; want no checkpoint", p, err)
	}
	for _, ic := range []importConfig{
		{path: "a.jsonl", mode: "replace", progress: "never"},
		{path: "-", mode: "upsert", progress: "never", resume: true},
		{path: "a.jsonl", mode: "upsert", progress: "never", resume: true, skip: 3},
		{path: "a.jsonl", mode: "upsert", progress: "sometimes"},
	} {
		if _, err := planImport(c, &ic, io.Discard); err == nil || !strings.Contains(err.Error(), "localtable import --help") {
			t.Errorf("%+v: %v, want a usage error", ic, err)
		}
	}
}

// TestPlanExport: export's plan reads the format and parses the filter.
func TestPlanExport(t *testing.T) {
	c := commands["export"]
	p, err := planExport(c, &exportConfig{path: "-", filter: "PartitionKey eq 'a'", sel: "A,B", progress: "never"}, io.Discard)
	if err != nil || p.format != tableio.JSONL || p.pred == nil || len(p.q.Select) != 2 {
		t.Errorf("plan = %+v, %v", p, err)
	}
	if _, err := planExport(c, &exportConfig{path: "-", filter: "PartitionKey eq", progress: "never"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--filter") {
		t.Errorf("a bad filter: %v", err)
	}
}
