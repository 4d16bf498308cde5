package etcd

import (
	"fmt"
	"testing"

	"github.com/localtable/localtable/storage"
)

// TestPlan pins the reduction of a batch to one etcd transaction (no key
// put twice, no put inside a deleted range: etcd refuses both) and the
// choice of the commits that may be replayed after a lost answer.
func TestPlan(t *testing.T) {
	e := &Engine{prefix: []byte("p/")}
	s := func(k, v string) bop { return bop{'s', []byte(k), []byte(v)} }
	d := func(k string) bop { return bop{'d', []byte(k), nil} }
	r := func(a, b string) bop { return bop{'r', []byte(a), []byte(b)} }
	c := func(k string, v storage.Version) storage.Condition {
		return storage.Condition{Key: []byte(k), Version: v}
	}
	tests := []struct {
		name    string
		ops     []bop
		conds   []storage.Condition
		want    string
		guarded bool
	}{
		{"last set wins", []bop{s("a", "1"), s("a", "2")}, nil, `put "p/a"="2"`, false},
		{"delete after set", []bop{s("a", "1"), d("a")}, nil, `del "p/a"`, false},
		{"set after delete", []bop{d("a"), s("a", "1")}, nil, `put "p/a"="1"`, false},
		{"range swallows earlier sets", []bop{s("b", "1"), d("c"), r("a", "z")}, nil, `del "p/a".."p/z"`, false},
		{"range cut around later sets", []bop{r("a", "z"), s("m", "1"), s("a", "2")},
			nil, `put "p/a"="2" put "p/m"="1" del "p/a\x00".."p/m" del "p/m\x00".."p/z"`, false},
		{"ranges merged", []bop{r("a", "c"), r("b", "d"), r("d", "e"), r("x", "x")}, nil, `del "p/a".."p/e"`, false},
		{"empty range", []bop{r("b", "a")}, nil, ``, false},
		{"set of a conditioned key", []bop{s("k", "1")}, []storage.Condition{c("k", 5)}, `put "p/k"="1"`, true},
		{"set of a key conditioned absent", []bop{s("k", "1")}, []storage.Condition{c("k", storage.NoVersion)}, `put "p/k"="1"`, true},
		{"condition on another key", []bop{s("k", "1")}, []storage.Condition{c("j", 5)}, `put "p/k"="1"`, false},
		{"delete of a present key", []bop{d("k")}, []storage.Condition{c("k", 5)}, `del "p/k"`, true},
		{"delete of a key conditioned absent", []bop{d("k")}, []storage.Condition{c("k", storage.NoVersion)}, `del "p/k"`, false},
		{"range over a present key", []bop{r("a", "z")}, []storage.Condition{c("k", 5)}, `del "p/a".."p/z"`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ops, _, guarded := e.plan(tc.ops, tc.conds)
			got := ""
			for i, o := range ops {
				if i > 0 {
					got += " "
				}
				switch {
				case o.IsPut():
					got += fmt.Sprintf("put %q=%q", o.KeyBytes(), o.ValueBytes())
				case o.IsDelete() && len(o.RangeBytes()) > 0:
					got += fmt.Sprintf("del %q..%q", o.KeyBytes(), o.RangeBytes())
				default:
					got += fmt.Sprintf("del %q", o.KeyBytes())
				}
			}
			if got != tc.want {
				t.Errorf("ops = %s\nwant  %s", got, tc.want)
			}
			if guarded != tc.guarded {
				t.Errorf("guarded = %v, want %v", guarded, tc.guarded)
			}
		})
	}
}
