package entityjson

import (
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/odata"
)

// errInvalidInput is the service's answer to a body it cannot read as an
// entity: 400 InvalidInput.
func errInvalidInput(msg string) *localtable.Error {
	return &localtable.Error{Code: localtable.CodeInvalidInput, Message: msg}
}

// errDuplicateProperty is the service's answer to a member given twice.
func errDuplicateProperty(name string) *localtable.Error {
	return &localtable.Error{Code: localtable.CodeDuplicatePropertiesSpecified,
		Message: "The property " + odata.Quote(name) + " is specified more than one time."}
}
