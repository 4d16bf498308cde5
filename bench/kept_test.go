package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteOutputsKeepsTail: writing the document again replaces what the
// program generates and keeps what follows keptMarker.
func TestWriteOutputsKeepsTail(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "BENCHMARKS.md")
	tail := keptMarker + "\n\n## etcd\n\nmeasured elsewhere\n"
	if err := os.WriteFile(doc, []byte("# old figures\n\n"+tail), 0o644); err != nil {
		t.Fatal(err)
	}
	res := &results{Versions: map[string]string{}}
	for range 2 { // twice: the tail is kept once, not doubled
		if err := writeOutputs(res, filepath.Join(dir, "out"), doc); err != nil {
			t.Fatal(err)
		}
	}
	d, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(d), "old figures") || !strings.HasSuffix(string(d), "\n"+tail) || strings.Count(string(d), keptMarker) != 1 {
		t.Errorf("the document written again:\n%s", d)
	}
	if md, _ := os.ReadFile(filepath.Join(dir, "out", "results.md")); strings.Contains(string(md), keptMarker) {
		t.Errorf("results.md took the tail of another document")
	}
}
