package tests

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/localtable/localtable"
)

// TestCompoundKeyRange checks CompoundKeyRange against its definition on
// random part lists over an alphabet of the characters that matter to the
// encoding: the separator, the escaped regions' edges, and plain letters.
func TestCompoundKeyRange(t *testing.T) {
	alphabet := []string{"", "a", "b", "!", "\"", "#", " ", "\x00", ".", "~", "é", "\U0001F600", "ab"}
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func() []string {
		parts := make([]string, 1+rng.IntN(3))
		for i := range parts {
			parts[i] = alphabet[rng.IntN(len(alphabet))] + alphabet[rng.IntN(len(alphabet))]
		}
		return parts
	}
	for range 3000 {
		prefix, key := gen(), gen()
		if rng.IntN(3) == 0 { // often, an extension of the prefix
			key = append(slices.Clone(prefix), key...)
		}
		lo, hi := localtable.CompoundKeyRange(prefix...)
		k := localtable.CompoundKey(key...)
		in := lo <= k && k < hi // no U+E000–U+FFFF here, so Go's byte order is UTF-16 order
		want := len(key) > len(prefix) && slices.Equal(key[:len(prefix)], prefix)
		if in != want {
			t.Fatalf("CompoundKey(%q) = %q in CompoundKeyRange(%q) = [%q, %q): %v, want %v", key, k, prefix, lo, hi, in, want)
		}
	}
}
