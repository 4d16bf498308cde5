package entityjson

import (
	"strings"

	"github.com/localtable/localtable"
)

// errInvalidInput is the service's answer to a body it cannot read as an
// entity: 400 InvalidInput.
func errInvalidInput(msg string) *localtable.Error {
	return &localtable.Error{Code: localtable.CodeInvalidInput, Message: msg}
}

// errDuplicateProperty is the service's answer to a member given twice.
func errDuplicateProperty(name string) *localtable.Error {
	return &localtable.Error{Code: localtable.CodeDuplicatePropertiesSpecified,
		Message: "The property " + quoteOData(name) + " is specified more than one time."}
}

// quoteOData writes s as an OData string literal, as messages name
// properties and values.
func quoteOData(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
