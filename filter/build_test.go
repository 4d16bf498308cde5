package filter_test

import (
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

func TestBuilder(t *testing.T) {
	g := localtable.MustParseGUID("0f8fad5b-d9cb-469f-a165-70867728950e")
	tests := []struct {
		f    *filter.Filter
		want string
	}{
		{filter.Prop("S").Eq("it's"), "S eq 'it''s'"},
		{filter.Prop("I").Ne(int32(-3)), "I ne -3"},
		{filter.Prop("L").Gt(7), "L gt 7L"},
		{filter.Prop("D").Ge(2.0), "D ge 2.0"},
		{filter.Prop("B").Lt(false), "B lt false"},
		{filter.Prop("T").Le(time.Date(2008, 7, 10, 0, 0, 0, 1234567800, time.UTC)), "T le datetime'2008-07-10T00:00:01.2345678Z'"},
		{filter.Prop("G").Eq(g), "G eq guid'0f8fad5b-d9cb-469f-a165-70867728950e'"},
		{filter.Prop("X").Eq([]byte{0xab, 1}), "X eq X'AB01'"},
		{filter.And(nil, filter.RowKey().Eq("r"), nil), "RowKey eq 'r'"},
		{filter.And(filter.Prop("A").Eq(1), filter.And(filter.Prop("B").Eq(2), filter.Prop("C").Eq(3))), "A eq 1L and (B eq 2L and C eq 3L)"},
		{filter.And(filter.Or(filter.Prop("A").Eq(1), filter.Prop("B").Eq(2)), filter.Prop("C").Eq(3)), "(A eq 1L or B eq 2L) and C eq 3L"},
		{filter.Not(filter.Not(filter.Prop("A").Eq(true))), "not not (A eq true)"},
		{filter.Const(true), "true"},
		{filter.Const(false), "false"},
		{filter.Or(), "false"},
		{filter.Not(nil), "false"},
		{filter.Not(filter.Const(true)), "not true"},
		{filter.Or(filter.Const(false), filter.RowKey().Eq("r")), "false or RowKey eq 'r'"},
		{filter.And(filter.Const(true), filter.Or(filter.Const(false), filter.Prop("A").Eq(int32(1)))), "true and (false or A eq 1)"},
	}
	for _, test := range tests {
		if got := test.f.String(); got != test.want {
			t.Errorf("got %q, want %q", got, test.want)
		}
		p, err := filter.Parse(test.f.String())
		if err != nil || !filter.Equal(p.Expr(), test.f.Expr()) {
			t.Errorf("round trip %q: %v", test.want, err)
		}
	}
	if filter.And() != nil || filter.And(nil) != nil || filter.Or(filter.Prop("A").Eq(1), nil) != nil {
		t.Error("nil handling")
	}
	// Or of nothing and the negation of everything match nothing and plan
	// no ranges.
	e := (&localtable.Entity{PartitionKey: "p", RowKey: "r"}).Set("A", localtable.Int32Value(1))
	for _, f := range []*filter.Filter{filter.Or(), filter.Not(nil), filter.Const(false)} {
		if rs, ok := f.KeyRanges(); f.Match(e) || !ok || len(rs) != 0 {
			t.Errorf("%s: Match %v, ranges %v %v", f, f.Match(e), rs, ok)
		}
	}
	if f := filter.Const(true); !f.Match(e) {
		t.Errorf("%s does not match", f)
	}
}

func TestBuilderPanics(t *testing.T) {
	for name, fn := range map[string]func(){
		"keyword":     func() { filter.Prop("and") },
		"empty":       func() { filter.Prop("") },
		"digit first": func() { filter.Prop("1a") },
		"dash":        func() { filter.Prop("a-b") },
		"nil value":   func() { filter.Prop("A").Eq(nil) },
		"bad type":    func() { filter.Prop("A").Eq(uint8(1)) },
		"old time":    func() { filter.Prop("A").Eq(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			fn()
		}()
	}
}

func TestFormat(t *testing.T) {
	f, err := filter.Format("PartitionKey eq {} and (A eq {} or T lt {})", "o'k", int64(1), time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if want := "PartitionKey eq 'o''k' and (A eq 1L or T lt datetime'2020-01-01T00:00:00Z')"; f.String() != want {
		t.Errorf("got %s", f)
	}
	for _, test := range []struct {
		format string
		args   []any
		msg    string
	}{
		{"A eq {}", nil, "more placeholders"},
		{"A eq {}", []any{1, 2}, "1 placeholders but 2 arguments"},
		{"A eq {}", []any{struct{}{}}, "argument 0"},
		{"A eq {}", []any{nil}, "non-null"},
		{"A eq {} {}", []any{1, 2}, "syntax error"},
		{"A eq '{}'", []any{1}, "0 placeholders but 1 arguments"},
	} {
		_, err := filter.Format(test.format, test.args...)
		if err == nil || !strings.Contains(err.Error(), test.msg) {
			t.Errorf("Format(%q, %v) = %v, want %q", test.format, test.args, err, test.msg)
		}
	}
}
