package localtable_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleHelpersNotExported: helpers only this module's own packages
// use live in internal packages, not in the public API: NewError (errors
// are literals, matched to sentinels by code), Account.Engine
// (internal/acctengine), and the wire's text forms FormatDouble,
// FormatDateTime and FormatDateTime7 (internal/edmfmt; Value.String gives
// a value's text).
func TestModuleHelpersNotExported(t *testing.T) {
	gone := map[string]bool{"NewError": true, "FormatDouble": true, "FormatDateTime": true, "FormatDateTime7": true, "Account.Engine": true}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	funcs := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			funcs++
			id := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				rt := fd.Recv.List[0].Type
				if st, ok := rt.(*ast.StarExpr); ok {
					rt = st.X
				}
				if rid, ok := rt.(*ast.Ident); ok {
					id = rid.Name + "." + id
				}
			}
			if gone[id] {
				t.Errorf("%s: %s is exported again", fset.Position(fd.Pos()), id)
			}
		}
	}
	if funcs < 100 {
		t.Fatalf("found only %d functions", funcs)
	}
}
