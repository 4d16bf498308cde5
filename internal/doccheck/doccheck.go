// Package doccheck finds exported names without a doc comment in the Go
// packages under a directory tree. Its test runs it over the whole
// repository (the main module and the bench and storage/etcd modules
// beside it), so that a name added without documentation fails CI.
//
// A name is documented when its declaration carries a doc comment: a
// function, method or type its own; a constant or variable its own, a
// trailing line comment, or the comment of the parenthesized group it is
// declared in; an exported field of an exported struct, or a method of an
// exported interface, its own, a trailing line comment, or a mention by
// name in its type's doc comment or in the doc comment that opens its run
// of fields. Embedded fields need none. The doc comment of a function, method or type begins with its
// name (after an optional "A", "An" or "The"). Test files, testdata, package main and hidden directories are
// not checked.
package doccheck

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// Problem is one exported name without a doc comment.
type Problem struct {
	Pos  token.Position // where the name is declared (Filename relative to the root)
	Name string         // the name as a reader finds it: Type, Type.Method, Type.Field, Func, Const
	What string         // "func", "method", "type", "const", "var", "field" or "interface method"
	Msg  string         // what is wrong: "has no doc comment", or that it does not begin with the name
}

// String formats p as "file:line: what Name msg".
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s %s %s", p.Pos.Filename, p.Pos.Line, p.What, p.Name, p.Msg)
}

const (
	noDoc    = "has no doc comment"
	wrongDoc = "has a doc comment that does not begin with its name"
)

// Check parses every Go package under root (skipping test files, testdata,
// hidden directories, node_modules and package main) and returns the
// exported names that have no doc comment, sorted by position. A package
// whose files do not parse is an error.
func Check(root string) ([]Problem, error) {
	dirs := map[string][]string{} // directory → its non-test Go files
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var problems []Problem
	for dir, paths := range dirs {
		ps, err := checkDir(root, dir, paths)
		if err != nil {
			return nil, err
		}
		problems = append(problems, ps...)
	}
	sort.Slice(problems, func(i, j int) bool {
		a, b := problems[i].Pos, problems[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Offset < b.Offset
	})
	return problems, nil
}

// checkDir checks the package made of the files at paths in dir.
func checkDir(root, dir string, paths []string) ([]Problem, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			rel = p
		}
		f, err := parser.ParseFile(fset, filepath.ToSlash(rel), src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if f.Name.Name == "main" || f.Name.Name == "documentation" {
			continue
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, nil
	}
	pkg, err := doc.NewFromFiles(fset, files, filepath.ToSlash(dir))
	if err != nil {
		return nil, err
	}
	var problems []Problem
	add := func(pos token.Pos, what, name string) {
		problems = append(problems, Problem{Pos: fset.Position(pos), Name: name, What: what, Msg: noDoc})
	}
	// named reports a doc comment that does not begin with name.
	named := func(pos token.Pos, what, name, shown, text string) {
		if !beginsWith(text, name) {
			problems = append(problems, Problem{Pos: fset.Position(pos), Name: shown, What: what, Msg: wrongDoc})
		}
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			if v.Doc != "" {
				continue
			}
			what := v.Decl.Tok.String()
			for _, spec := range v.Decl.Specs {
				vs := spec.(*ast.ValueSpec)
				if vs.Doc != nil || vs.Comment != nil {
					continue
				}
				for _, n := range vs.Names {
					if n.IsExported() {
						add(n.Pos(), what, n.Name)
					}
				}
			}
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			what, shown := "func", f.Name
			if f.Recv != "" {
				what, shown = "method", strings.TrimPrefix(f.Recv, "*")+"."+f.Name
			}
			if f.Doc == "" {
				add(f.Decl.Pos(), what, shown)
			} else {
				named(f.Decl.Pos(), what, f.Name, shown, f.Doc)
			}
		}
	}
	values(pkg.Consts)
	values(pkg.Vars)
	funcs(pkg.Funcs)
	for _, t := range pkg.Types {
		if t.Doc == "" {
			add(t.Decl.Pos(), "type", t.Name)
		} else {
			named(t.Decl.Pos(), "type", t.Name, t.Name, t.Doc)
		}
		values(t.Consts)
		values(t.Vars)
		funcs(t.Funcs)
		funcs(t.Methods)
		for _, spec := range t.Decl.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || ts.Name.Name != t.Name {
				continue
			}
			switch typ := ts.Type.(type) {
			case *ast.StructType:
				members(fset, typ.Fields, "field", t.Name, t.Doc, add)
			case *ast.InterfaceType:
				members(fset, typ.Methods, "interface method", t.Name, t.Doc, add)
			}
		}
	}
	return problems, nil
}

// members reports the exported, named members of a struct's fields or an
// interface's methods that have no doc comment or line comment of their
// own and that no comment names: neither the type's doc comment, typeDoc,
// nor the doc comment that opens the run of members (lines with no blank
// line between them) they belong to, as in
//
//	// Op is the operation, and Table and Key what it addresses.
//	Op    Operation
//	Table string
//	Key   string
func members(fset *token.FileSet, list *ast.FieldList, what, typeName, typeDoc string, add func(token.Pos, string, string)) {
	if list == nil {
		return
	}
	typeNames := words(typeDoc)
	var runNames map[string]bool // the names the doc comment opening the current run mentions
	prevEnd := -1                // the line the previous member ends on
	for _, f := range list.List {
		if f.Doc != nil {
			runNames = words(f.Doc.Text())
		} else if prevEnd >= 0 && fset.Position(f.Pos()).Line > prevEnd+1 {
			runNames = nil // a blank line ends the run
		}
		prevEnd = fset.Position(f.End()).Line
		if f.Doc != nil || f.Comment != nil {
			continue
		}
		for _, n := range f.Names { // embedded fields and interfaces have no names
			if n.IsExported() && !typeNames[n.Name] && !runNames[n.Name] {
				add(n.Pos(), what, typeName+"."+n.Name)
			}
		}
	}
}

// words returns the set of words (letters, digits and underscores) in text.
func words(text string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) {
		set[w] = true
	}
	return set
}

// beginsWith reports whether the doc comment text begins with name, as a
// word of its own, after an optional article.
func beginsWith(text, name string) bool {
	words := strings.Fields(text)
	if len(words) > 1 && (words[0] == "A" || words[0] == "An" || words[0] == "The") {
		words = words[1:]
	}
	if len(words) == 0 {
		return false
	}
	return strings.TrimRight(words[0], ".,:;") == name
}
