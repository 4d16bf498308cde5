package doccheck_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/localtable/localtable/internal/doccheck"
)

// TestRepositoryDocumented: every exported name of every package in the
// repository (the main module, bench and storage/etcd) has a doc comment.
func TestRepositoryDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root is not two directories up: %v", err)
	}
	problems, err := doccheck.Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckFindsEachKind: the checker reports each kind of undocumented
// exported name, and accepts each way of documenting one.
func TestCheckFindsEachKind(t *testing.T) {
	dir := t.TempDir()
	src := `// Package p is a test package.
package p

func Undocumented() {}

// Documented is documented.
func Documented() {}

// Returns nothing: this comment does not begin with the name.
func Misnamed() {}

// A Article begins with an article.
type Article struct{}

func unexported() {}

type U int

// T has one field, Named, that its doc comment names: this line is its doc.
type T struct {
	Field    int
	Named    int
	Line     int // Line has a line comment.
	// Doc has a doc comment.
	Doc      int
	private  int
	Embedded
	// Group documents Group and Member, the field after it.
	Group  int
	Member int
	Other  int

	Alone int
}

// Embedded is embedded.
type Embedded struct{}

// Pair is documented with its fields: First and Second.
type Pair struct{ First, Second int }

func (T) Method() {}

func (*T) PtrMethod() {}

// Iface is documented, one of its methods is not.
type Iface interface {
	Bare()
	// Noted is documented.
	Noted()
}

const Lone = 1

// Group documents all of its constants.
const (
	G1 = 1
	G2 = 2
)

const (
	H1 = 1 // H1 has a line comment.
	H2 = 2
)

var V, W int

func NewT() T { return T{} }

type hidden struct{}

func (hidden) Exported() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// Test files, testdata and package main are not checked.
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc InTest() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"testdata", "cmd"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "testdata", "x.go"), []byte("package x\n\nfunc InTestdata() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cmd", "main.go"), []byte("package main\n\nfunc InMain() {}\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, err := doccheck.Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.What+" "+p.Name+" "+p.Msg)
	}
	const no, misnamed = " has no doc comment", " has a doc comment that does not begin with its name"
	want := []string{
		"func Undocumented" + no,
		"func Misnamed" + misnamed,
		"type U" + no,
		"field T.Field" + no,
		"field T.Other" + no,
		"field T.Alone" + no,
		"method T.Method" + no,
		"method T.PtrMethod" + no,
		"interface method Iface.Bare" + no,
		"const Lone" + no,
		"const H2" + no,
		"var V" + no,
		"var W" + no,
		"func NewT" + no,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check reported\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if len(problems) > 0 && (problems[0].Pos.Filename != "p.go" || problems[0].Pos.Line != 4) {
		t.Errorf("first problem at %s:%d, want p.go:4", problems[0].Pos.Filename, problems[0].Pos.Line)
	}
}

// TestCitedDocsExist: every Markdown file a Go file of the repository
// names (docs/protocol.md, README.md, …) is in the repository, at that
// path from the root or from the citing file's directory: the code must
// not cite documents a reader cannot open.
func TestCitedDocsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	cite := regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b`)
	// A bare name (results.md, a file the benchmark program writes) may
	// be anywhere in the repository.
	names := map[string]bool{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".md") {
			names[d.Name()] = true
		}
		return nil
	})
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "node_modules" || n == "testdata" || (strings.HasPrefix(n, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range cite.FindAllString(string(src), -1) {
			if strings.Contains(m, "://") || strings.HasPrefix(m, "/") || (!strings.Contains(m, "/") && names[m]) {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, m)); err == nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), m)); err == nil {
				continue
			}
			t.Errorf("%s cites %s, which is not in the repository", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// markdownFiles returns README.md, docs/*.md and the repository's other
// Markdown files (not under node_modules, testdata or hidden directories),
// relative to root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "node_modules" || n == "testdata" || (strings.HasPrefix(n, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"README.md", filepath.Join("docs", "protocol.md")} {
		found := false
		for _, f := range files {
			found = found || f == must
		}
		if !found {
			t.Fatalf("%s not found among the Markdown files %v", must, files)
		}
	}
	return files
}

// TestDocLinksResolve: every relative link in README.md, docs/*.md and
// the repository's other Markdown files names a file or directory of the
// repository, and each #anchor on a Markdown file (README's own sections
// included) names one of its headings.
func TestDocLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	problems, err := doccheck.CheckLinks(root, markdownFiles(t, root))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckLinksFindsBroken: CheckLinks reports a missing file, a missing
// anchor (in the file itself and in another), a link out of the
// repository and an absolute path, and accepts what resolves, ignoring
// URLs and code.
func TestCheckLinksFindsBroken(t *testing.T) {
	dir := t.TempDir()
	// The fixtures spell .md as .MD, made .md here, so that
	// TestCitedDocsExist does not take them for citations.
	md := func(s string) string { return strings.ReplaceAll(s, ".MD", ".md") }
	write := func(name, text string) {
		t.Helper()
		name, text = md(name), md(text)
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/guide.MD", "# Guide\n\n## Set up: the `two` commands\n\n## Notes\n\n## Notes\n\n<a id=\"old-name\"></a>\n\nBack to [README](../README.MD#top-level).\n")
	write("src/x.go", "package x\n")
	write("README.MD", "# Top level\n\n"+
		"[ok file](docs/guide.MD) [ok dir](src) [ok image](docs/guide.MD \"title\")\n"+
		"[ok anchor](#top-level) [ok other](docs/guide.MD#set-up-the-two-commands) [ok repeat](docs/guide.MD#notes-1)\n"+
		"[ok html](docs/guide.MD#old-name) [url](https://example.com/x.MD) [mail](mailto:a@b.c)\n"+
		"`[code](missing.MD)`\n"+
		"```\n[fenced](missing.MD)\n## Not a heading\n```\n"+
		"[missing](docs/missing.MD)\n"+
		"[bad anchor](#no-such-section)\n"+
		"[bad other](docs/guide.MD#notes-2)\n"+
		"[fenced heading](#not-a-heading)\n"+
		"[outside](../elsewhere.MD)\n"+
		"[absolute](/etc/passwd)\n"+
		"[ref]: docs/nothing.MD\n")
	problems, err := doccheck.CheckLinks(dir, []string{"README.md", filepath.Join("docs", md("guide.MD"))})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		"README.MD:11: link docs/missing.MD: no such file or directory",
		"README.MD:12: link #no-such-section: no heading with the anchor #no-such-section",
		"README.MD:13: link docs/guide.MD#notes-2: no heading with the anchor #notes-2",
		"README.MD:14: link #not-a-heading: no heading with the anchor #not-a-heading",
		"README.MD:15: link ../elsewhere.MD: outside the repository",
		"README.MD:16: link /etc/passwd: an absolute path: link relative to the file",
		"README.MD:17: link docs/nothing.MD: no such file or directory",
	}
	for i := range want {
		want[i] = md(want[i])
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("CheckLinks reported\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestSlug: headings get GitHub's anchors.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Set up": "set-up",
		"Where it differs from the service, on purpose":           "where-it-differs-from-the-service-on-purpose",
		"Outside Go: over HTTP, `localtable watch`, and in tests": "outside-go-over-http-localtable-watch-and-in-tests",
		"The [explorer](https://example.com/) ##":                 "the-explorer",
		"Compared with the .NET in-memory test SDK":               "compared-with-the-net-in-memory-test-sdk",
		"`$batch` byte_for byte":                                  "batch-byte_for-byte",
	} {
		if got := doccheck.Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}
