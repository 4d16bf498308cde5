package localtable_test

import (
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestDocSnippets: each code block of the package documentation (doc.go)
// is, line for line, code of the package's examples, which compile and
// whose output is checked: the documentation shows only code that runs.
func TestDocSnippets(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	examples, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var block []string
	for _, line := range append(strings.Split(f.Doc.Text(), "\n"), "") {
		if strings.HasPrefix(line, "\t") {
			block = append(block, line)
			continue
		}
		if len(block) > 0 {
			blocks = append(blocks, strings.Join(block, "\n"))
			block = nil
		}
	}
	if len(blocks) == 0 {
		t.Fatal("doc.go has no code block")
	}
	for _, b := range blocks {
		if !strings.Contains(string(examples), b+"\n") {
			t.Errorf("this code of doc.go is not in example_test.go:\n%s", b)
		}
	}
}
