package batch

import (
	"net/http"
	"strings"
)

// HeaderField is one header line.
type HeaderField struct {
	Name  string // the header's name, spelled as sent
	Value string // its value, as sent
}

// Header holds the header lines of an operation or a response, in order
// and spelled as sent. The order and spelling are kept because clients
// depend on them (the JS SDK reads "ETag: " case-sensitively) and so
// that what is parsed encodes back to the same bytes.
type Header []HeaderField

// Get returns the value of the first field named name, compared without
// regard to case, or "".
func (h Header) Get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// Values returns the values of the fields named name, compared without
// regard to case, in order.
func (h Header) Values(name string) []string {
	var vs []string
	for _, f := range h {
		if strings.EqualFold(f.Name, name) {
			vs = append(vs, f.Value)
		}
	}
	return vs
}

// HTTPHeader returns h as an http.Header: names canonicalized, values
// in order.
func (h Header) HTTPHeader() http.Header {
	hh := make(http.Header, len(h))
	for _, f := range h {
		hh.Add(f.Name, f.Value)
	}
	return hh
}

// add appends a field unless value is empty.
func (h *Header) add(name, value string) {
	if value != "" {
		*h = append(*h, HeaderField{name, value})
	}
}
