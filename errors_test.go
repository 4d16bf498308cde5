package localtable_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/localtable/localtable"
)

// sentinels are the package's sentinel errors, by name.
var sentinels = map[string]*localtable.Error{
	"ErrTableNotFound":         localtable.ErrTableNotFound,
	"ErrTableExists":           localtable.ErrTableExists,
	"ErrEntityNotFound":        localtable.ErrEntityNotFound,
	"ErrEntityExists":          localtable.ErrEntityExists,
	"ErrConditionNotMet":       localtable.ErrConditionNotMet,
	"ErrInvalidInput":          localtable.ErrInvalidInput,
	"ErrOutOfRangeInput":       localtable.ErrOutOfRangeInput,
	"ErrInvalidTableName":      localtable.ErrInvalidTableName,
	"ErrPropertiesNeedValue":   localtable.ErrPropertiesNeedValue,
	"ErrPropertyNameInvalid":   localtable.ErrPropertyNameInvalid,
	"ErrPropertyNameTooLong":   localtable.ErrPropertyNameTooLong,
	"ErrPropertyValueTooLarge": localtable.ErrPropertyValueTooLarge,
	"ErrTooManyProperties":     localtable.ErrTooManyProperties,
	"ErrEntityTooLarge":        localtable.ErrEntityTooLarge,
	"ErrDuplicateProperties":   localtable.ErrDuplicateProperties,
	"ErrDuplicateRow":          localtable.ErrDuplicateRow,
	"ErrDifferentPartitions":   localtable.ErrDifferentPartitions,
	"ErrInvalidValueType":      localtable.ErrInvalidValueType,
	"ErrRequestBodyTooLarge":   localtable.ErrRequestBodyTooLarge,
	"ErrKeyTooLarge":           localtable.ErrKeyTooLarge,
	"ErrClockOutOfRange":       localtable.ErrClockOutOfRange,
	"ErrIndexNotFound":         localtable.ErrIndexNotFound,
	"ErrIndexExists":           localtable.ErrIndexExists,
	"ErrServerBusy":            localtable.ErrServerBusy,
}

// TestSentinelList: sentinels lists every *Error variable of the package,
// so that the tests below cover each.
func TestSentinelList(t *testing.T) {
	fset := token.NewFileSet()
	var found []string
	for _, f := range packageFiles(t, fset) {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !name.IsExported() || i >= len(vs.Values) {
						continue
					}
					switch v := vs.Values[i].(type) {
					case *ast.CallExpr:
						if id, ok := v.Fun.(*ast.Ident); ok && id.Name == "sentinel" {
							found = append(found, name.Name)
						}
					case *ast.UnaryExpr:
						if cl, ok := v.X.(*ast.CompositeLit); ok {
							if id, ok := cl.Type.(*ast.Ident); ok && id.Name == "Error" {
								found = append(found, name.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(found)
	var listed []string
	for name := range sentinels {
		listed = append(listed, name)
	}
	sort.Strings(listed)
	if strings.Join(found, " ") != strings.Join(listed, " ") {
		t.Errorf("the package declares the *Error variables\n%v\nthe test lists\n%v", found, listed)
	}
}

// packageFiles parses the package's non-test files into fset.
func packageFiles(t *testing.T, fset *token.FileSet) []*ast.File {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestErrorCodesProduced: every ErrorCode constant of the package is one
// its operations produce (its non-test code uses it beyond declaring it):
// the codes only the HTTP protocol gives, such as AuthenticationFailed,
// belong to the server.
func TestErrorCodesProduced(t *testing.T) {
	fset := token.NewFileSet()
	declared := map[*ast.Ident]bool{}
	var codes []string
	uses := map[string]int{}
	files := packageFiles(t, fset)
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "ErrorCode" {
					continue
				}
				for _, n := range vs.Names {
					declared[n] = true
					codes = append(codes, n.Name)
				}
			}
		}
	}
	if len(codes) < 15 {
		t.Fatalf("found only the ErrorCode constants %v", codes)
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && !declared[id] {
				uses[id.Name]++
			}
			return true
		})
	}
	for _, c := range codes {
		if uses[c] == 0 {
			t.Errorf("%s is declared but no operation of the package produces it", c)
		}
	}
}

// bySelfOnly reports whether s is an *Error that no literal matches, only
// the errors localtable makes of it: its code is broader than its meaning.
func bySelfOnly(s *localtable.Error) bool {
	return s == localtable.ErrClockOutOfRange || s == localtable.ErrIndexExists
}

// TestErrorLiteral: an *Error made as a composite literal, as packages
// that build on localtable make theirs, matches the sentinel of its code
// and no other, directly or wrapped, and errors.As finds it.
// ErrClockOutOfRange, whose code InternalError is broader than its
// meaning, is matched by no literal.
func TestErrorLiteral(t *testing.T) {
	for name, s := range sentinels {
		lit := &localtable.Error{Code: s.Code, Message: "made elsewhere"}
		wrapped := fmt.Errorf("layer: %w", lit)
		for oname, o := range sentinels {
			want := o == s && !bySelfOnly(s)
			if bySelfOnly(s) && o != s {
				// Its literal is a literal of its code: the code's
				// sentinel's, if any, which TestErrorLiteral checks there.
				want = o.Code == s.Code && !bySelfOnly(o)
			}
			if got := errors.Is(lit, o); got != want {
				t.Errorf("errors.Is(&Error{Code: %s}, %s) = %v, want %v", s.Code, oname, got, want)
			}
			if got := errors.Is(wrapped, o); got != want {
				t.Errorf("errors.Is(wrapped &Error{Code: %s}, %s) = %v, want %v", s.Code, oname, got, want)
			}
			// A sentinel is itself and no other.
			if got := errors.Is(s, o); got != (o == s) {
				t.Errorf("errors.Is(%s, %s) = %v", name, oname, got)
			}
		}
		var le *localtable.Error
		if !errors.As(wrapped, &le) || le != lit || localtable.ErrorCodeOf(wrapped) != s.Code {
			t.Errorf("errors.As(wrapped &Error{Code: %s}) = %v", s.Code, le)
		}
	}
	// A literal of an unknown code matches no sentinel, and a literal
	// target matches only itself.
	odd := &localtable.Error{Code: "MessageNotFound", Message: "x"}
	for name, s := range sentinels {
		if errors.Is(odd, s) {
			t.Errorf("a literal of code MessageNotFound is %s", name)
		}
	}
	if twin := (&localtable.Error{Code: "MessageNotFound", Message: "x"}); errors.Is(twin, odd) || !errors.Is(odd, odd) {
		t.Error("a literal target matches another literal of its code, or not itself")
	}
	var nilErr *localtable.Error
	if errors.Is(odd, nilErr) {
		t.Error("an Error is a nil *Error")
	}
}

// TestErrorKinds: the errors localtable returns keep the meaning they were
// made with, whatever their code: deleting a missing table answers
// ResourceNotFound, the code of ErrEntityNotFound, and is ErrTableNotFound,
// not ErrEntityNotFound; a reserved table name answers InvalidInput and is
// ErrInvalidTableName, not ErrInvalidInput.
func TestErrorKinds(t *testing.T) {
	ctx := context.Background()
	a, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tbl, err := a.CreateTable(ctx, "kinds")
	if err != nil {
		t.Fatal(err)
	}
	_, getErr := tbl.Get(ctx, "p", "r", nil)
	for _, c := range []struct {
		what      string
		err       error
		code      localtable.ErrorCode
		is, isNot *localtable.Error
	}{
		{"DeleteTable of a missing table", a.DeleteTable(ctx, "missing"), localtable.CodeResourceNotFound, localtable.ErrTableNotFound, localtable.ErrEntityNotFound},
		{"Get of a missing entity", getErr, localtable.CodeResourceNotFound, localtable.ErrEntityNotFound, localtable.ErrTableNotFound},
		{"a reserved table name", localtable.ValidateTableName("Tables"), localtable.CodeInvalidInput, localtable.ErrInvalidTableName, localtable.ErrInvalidInput},
		{"a table name too short", localtable.ValidateTableName("ab"), localtable.CodeOutOfRangeInput, localtable.ErrInvalidTableName, localtable.ErrOutOfRangeInput},
	} {
		if localtable.ErrorCodeOf(c.err) != c.code || !errors.Is(c.err, c.is) || errors.Is(c.err, c.isNot) {
			t.Errorf("%s: %v: code %s, Is %v, Is not %v", c.what, c.err, localtable.ErrorCodeOf(c.err), errors.Is(c.err, c.is), !errors.Is(c.err, c.isNot))
		}
	}
}
