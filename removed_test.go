package localtable_test

import (
	"go/ast"
	"go/token"
	"reflect"
	"testing"

	"github.com/localtable/localtable"
)

// TestRemovedNames: names taken out of the public API stay out.
//
//   - Error.StatusCode: statuses are the server's (server.HTTPStatus); the
//     root package links no HTTP.
//   - NewError: errors are literals, matched to sentinels by their code.
//   - Account.Engine: an Account owns its engine; the module's tools keep
//     the engine they open.
//   - FormatDouble, FormatDateTime, FormatDateTime7: the wire's text forms,
//     used only by the module's own packages (internal/edmfmt);
//     Value.String gives a value's text.
//   - ErrNotImplemented, CodeNotImplemented: nothing returned them.
//   - CodeAuthenticationFailed, CodeAuthorizationPermissionMismatch,
//     CodeAuthorizationResourceTypeMismatch, CodeJSONFormatNotSupported,
//     CodeMethodNotAllowed: codes of the HTTP protocol, which only the
//     server produces (server, server/internal/auth).
//   - Value.Str: Value.String is the accessor of an Edm.String (and a
//     fmt.Stringer for every kind), as in log/slog.
//   - ValidateKey(which, k): ValidatePartitionKey and ValidateRowKey.
func TestRemovedNames(t *testing.T) {
	if _, ok := reflect.TypeFor[localtable.Error]().FieldByName("StatusCode"); ok {
		t.Error("localtable.Error has a StatusCode again")
	}
	gone := map[string]bool{
		"NewError": true, "Account.Engine": true,
		"FormatDouble": true, "FormatDateTime": true, "FormatDateTime7": true,
		"ErrNotImplemented": true, "CodeNotImplemented": true,
		"CodeAuthenticationFailed": true, "CodeAuthorizationPermissionMismatch": true,
		"CodeAuthorizationResourceTypeMismatch": true, "CodeJSONFormatNotSupported": true,
		"CodeMethodNotAllowed": true, "Value.Str": true, "ValidateKey": true,
	}
	fset := token.NewFileSet()
	decls := 0
	check := func(pos token.Pos, id string) {
		decls++
		if gone[id] {
			t.Errorf("%s: %s is declared again", fset.Position(pos), id)
		}
	}
	for _, f := range packageFiles(t, fset) {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				id := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					rt := d.Recv.List[0].Type
					if st, ok := rt.(*ast.StarExpr); ok {
						rt = st.X
					}
					if rid, ok := rt.(*ast.Ident); ok {
						id = rid.Name + "." + id
					}
				}
				check(d.Pos(), id)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						for _, n := range vs.Names {
							check(n.Pos(), n.Name)
						}
					}
				}
			}
		}
	}
	if decls < 200 {
		t.Fatalf("found only %d declarations", decls)
	}
}
