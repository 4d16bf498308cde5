package server

import (
	"net/textproto"
	"testing"
)

// The names setHeader is given are the canonical form Header.Get looks
// up: one that is not would be a header the clients never see.
func TestHeaderNamesCanonical(t *testing.T) {
	for _, name := range canonicalHeaders {
		if c := textproto.CanonicalMIMEHeaderKey(name); c != name {
			t.Errorf("header name %q is not canonical: %q", name, c)
		}
	}
	for level, v := range valContentType {
		if len(v) != 1 || cap(v) != 1 || v[0] != metaLevel(level).contentType() {
			t.Errorf("valContentType[%d] = %q (cap %d), want [%q] of capacity 1", level, v, cap(v), metaLevel(level).contentType())
		}
	}
}
