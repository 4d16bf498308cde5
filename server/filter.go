package server

import (
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

// parseFilter parses a $filter; its errors are InvalidInput.
func parseFilter(s string) (localtable.Predicate, error) {
	f, err := filter.Parse(s)
	if err != nil {
		return nil, &localtable.Error{Code: localtable.CodeInvalidInput, Message: "The $filter is not valid: " + err.Error()}
	}
	return f, nil
}
