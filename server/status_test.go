package server

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/batch"
)

// documented is the status of each code as the service's error code
// tables give it (Table service error codes; common REST API error codes;
// CORS for CorsPreflightFailure), and localtable's own codes as its
// README documents them (FeedCompacted, of the change feed's endpoint;
// IndexNotFound, of the index operations).
var documented = map[localtable.ErrorCode]int{
	"FeedCompacted":                           410,
	"IndexNotFound":                           404,
	"AuthenticationFailed":                    403,
	"AuthorizationPermissionMismatch":         403,
	"AuthorizationResourceTypeMismatch":       403,
	"AuthorizationFailure":                    403,
	"AuthorizationProtocolMismatch":           403,
	"AuthorizationServiceMismatch":            403,
	"AuthorizationSourceIPMismatch":           403,
	"InsufficientAccountPermissions":          403,
	"CorsPreflightFailure":                    403,
	"NoAuthenticationInformation":             401,
	"InvalidAuthenticationInfo":               401,
	"CommandsInBatchActOnDifferentPartitions": 400,
	"DuplicatePropertiesSpecified":            400,
	"EntityTooLarge":                          400,
	"InvalidDuplicateRow":                     400,
	"InvalidInput":                            400,
	"InvalidResourceName":                     400,
	"InvalidValueType":                        400,
	"KeyValueTooLarge":                        400,
	"OutOfRangeInput":                         400,
	"PropertiesNeedValue":                     400,
	"PropertyNameInvalid":                     400,
	"PropertyNameTooLong":                     400,
	"PropertyValueTooLarge":                   400,
	"TooManyProperties":                       400,
	"XMethodIncorrectCount":                   400,
	"XMethodIncorrectValue":                   400,
	"XMethodNotUsingPost":                     400,
	"InvalidUri":                              400,
	"InvalidHeaderValue":                      400,
	"InvalidXmlDocument":                      400,
	"InvalidXmlNodeValue":                     400,
	"InvalidQueryParameterValue":              400,
	"MissingRequiredHeader":                   400,
	"ResourceNotFound":                        404,
	"TableNotFound":                           404,
	"AccountNotFound":                         404,
	"MethodNotAllowed":                        405,
	"UnsupportedHttpVerb":                     405,
	"EntityAlreadyExists":                     409,
	"TableAlreadyExists":                      409,
	"TableBeingDeleted":                       409,
	"ResourceTypeMismatch":                    409,
	"UpdateConditionNotSatisfied":             412,
	"RequestBodyTooLarge":                     413,
	"JsonFormatNotSupported":                  415,
	"AtomFormatNotSupported":                  415,
	"MediaTypeNotSupported":                   415, // the service's answer to a body of another media type (Azure/azure-sdk-for-python#13514)
	"InternalError":                           500,
	"OperationTimedOut":                       500,
	"ServerBusy":                              503,
}

// errorCodes returns the ErrorCode constants the non-test files of the
// package in dir declare, by value.
func errorCodes(t *testing.T, dir string) []localtable.ErrorCode {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var codes []localtable.ErrorCode
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				typ := ""
				switch x := vs.Type.(type) {
				case *ast.Ident:
					typ = x.Name
				case *ast.SelectorExpr:
					typ = x.Sel.Name
				}
				if typ != "ErrorCode" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: an ErrorCode constant that is not a string literal", fset.Position(v.Pos()))
					}
					s, _ := strconv.Unquote(lit.Value)
					codes = append(codes, localtable.ErrorCode(s))
				}
			}
		}
	}
	return codes
}

// TestHTTPStatus: every error code of package localtable, of the server
// and of its internal packages has a status of its own in the map, the one the service
// documents; an unknown code is 500.
func TestHTTPStatus(t *testing.T) {
	var codes []localtable.ErrorCode
	for _, dir := range []string{"..", ".", "internal/auth", "internal/cors", "../entityjson"} {
		codes = append(codes, errorCodes(t, dir)...)
	}
	if len(codes) < 40 {
		t.Fatalf("found only the error codes %v", codes)
	}
	for _, code := range codes {
		got, ok := statuses[code]
		if !ok {
			t.Errorf("%s has no status of its own (HTTPStatus answers %d)", code, HTTPStatus(code))
			continue
		}
		if want, ok := documented[code]; !ok || got != want || HTTPStatus(code) != want {
			t.Errorf("HTTPStatus(%s) = %d, documented %d", code, got, want)
		}
	}
	for code := range statuses {
		if _, ok := documented[code]; !ok {
			t.Errorf("%s: status %d, but the test documents none", code, statuses[code])
		}
	}
	if got := HTTPStatus("NoSuchCode"); got != 500 {
		t.Errorf("HTTPStatus of an unknown code = %d, want 500", got)
	}
	if got := HTTPStatus(""); got != 500 {
		t.Errorf("HTTPStatus of no code = %d, want 500", got)
	}
}

// TestHTTPStatusOfBatchErrors: package batch states the status of each of
// its errors; the server, which answers a batch.Error by its code, agrees.
func TestHTTPStatusOfBatchErrors(t *testing.T) {
	const ct = "multipart/mixed; boundary=batch_1"
	big := strings.Repeat("x", batch.MaxBodySize+1)
	var errs []*batch.Error
	for _, body := range []string{"", "--batch_1\r\nContent-Type: text/plain\r\n\r\n--batch_1--\r\n", big} {
		_, err := batch.ParseRequest([]byte(body), ct)
		var be *batch.Error
		if !errors.As(err, &be) {
			t.Fatalf("ParseRequest(%.40q): %v, want a *batch.Error", body, err)
		}
		errs = append(errs, be)
	}
	for _, ct := range []string{"text/plain", ""} {
		_, err := batch.ParseRequest([]byte("--x--"), ct)
		var be *batch.Error
		if !errors.As(err, &be) {
			t.Fatalf("ParseRequest with Content-Type %q: %v", ct, err)
		}
		errs = append(errs, be)
	}
	errs = append(errs, batch.ErrExtraChangeset)
	seen := map[string]bool{}
	for _, be := range errs {
		seen[be.Code] = true
		if got := HTTPStatus(localtable.ErrorCode(be.Code)); got != be.Status {
			t.Errorf("batch error %s: status %d, HTTPStatus %d", be.Code, be.Status, got)
		}
	}
	for _, code := range []string{batch.CodeInvalidInput, batch.CodeMissingRequiredHeader, batch.CodeInvalidHeaderValue, batch.CodeRequestBodyTooLarge} {
		if !seen[code] {
			t.Errorf("no batch error tried has code %s", code)
		}
	}
}
