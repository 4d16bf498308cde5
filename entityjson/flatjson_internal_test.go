package entityjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/localtable/localtable"
)

var flatSeeds = []string{
	`{"PartitionKey":"p","RowKey":"r","N":1,"D":1.5,"B":true,"F":false,"Z":null}`,
	` { "PartitionKey" : "p" , "RowKey":"r\u00e9\n\"","X@odata.type":"Edm.Int64","X":"5" } `,
	`{}`, `{"a":1}x`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":+1}`, `{"a":1E+5}`, `{"a":-0.0e-0}`,
	`{"a":"\x"}`, `{"a":"\u12"}`, `{"a\"b":1}`, `{"a":1,"a":2}`, `{"a":{"b":1}}`, `{"a":[1]}`, `{"a":tru}`,
	`{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `["a"]`, ``, `{"a":"` + "\xff" + `"}`, `{"` + "\xff" + `":1}`,
	`{"PartitionKey":"p","RowKey":"r","T@odata.type":"Edm.DateTime","T":"2024-01-01T00:00:00Z"}`,
	`{"PartitionKey":"p","RowKey":"r","N":2147483648,"M":-2147483648,"Big":1e400}`,
	"{\"a\":\"tab\there\"}", `{"a":"ok"}   ` + "\n",
}

// FuzzScanFlatObject checks the fast reader against ReadObject: whatever
// it accepts, ReadObject reads the same; and Decode, which
// uses it, decodes as DecodeRequest does, with the same error codes.
func FuzzScanFlatObject(f *testing.F) {
	for _, s := range flatSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, vals, ok := scanFlatObject(b, false)
		wkeys, wvals, err := ReadObject(b)
		if ok {
			if err != nil {
				t.Fatalf("%q: the fast reader accepts what ReadObject refuses (%v)", b, err)
			}
			if !slices.Equal(keys, wkeys) || len(vals) != len(wvals) {
				t.Fatalf("%q: keys %q, ReadObject %q", b, keys, wkeys)
			}
			for k, v := range wvals {
				if !bytes.Equal(vals[k], v) {
					t.Fatalf("%q: %s is %q, ReadObject %q", b, k, vals[k], v)
				}
			}
		}
		got, gerr := Decode(b, false)
		want, _, werr := DecodeRequest(b, true)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, DecodeRequest %v", b, gerr, werr)
		}
		if gerr != nil {
			var g, w *localtable.Error
			if !errors.As(gerr, &g) || !errors.As(werr, &w) || g.Code != w.Code || g.Message != w.Message {
				t.Fatalf("%q: error %v, DecodeRequest %v", b, gerr, werr)
			}
			return
		}
		if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey || len(got.Properties) != len(want.Properties) {
			t.Fatalf("%q: %+v, DecodeRequest %+v", b, got, want)
		}
		for k, v := range want.Properties {
			if g := got.Properties[k]; g.Kind() != v.Kind() || (!g.Equal(v) && !(v.Kind() == localtable.KindDouble && v.Double() != v.Double())) {
				t.Fatalf("%q: %s %v, DecodeRequest %v", b, k, g, v)
			}
		}
	})
}

// The seeds the fast reader must accept do take the fast path.
func TestScanFlatObjectAcceptsEntityLines(t *testing.T) {
	for _, s := range flatSeeds[:3] {
		if _, _, ok := scanFlatObject([]byte(s), false); !ok {
			t.Errorf("%s: not read by the fast path", s)
		}
	}
	for _, s := range []string{`{"a":01}`, `{"a\"b":1}`, `{"a":1,"a":2}`, `{"a":{"b":1}}`, `{"a":1}x`, `{"a":"` + "\xff" + `"}`} {
		if _, _, ok := scanFlatObject([]byte(s), false); ok && s != `{"a":"`+"\xff"+`"}` {
			t.Errorf("%s: taken by the fast path", s)
		}
	}
}

// unquote reads what json.Unmarshal reads into a string, and fails where
// it fails: for strings with and without escapes, control characters and
// multi-byte runes; it also fails on invalid UTF-8, which json.Unmarshal
// replaces with U+FFFD.
func TestUnquote(t *testing.T) {
	pieces := []string{"plain", `\"`, `\\`, `\u00e9`, `\n`, "é", "😀", "\xff", "\xe2\x80", "\x01", "\t", `"`, " ", "\u2028"}
	r := rand.New(rand.NewPCG(11, 12))
	for range 50_000 {
		var b strings.Builder
		b.WriteByte('"')
		for range r.IntN(5) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		b.WriteByte('"')
		raw := json.RawMessage(b.String())
		got, gerr := unquote(raw, false)
		var want string
		werr := json.Unmarshal(raw, &want)
		if !utf8.Valid(raw) {
			if gerr == nil {
				t.Fatalf("unquote(%q) = %q, want an error", raw, got)
			}
			continue
		}
		if (gerr == nil) != (werr == nil) || got != want {
			t.Fatalf("unquote(%q) = %q, %v; json.Unmarshal: %q, %v", raw, got, gerr, want, werr)
		}
	}
}
