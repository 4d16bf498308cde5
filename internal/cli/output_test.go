package cli

import (
	"context"
	"errors"
	"io"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestOutputFlagsMatchTheirHelp: every command's -o help lists the values
// the command accepts, and the command runs with each; a value not
// listed is a usage error that names the flag.
func TestOutputFlagsMatchTheirHelp(t *testing.T) {
	loc := t.TempDir()
	for _, args := range [][]string{
		{"tables", "create", "Things"},
		{"put", "Things", "p", "r", "N@Edm.Int32=1"},
	} {
		if _, _, err := runCmd(append(args, "--location", loc)...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	// The arguments of a run of each command that has -o.
	runArgs := map[string][]string{
		"query": {"Things"},
		"get":   {"Things", "p", "r"},
		"stats": {"Things"},
		"watch": {"Things"},
	}
	helpRE := regexp.MustCompile(`(?m)^  -o \S+\n\s+(?:the )?output(?: format)?: (.*?) \(default "?([^")]+)"?\)$`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	seen := 0
	for _, name := range names {
		help, _, err := runCmd(name, "--help")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(help, "\n  -o ") {
			continue
		}
		m := helpRE.FindStringSubmatch(help)
		if m == nil {
			t.Errorf("%s --help: -o without a list of formats:\n%s", name, help)
			continue
		}
		seen++
		values := strings.FieldsFunc(strings.ReplaceAll(m[1], " or ", ","), func(r rune) bool { return r == ',' || r == ' ' })
		if !strings.Contains(","+strings.Join(values, ",")+",", ","+m[2]+",") {
			t.Errorf("%s: the default %q is not among %v", name, m[2], values)
		}
		a, ok := runArgs[name]
		if !ok {
			t.Errorf("%s has -o: give it arguments in runArgs", name)
			continue
		}
		for _, v := range values {
			args := append([]string{name}, a...)
			args = append(args, "-o", v, "--location", loc)
			if err := run(context.Background(), args, io.Discard, io.Discard); err != nil {
				t.Errorf("%s -o %s (listed in its help): %v", name, v, err)
			}
		}
		args := append([]string{name}, a...)
		var u *usageError
		err = run(context.Background(), append(args, "-o", "bogus", "--location", loc), io.Discard, io.Discard)
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "-o") {
			t.Errorf("%s -o bogus: %v, want a usage error naming -o", name, err)
		}
	}
	if seen != len(runArgs) {
		t.Errorf("%d commands have -o, want %d (%v)", seen, len(runArgs), runArgs)
	}
}
