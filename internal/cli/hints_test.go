package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingTableHints: on a data directory and over a server, the
// commands on a table that does not exist say how to create it (import:
// its --create), right after the message; over a server the service's
// message comes without its RequestId: and Time: lines.
func TestMissingTableHints(t *testing.T) {
	dir := t.TempDir()
	runOut(t, "tables", "create", "Orders", "--location", dir)
	file := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(file, []byte(`{"PartitionKey":"p","RowKey":"r"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := map[string][]string{
		"query":  {"query", "Nope"},
		"get":    {"get", "Nope", "p", "r"},
		"put":    {"put", "Nope", "p", "r", "A=1"},
		"delete": {"delete", "Nope", "p", "r"},
		"import": {"import", "Nope", file},
	}
	check := func(where string, source []string) {
		for name, args := range cmds {
			err := run(context.Background(), append(append([]string{}, args...), source...), io.Discard, io.Discard)
			want := ": create it with 'localtable tables create Nope'"
			if name == "import" {
				want = ": add --create to create it"
			}
			if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "RequestId:") || strings.Contains(err.Error(), "Time:") {
				t.Errorf("%s %s: %v\nwant it to end with %q, and no RequestId: or Time:", where, name, err, want)
			}
		}
	}
	check("offline", []string{"--location", dir})
	stop, cs := serveUntilReady(t, "--location", dir)
	defer stop()
	check("over a server", []string{"--connection-string", cs})
}
