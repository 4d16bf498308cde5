package tests

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

// writePaths are the ways to write an entity; every rule is checked on each.
var writePaths = []struct {
	name  string
	write func(tbl *localtable.Table, e localtable.Entity) error
}{
	{"Insert", func(tbl *localtable.Table, e localtable.Entity) error { _, err := tbl.Insert(ctx, e); return err }},
	{"UpsertReplace", func(tbl *localtable.Table, e localtable.Entity) error {
		_, err := tbl.Upsert(ctx, e, nil)
		return err
	}},
	{"UpsertMerge", func(tbl *localtable.Table, e localtable.Entity) error {
		_, err := tbl.Upsert(ctx, e, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
		return err
	}},
	{"UpdateReplace", func(tbl *localtable.Table, e localtable.Entity) error {
		if _, err := tbl.Upsert(ctx, localtable.Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey}, nil); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		_, err := tbl.Update(ctx, e, nil)
		return err
	}},
	{"UpdateMerge", func(tbl *localtable.Table, e localtable.Entity) error {
		if _, err := tbl.Upsert(ctx, localtable.Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey}, nil); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		_, err := tbl.Update(ctx, e, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge})
		return err
	}},
	{"Transact", func(tbl *localtable.Table, e localtable.Entity) error {
		_, err := tbl.Transact(ctx, []localtable.Action{{Type: localtable.ActionUpsertReplace, Entity: e}})
		return err
	}},
}

func manyProps(n int) localtable.Properties {
	p := localtable.Properties{}
	for i := 0; i < n; i++ {
		p[fmt.Sprintf("P%03d", i)] = localtable.Int32Value(int32(i))
	}
	return p
}

// sizedEntity returns an entity whose EntitySize is exactly size, made of
// binary properties.
func sizedEntity(size int) localtable.Entity {
	e := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{}}
	remaining := size - (4 + 2*2)
	for i := 0; remaining >= 8+6+4+localtable.MaxBinaryLen+8+2+4; i++ {
		e.Properties[fmt.Sprintf("b%02d", i)] = localtable.BinaryValue(make([]byte, localtable.MaxBinaryLen))
		remaining -= 8 + 6 + 4 + localtable.MaxBinaryLen
	}
	e.Properties["z"] = localtable.BinaryValue(make([]byte, remaining-(8+2+4)))
	return e
}

func TestEntityRules(t *testing.T) {
	dt := func(t time.Time) localtable.Value { return localtable.DateTimeValue(t) }
	cases := []struct {
		name string
		e    localtable.Entity
		code localtable.ErrorCode // "" means valid
	}{
		{"key chars ok", localtable.Entity{PartitionKey: "a b~!é\u00a0", RowKey: "\u00a0"}, ""},
		{"key slash", localtable.Entity{PartitionKey: "a/b"}, "InvalidInput"},
		{"key backslash", localtable.Entity{RowKey: `a\b`}, "InvalidInput"},
		{"key hash", localtable.Entity{RowKey: "a#b"}, "InvalidInput"},
		{"key question", localtable.Entity{PartitionKey: "a?b"}, "InvalidInput"},
		{"key NUL", localtable.Entity{PartitionKey: "a\x00"}, "InvalidInput"},
		{"key tab", localtable.Entity{RowKey: "a\tb"}, "InvalidInput"},
		{"key U+001F", localtable.Entity{RowKey: "\x1f"}, "InvalidInput"},
		{"key U+007F", localtable.Entity{RowKey: "\x7f"}, "InvalidInput"},
		{"key U+009F", localtable.Entity{RowKey: "\u009f"}, "InvalidInput"},
		{"key invalid UTF-8", localtable.Entity{RowKey: "\xff"}, "InvalidInput"},
		{"key 512 units", localtable.Entity{PartitionKey: strings.Repeat("k", 512), RowKey: strings.Repeat("k", 512)}, ""},
		{"key 513 units", localtable.Entity{PartitionKey: strings.Repeat("k", 513)}, "KeyValueTooLarge"},
		{"key 256 astral", localtable.Entity{RowKey: strings.Repeat("𝄞", 256)}, ""},
		{"key 257 astral", localtable.Entity{RowKey: strings.Repeat("𝄞", 257)}, "KeyValueTooLarge"},
		{"name 255", localtable.Entity{Properties: tabletest.Props(strings.Repeat("n", 255), 1)}, ""},
		{"name 256", localtable.Entity{Properties: tabletest.Props(strings.Repeat("n", 256), 1)}, "PropertyNameTooLong"},
		{"name underscore", localtable.Entity{Properties: tabletest.Props("_x1", 1, "é", 1)}, ""},
		{"name dash", localtable.Entity{Properties: tabletest.Props("a-b", 1)}, "PropertyNameInvalid"},
		{"name digit first", localtable.Entity{Properties: tabletest.Props("1a", 1)}, "PropertyNameInvalid"},
		{"name dot", localtable.Entity{Properties: tabletest.Props("odata.type", 1)}, "PropertyNameInvalid"},
		{"name space", localtable.Entity{Properties: tabletest.Props("a b", 1)}, "PropertyNameInvalid"},
		{"name empty", localtable.Entity{Properties: tabletest.Props("", 1)}, "PropertyNameInvalid"},
		{"name PartitionKey", localtable.Entity{Properties: tabletest.Props("PartitionKey", "x")}, "PropertyNameInvalid"},
		{"name Timestamp", localtable.Entity{Properties: tabletest.Props("Timestamp", time.Now())}, "PropertyNameInvalid"},
		{"252 properties", localtable.Entity{Properties: manyProps(252)}, ""},
		{"253 properties", localtable.Entity{Properties: manyProps(253)}, "TooManyProperties"},
		{"253 with a null", localtable.Entity{Properties: func() localtable.Properties {
			p := manyProps(252)
			p["Null"] = localtable.Value{}
			return p
		}()}, ""},
		{"string 32768 units", localtable.Entity{Properties: tabletest.Props("S", strings.Repeat("s", 32768))}, ""},
		{"string 32769 units", localtable.Entity{Properties: tabletest.Props("S", strings.Repeat("s", 32769))}, "PropertyValueTooLarge"},
		{"string 16384 astral", localtable.Entity{Properties: tabletest.Props("S", strings.Repeat("𝄞", 16384))}, ""},
		{"string 16385 astral", localtable.Entity{Properties: tabletest.Props("S", strings.Repeat("𝄞", 16385))}, "PropertyValueTooLarge"},
		{"string 32768 2-byte", localtable.Entity{Properties: tabletest.Props("S", strings.Repeat("é", 32768))}, ""},
		{"string invalid UTF-8", localtable.Entity{Properties: tabletest.Props("S", "a\xffb")}, "InvalidInput"},
		{"binary 64 KiB", localtable.Entity{Properties: tabletest.Props("B", make([]byte, 65536))}, ""},
		{"binary 64 KiB + 1", localtable.Entity{Properties: tabletest.Props("B", make([]byte, 65537))}, "PropertyValueTooLarge"},
		{"datetime min", localtable.Entity{Properties: localtable.Properties{"T": dt(localtable.MinDateTime)}}, ""},
		{"datetime min - 100ns", localtable.Entity{Properties: localtable.Properties{"T": dt(localtable.MinDateTime.Add(-100))}}, "OutOfRangeInput"},
		{"datetime max", localtable.Entity{Properties: localtable.Properties{"T": dt(localtable.MaxDateTime)}}, ""},
		{"datetime max + 100ns", localtable.Entity{Properties: localtable.Properties{"T": dt(localtable.MaxDateTime.Add(100))}}, "OutOfRangeInput"},
		{"datetime zero time", localtable.Entity{Properties: localtable.Properties{"T": dt(time.Time{})}}, "OutOfRangeInput"},
		{"datetime year 10000", localtable.Entity{Properties: localtable.Properties{"T": dt(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}}, "OutOfRangeInput"},
		{"entity 1 MiB", sizedEntity(localtable.MaxEntitySize), ""},
		{"entity 1 MiB + 1", sizedEntity(localtable.MaxEntitySize + 1), "EntityTooLarge"},
	}
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		for _, c := range cases {
			for _, w := range writePaths {
				e := c.e.Clone()
				if e.PartitionKey == "" && e.RowKey == "" {
					e.PartitionKey, e.RowKey = "p", "r"
				}
				tbl.Delete(ctx, e.PartitionKey, e.RowKey, nil) // clean slate where keys are valid
				err := w.write(tbl, e)
				if c.code == "" {
					if err != nil {
						t.Errorf("%s via %s: %v, want success", c.name, w.name, err)
					}
					continue
				}
				if got := localtable.ErrorCodeOf(err); got != c.code {
					t.Errorf("%s via %s: %v, want code %s", c.name, w.name, err, c.code)
				}
				// Nothing was written: the entity is absent or as set up (no properties).
				if got, err := tbl.Get(ctx, e.PartitionKey, e.RowKey, nil); err == nil && len(got.Properties) != 0 {
					t.Errorf("%s via %s: a failed write stored %d properties", c.name, w.name, len(got.Properties))
				}
			}
		}
	})
}

func TestEntitySizeFormula(t *testing.T) {
	e := localtable.Entity{PartitionKey: "ab", RowKey: "𝄞", Properties: localtable.Properties{
		"S": localtable.StringValue("hé"), "Bin": localtable.BinaryValue([]byte{1, 2, 3}),
		"B": localtable.BoolValue(true), "I": localtable.Int32Value(1), "L": localtable.Int64Value(1),
		"D": localtable.DoubleValue(1), "T": localtable.DateTimeValue(time.Now()),
		"G": localtable.GUIDValue(localtable.GUID{}), "N": {},
	}}
	want := 4 + 2*(2+2) +
		(8 + 2 + 4 + 4) + (8 + 6 + 4 + 3) + (8 + 2 + 1) + (8 + 2 + 4) + (8 + 2 + 8) +
		(8 + 2 + 8) + (8 + 2 + 8) + (8 + 2 + 16)
	if got := localtable.EntitySize(&e); got != want {
		t.Errorf("EntitySize = %d, want %d", got, want)
	}
}

func TestDateTimePrecision(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		in := time.Date(2020, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
		e := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"T": localtable.DateTimeValue(in)}}
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
		got, _ := tbl.Get(ctx, "p", "r", nil)
		want := time.Date(2020, 1, 2, 2, 4, 5, 123456700, time.UTC)
		if tm := got.Properties["T"].Time(); !tm.Equal(want) || tm.Location() != time.UTC {
			t.Errorf("stored %v, want %v (UTC, 100 ns)", tm, want)
		}
	})
}

func TestMergeBeyondLimits(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		base := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: manyProps(200)}
		if _, err := tbl.Insert(ctx, base); err != nil {
			t.Fatal(err)
		}
		extra := localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{}}
		for i := 0; i < 60; i++ {
			extra.Properties[fmt.Sprintf("X%02d", i)] = localtable.Int32Value(1)
		}
		for _, w := range []func() error{
			func() error {
				_, err := tbl.Update(ctx, extra, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge})
				return err
			},
			func() error {
				_, err := tbl.Upsert(ctx, extra, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
				return err
			},
		} {
			if err := w(); !errors.Is(err, localtable.ErrTooManyProperties) {
				t.Errorf("merge to 260 properties: %v, want ErrTooManyProperties", err)
			}
		}
		got, _ := tbl.Get(ctx, "p", "r", nil)
		if len(got.Properties) != 200 {
			t.Errorf("after failed merges: %d properties, want 200", len(got.Properties))
		}
		// Two 600 KiB halves merge into an entity over 1 MiB.
		big := func(name string) localtable.Entity {
			e := localtable.Entity{PartitionKey: "p", RowKey: "big", Properties: localtable.Properties{}}
			for i := 0; i < 10; i++ {
				e.Properties[fmt.Sprintf("%s%d", name, i)] = localtable.BinaryValue(make([]byte, 60000))
			}
			return e
		}
		if _, err := tbl.Insert(ctx, big("A")); err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Upsert(ctx, big("B"), &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge}); !errors.Is(err, localtable.ErrEntityTooLarge) {
			t.Errorf("merge to 1.2 MB: %v, want ErrEntityTooLarge", err)
		}
	})
}

// TestPropertyNameASCII checks ValidatePropertyName on every ASCII name of
// one and two characters, and on the edges of the length limit, against
// the rule ^[A-Za-z_][A-Za-z0-9_]*$ (up to 255 characters, not a system
// property name): ASCII names take a fast path of their own.
func TestPropertyNameASCII(t *testing.T) {
	first := func(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' }
	rest := func(c byte) bool { return first(c) || c >= '0' && c <= '9' }
	check := func(name string, want bool) {
		t.Helper()
		if err := localtable.ValidatePropertyName(name); (err == nil) != want {
			t.Errorf("ValidatePropertyName(%q) = %v, want valid %v", name, err, want)
		}
	}
	for a := 0; a < 128; a++ {
		check(string(rune(a)), first(byte(a)))
		for b := 0; b < 128; b++ {
			check(string([]byte{byte(a), byte(b)}), first(byte(a)) && rest(byte(b)))
		}
	}
	check(strings.Repeat("a", 255), true)
	check(strings.Repeat("a", 256), false)
	check("", false)
	for _, name := range []string{"PartitionKey", "RowKey", "Timestamp"} {
		check(name, false)
	}
	check("partitionKey", true)
}

// TestValidateKeys: ValidatePartitionKey and ValidateRowKey apply the
// rules every write applies to keys, and their errors name the key.
func TestValidateKeys(t *testing.T) {
	_, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	for _, c := range []struct {
		key  string
		want error
	}{
		{"", nil},
		{"a-b_c.d~e", nil},
		{strings.Repeat("é", localtable.MaxKeyUTF16), nil},
		{strings.Repeat("a", localtable.MaxKeyUTF16+1), localtable.ErrKeyTooLarge},
		{strings.Repeat("😀", localtable.MaxKeyUTF16/2) + "a", localtable.ErrKeyTooLarge}, // 2 code units each
		{"a/b", localtable.ErrInvalidInput},
		{"a\\b", localtable.ErrInvalidInput},
		{"a#b", localtable.ErrInvalidInput},
		{"a?b", localtable.ErrInvalidInput},
		{"a\tb", localtable.ErrInvalidInput},
		{"a\u0085b", localtable.ErrInvalidInput},
		{"a\xffb", localtable.ErrInvalidInput},
	} {
		for _, v := range []struct {
			name     string
			validate func(string) error
		}{{"PartitionKey", localtable.ValidatePartitionKey}, {"RowKey", localtable.ValidateRowKey}} {
			err := v.validate(c.key)
			switch {
			case c.want == nil && err != nil:
				t.Errorf("Validate%s(%.20q): %v, want valid", v.name, c.key, err)
			case c.want != nil && !errors.Is(err, c.want):
				t.Errorf("Validate%s(%.20q): %v, want %v", v.name, c.key, err, c.want)
			case c.want != nil && !strings.Contains(err.Error(), v.name):
				t.Errorf("Validate%s(%.20q): %v does not name the %s", v.name, c.key, err, v.name)
			}
			// A write applies the same rules.
			e := localtable.Entity{PartitionKey: "p", RowKey: "r"}
			if v.name == "PartitionKey" {
				e.PartitionKey = c.key
			} else {
				e.RowKey = c.key
			}
			if _, werr := tbl.Upsert(ctx, e, nil); (werr == nil) != (c.want == nil) {
				t.Errorf("%s %.20q: Validate%s says %v, a write %v", v.name, c.key, v.name, err, werr)
			}
		}
	}
}
