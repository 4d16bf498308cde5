package batch_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports: package batch knows the wire format, not tables: it
// imports nothing of this module.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "github.com/") || strings.HasPrefix(imp, "golang.org/") {
			t.Errorf("batch imports %s", imp)
		}
	}
}
