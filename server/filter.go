package server

import (
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

// parseFilter parses a $filter; its errors are InvalidInput.
func parseFilter(s string) (localtable.Predicate, error) {
	f, err := filter.Parse(s)
	if err != nil {
		return nil, localtable.NewError(localtable.ErrInvalidInput, "The $filter is not valid: %v", err)
	}
	return f, nil
}
