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

// errValueText is the answer to a string value of invalid UTF-8 or with a
// lone surrogate escape: 400 InvalidInput, as the library refuses such a
// string (localtable.Table's checks), naming the property.
func errValueText(name string) *localtable.Error {
	return errInvalidInput("The value of property " + odata.Quote(name) + " is not valid UTF-8 (invalid bytes or a lone surrogate escape).")
}

// errNameText is the answer to a member name of invalid UTF-8 or with a
// lone surrogate escape: 400 PropertyNameInvalid, as the library refuses
// such a name. The name cannot be quoted as sent.
func errNameText() *localtable.Error {
	return &localtable.Error{Code: localtable.CodePropertyNameInvalid,
		Message: "A property name is not valid UTF-8 (invalid bytes or a lone surrogate escape)."}
}
