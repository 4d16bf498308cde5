package cli

import (
	"context"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestHelpExamplesParse runs every command's help examples through the
// shell, with localtable a function that prints its arguments, and checks
// what the command would get: its flags parse (the command runs with
// --help appended), an --if-match is an ETag as get prints it (quoted
// right for the shell), and a data command names its data.
func TestHelpExamplesParse(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	etag := regexp.MustCompile(`^(\*|W/"datetime'[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}%3A[0-9]{2}%3A[0-9]{2}\.[0-9]{7}Z'")$`)
	for name, c := range commands {
		help, _, err := runCmd(name, "--help")
		if err != nil {
			t.Fatal(err)
		}
		dataCommand := name != "serve" && strings.Contains(help, "\n  -endpoint ")
		for _, line := range strings.Split(strings.TrimSpace(c.examples), "\n") {
			line = strings.TrimSpace(line)
			script := `localtable() { for a in "$@"; do printf '%s\0' "$a"; done; printf '\n'; }; ` + line
			out, err := exec.Command(sh, "-c", script).Output()
			if err != nil {
				t.Errorf("%s example %q: the shell fails: %v", name, line, err)
				continue
			}
			args := strings.Split(strings.TrimSuffix(strings.TrimSuffix(string(out), "\n"), "\x00"), "\x00")
			if len(args) == 1 && args[0] == "" {
				args = nil
			}
			if len(args) > 0 && args[0] != name && name != "serve" && !(name == "version" && args[0] == "--version") {
				t.Errorf("%s example %q runs %q", name, line, args[0])
			}
			if err := run(context.Background(), append(args, "--help"), io.Discard, io.Discard); err != nil {
				t.Errorf("%s example %q: %v", name, line, err)
			}
			source := false
			for i, a := range args {
				switch a {
				case "--if-match":
					if i+1 < len(args) && !etag.MatchString(args[i+1]) {
						t.Errorf("%s example %q: --if-match gets %s, not an ETag", name, line, args[i+1])
					}
				case "--location", "--endpoint", "--connection-string":
					source = true
				}
			}
			if dataCommand && !source && !strings.Contains(line, "LOCALTABLE_CONNECTION_STRING=") {
				t.Errorf("%s example %q names no data (--location, --endpoint, --connection-string)", name, line)
			}
		}
	}
}
