package doccheck

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// LinkProblem is a relative link in a Markdown file that does not resolve.
type LinkProblem struct {
	File   string // the Markdown file holding the link, relative to the root
	Line   int    // the line of the link, from 1
	Target string // the link's target as written
	Msg    string // what is wrong with it
}

// String formats p as "file:line: link target: msg".
func (p LinkProblem) String() string {
	return fmt.Sprintf("%s:%d: link %s: %s", p.File, p.Line, p.Target, p.Msg)
}

var (
	// inlineLink matches [text](target) and ![alt](target), the target
	// without spaces (an optional "title" after it is left out).
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^\s()<>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refDef matches a reference definition: [name]: target.
	refDef = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// codeSpan matches an inline code span, whose text is not a link.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// htmlAnchor matches an explicit anchor, <a id="x"> or <a name="x">.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// scheme matches a target that is a URL (https:, mailto:, …).
	scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// CheckLinks reads each Markdown file in files (paths relative to root)
// and returns its relative links that do not resolve: a target must be a
// file or directory inside root, and a #fragment on a Markdown file (or
// alone, for the file itself) must name one of its headings, as GitHub
// makes their anchors, or an explicit <a id>. Links to URLs, and text in
// code blocks and code spans, are not checked.
func CheckLinks(root string, files []string) ([]LinkProblem, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	anchors := map[string]map[string]bool{} // Markdown file (absolute) → its anchors
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := Anchors(string(src))
		anchors[path] = a
		return a, nil
	}
	var problems []LinkProblem
	for _, file := range files {
		path := filepath.Join(absRoot, file)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for _, l := range links(string(src)) {
			target := l.target
			if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
				continue
			}
			report := func(msg string) {
				problems = append(problems, LinkProblem{File: filepath.ToSlash(file), Line: l.line, Target: target, Msg: msg})
			}
			ref, frag, _ := strings.Cut(target, "#")
			dest := path
			if ref != "" {
				if strings.HasPrefix(ref, "/") {
					report("an absolute path: link relative to the file")
					continue
				}
				dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(ref))
				if rel, err := filepath.Rel(absRoot, dest); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
					report("outside the repository")
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					report("no such file or directory")
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				return nil, err
			}
			if !a[frag] {
				report(fmt.Sprintf("no heading with the anchor #%s", frag))
			}
		}
	}
	return problems, nil
}

// link is one link target and the line it is on.
type link struct {
	target string
	line   int
}

// proseLines yields the index and text of each line of a Markdown text
// outside its fenced code blocks (``` or ~~~).
func proseLines(src string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fence := ""
		for i, line := range strings.Split(src, "\n") {
			trimmed := strings.TrimSpace(line)
			if fence != "" {
				if strings.HasPrefix(trimmed, fence) {
					fence = ""
				}
				continue
			}
			if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
				fence = trimmed[:3]
				continue
			}
			if !yield(i, line) {
				return
			}
		}
	}
}

// links returns the targets of the inline links, images and reference
// definitions of a Markdown text, outside fenced code blocks and code
// spans.
func links(src string) []link {
	var out []link
	for i, line := range proseLines(src) {
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, link{m[1], i + 1})
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{m[1], i + 1})
		}
	}
	return out
}

// Anchors returns the anchors of a Markdown text's headings, made as
// GitHub makes them (lower case; letters, digits, spaces, hyphens and
// underscores kept, spaces made hyphens; "-1", "-2"… after a repeated
// one), and its explicit <a id="…"> and <a name="…"> anchors. Headings in
// fenced code blocks are not headings.
func Anchors(src string) map[string]bool {
	set := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(src) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			set[m[1]] = true
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if len(line)-len(text) > 6 || (text != "" && text[0] != ' ' && text[0] != '\t') {
			continue
		}
		slug := Slug(text)
		if n := seen[slug]; n > 0 {
			set[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			set[slug] = true
		}
		seen[slug]++
	}
	return set
}

// mdLink matches a Markdown link in a heading, whose text is its anchor's.
var mdLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// Slug returns the anchor GitHub gives a heading of the text: the text
// of its links and code spans, lower case, with everything but letters,
// digits, spaces, hyphens and underscores removed and spaces made hyphens.
func Slug(heading string) string {
	heading = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(heading), "#"))
	heading = mdLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
