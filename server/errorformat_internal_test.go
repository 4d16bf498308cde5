package server

import (
	"encoding/xml"
	"testing"
)

// appendXMLText writes what XML 1.0 can hold and escapes the rest, so
// that an error message quoting any input stays a parsable document that
// reads back as the message (U+FFFD for what XML cannot carry).
func TestAppendXMLText(t *testing.T) {
	for _, c := range []struct{ in, out, back string }{
		{"plain", "plain", "plain"},
		{"a&b<c>d", "a&amp;b&lt;c&gt;d", "a&b<c>d"},
		{"line\nnext\ttab", "line\nnext\ttab", "line\nnext\ttab"},
		{"cr\r", "cr&#xD;", "cr\r"},
		{"nul\x00bel\x07", "nul\uFFFDbel\uFFFD", "nul\uFFFDbel\uFFFD"},
		{"bad\xffutf8", "bad\uFFFDutf8", "bad\uFFFDutf8"},
		{"nonchar\uFFFE", "nonchar\uFFFD", "nonchar\uFFFD"},
		{"caf\u00e9 \U0001F600", "caf\u00e9 \U0001F600", "caf\u00e9 \U0001F600"},
	} {
		got := string(appendXMLText(nil, c.in))
		if got != c.out {
			t.Errorf("appendXMLText(%q) = %q, want %q", c.in, got, c.out)
		}
		var v struct {
			Text string `xml:",chardata"`
		}
		if err := xml.Unmarshal([]byte("<m>"+got+"</m>"), &v); err != nil || v.Text != c.back {
			t.Errorf("%q reads back as %q (%v), want %q", c.in, v.Text, err, c.back)
		}
	}
}
