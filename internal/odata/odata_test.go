package odata

import (
	"errors"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"": "''", "a": "'a'", "it's": "'it''s'", "''": "''''''"} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
		v, n, ok := ReadString(want + ",rest")
		if !ok || v != in || n != len(want) {
			t.Errorf("ReadString(%s,rest) = %q, %d, %v; want %q, %d, true", want, v, n, ok, in, len(want))
		}
	}
}

func TestReadStringBad(t *testing.T) {
	for _, s := range []string{"", "a", "'", "'abc", "'it''", " 'a'"} {
		if v, n, ok := ReadString(s); ok {
			t.Errorf("ReadString(%q) = %q, %d, true; want not ok", s, v, n)
		}
	}
}

func TestParseKeys(t *testing.T) {
	for _, c := range []struct {
		in     string
		pk, rk string
		ok     bool
	}{
		{"PartitionKey='a',RowKey='b'", "a", "b", true},
		{"RowKey='b',PartitionKey='a'", "a", "b", true},
		{" PartitionKey = 'a' , RowKey = 'b' ", "a", "b", true},
		{"PartitionKey='it''s',RowKey=''", "it's", "", true},
		{"PartitionKey='a/b',RowKey='(c)'", "a/b", "(c)", true},
		{"PartitionKey='a'", "", "", false},
		{"PartitionKey='a',PartitionKey='b'", "", "", false},
		{"PartitionKey='a',RowKey='b',Other='c'", "", "", false},
		{"PartitionKey='a' RowKey='b'", "", "", false},
		{"PartitionKey='a'b',RowKey='c'", "", "", false},
		{"PartitionKey=a,RowKey='b'", "", "", false},
		{"PartitionKey='a',RowKey='b',", "", "", false},
		{"", "", "", false},
	} {
		pk, rk, err := ParseKeys(c.in)
		switch {
		case c.ok && (err != nil || pk != c.pk || rk != c.rk):
			t.Errorf("ParseKeys(%q) = %q, %q, %v; want %q, %q", c.in, pk, rk, err, c.pk, c.rk)
		case !c.ok && !errors.Is(err, ErrBadKeys):
			t.Errorf("ParseKeys(%q) = %q, %q, %v; want ErrBadKeys", c.in, pk, rk, err)
		}
	}
}

// FuzzParseKeys checks that any key list either parses or is ErrBadKeys,
// never a panic, and that what parses is what quoting writes back.
func FuzzParseKeys(f *testing.F) {
	f.Add("PartitionKey='a',RowKey='b'")
	f.Add("RowKey='it''s', PartitionKey=''")
	f.Fuzz(func(t *testing.T, s string) {
		pk, rk, err := ParseKeys(s)
		if err != nil {
			if !errors.Is(err, ErrBadKeys) || pk != "" || rk != "" {
				t.Fatalf("ParseKeys(%q) = %q, %q, %v", s, pk, rk, err)
			}
			return
		}
		again := "PartitionKey=" + Quote(pk) + ",RowKey=" + Quote(rk)
		pk2, rk2, err := ParseKeys(again)
		if err != nil || pk2 != pk || rk2 != rk {
			t.Fatalf("ParseKeys(%q) = %q, %q; its quoted form %q reads as %q, %q, %v", s, pk, rk, again, pk2, rk2, err)
		}
	})
}
