package cli

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestSuggestions: an unknown command or a mistyped flag is answered with
// the command or flag meant, as far as it can be told.
func TestSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explore"}, `unknown command "explore": the web explorer is served by 'localtable serve' (the default command)`},
		{[]string{"help", "explorer"}, `unknown command "explorer": the web explorer is served by 'localtable serve'`},
		{[]string{"qeury", "T"}, `unknown command "qeury": did you mean 'localtable query'?`},
		{[]string{"tabels"}, `unknown command "tabels": did you mean 'localtable tables'?`},
		{[]string{"ls"}, `unknown command "ls": did you mean 'localtable tables'?`},
		{[]string{"query", "T", "--filer", "x"}, "flag provided but not defined: -filer: did you mean --filter?"},
		{[]string{"query", "T", "--locaton", "x"}, "flag provided but not defined: -locaton: did you mean --location?"},
		{[]string{"--adr", "127.0.0.1:0"}, "flag provided but not defined: -adr: did you mean --addr?"},
	} {
		err := run(context.Background(), c.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v\nwant it to hold %q", c.args, err, c.want)
		}
	}
	// Nothing near: no suggestion.
	if err := run(context.Background(), []string{"frobnicate"}, io.Discard, io.Discard); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("frobnicate: %v", err)
	}
}
