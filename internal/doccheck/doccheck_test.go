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
