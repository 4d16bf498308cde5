package tableio_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tableio"
)

func entities() []localtable.Entity {
	g, _ := localtable.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	return []localtable.Entity{
		{PartitionKey: "p,1", RowKey: "r \"one\"", Properties: localtable.Properties{
			"S": localtable.StringValue("multi\nline, \"quoted\""), "Empty": localtable.StringValue(""), "Pad": localtable.StringValue(" padded "),
			"I32": localtable.Int32Value(math.MinInt32), "I64": localtable.Int64Value(math.MaxInt64),
			"D": localtable.DoubleValue(1), "Neg0": localtable.DoubleValue(math.Copysign(0, -1)), "NaN": localtable.DoubleValue(math.NaN()),
			"Inf": localtable.DoubleValue(math.Inf(-1)), "Small": localtable.DoubleValue(5e-324),
			"B": localtable.BoolValue(false), "T": localtable.DateTimeValue(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)),
			"G": localtable.GUIDValue(g), "Bin": localtable.BinaryValue([]byte{0, 0xff, '\n'}), "BinEmpty": localtable.BinaryValue(nil),
			"Mixed": localtable.Int32Value(5),
		}},
		{PartitionKey: "", RowKey: "", Properties: localtable.Properties{"Mixed": localtable.StringValue("five")}},
		{PartitionKey: "p\u00e9", RowKey: "\U0001F600"},
	}
}

func same(t *testing.T, got, want []localtable.Entity) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entities, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.PartitionKey != w.PartitionKey || g.RowKey != w.RowKey || len(g.Properties) != len(w.Properties) {
			t.Fatalf("entity %d: %q/%q %v, want %q/%q %v", i, g.PartitionKey, g.RowKey, g.Properties, w.PartitionKey, w.RowKey, w.Properties)
		}
		for name, wv := range w.Properties {
			gv := g.Properties[name]
			if gv.Kind() != wv.Kind() || !gv.Equal(wv) || (wv.Kind() == localtable.KindDouble && math.Signbit(gv.Double()) != math.Signbit(wv.Double())) {
				t.Errorf("entity %d %s: %v (%v), want %v (%v)", i, name, gv, gv.Kind(), wv, wv.Kind())
			}
		}
	}
}

func write(t *testing.T, f tableio.Format, es []localtable.Entity) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w tableio.Writer
	if f == tableio.CSV {
		var cs tableio.ColumnSet
		for i := range es {
			cs.Add(&es[i])
		}
		cw, err := tableio.NewCSVWriter(&buf, cs.Columns())
		if err != nil {
			t.Fatal(err)
		}
		w = cw
	} else {
		w = tableio.NewJSONLWriter(&buf, nil)
	}
	for i := range es {
		if err := w.Write(&es[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(t *testing.T, f tableio.Format, data string) (es []localtable.Entity, lines []int, bad []*tableio.RecordError) {
	t.Helper()
	r, err := tableio.NewReader(strings.NewReader(data), f)
	if err != nil {
		t.Fatal(err)
	}
	for {
		line, e, err := r.Next()
		var re *tableio.RecordError
		switch {
		case err == io.EOF:
			return
		case errors.As(err, &re):
			bad = append(bad, re)
			continue
		case err != nil:
			t.Fatal(err)
		}
		es = append(es, e)
		lines = append(lines, line)
	}
}

func TestRoundTripsAreExactAndStable(t *testing.T) {
	for _, f := range []tableio.Format{tableio.JSONL, tableio.CSV} {
		t.Run(f.String(), func(t *testing.T) {
			want := entities()
			out := write(t, f, want)
			got, _, bad := readAll(t, f, string(out))
			if len(bad) > 0 {
				t.Fatalf("%s\n%v", out, bad[0])
			}
			same(t, got, want)
			if again := write(t, f, got); !bytes.Equal(again, out) {
				t.Fatalf("not byte-identical:\n%s\n%s", out, again)
			}
		})
	}
}

func TestCSVHeaderAndCells(t *testing.T) {
	es := []localtable.Entity{{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{
		"Age": localtable.Int32Value(42), "Name": localtable.StringValue(""), "Big": localtable.Int64Value(1)}}}
	got := string(write(t, tableio.CSV, es))
	const want = "PartitionKey,RowKey,Age@Edm.Int32,Big@Edm.Int64,Name\r\np,r,42,1,\"\"\r\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// An empty unquoted cell is an absent property; LF line ends work too.
	got2, _, bad := readAll(t, tableio.CSV, "PartitionKey,RowKey,Age@Edm.Int32,Name\np,r,,\np,s,7,\"\"\n")
	if len(bad) != 0 || len(got2) != 2 || len(got2[0].Properties) != 0 || got2[1].Properties["Name"].String() != "" || got2[1].Properties["Age"].Int32() != 7 {
		t.Fatalf("%v %v", got2, bad)
	}
}

func TestBadRecordsNameTheirLines(t *testing.T) {
	jsonl := `{"PartitionKey":"a","RowKey":"1"}

{"PartitionKey":"a","RowKey":"2","N@odata.type":"Edm.Int64","N":5}
not json
{"PartitionKey":"a","RowKey":"3"}
`
	es, lines, bad := readAll(t, tableio.JSONL, jsonl)
	if len(es) != 2 || lines[0] != 1 || lines[1] != 5 || len(bad) != 2 || bad[0].Line != 3 || bad[1].Line != 4 {
		t.Fatalf("lines %v, bad %v", lines, bad)
	}
	csv := "PartitionKey,RowKey,N@Edm.Int32\na,1,1\na,\"2\nstill 2\",x\na,3\na,4,4\n"
	es, lines, bad = readAll(t, tableio.CSV, csv)
	if len(es) != 2 || lines[0] != 2 || lines[1] != 6 || len(bad) != 2 || bad[0].Line != 3 || bad[1].Line != 5 {
		t.Fatalf("lines %v, bad %v", lines, bad)
	}
	for _, hdr := range []string{"RowKey,N\n", "PartitionKey,RowKey,N@Edm.Nope\n", "PartitionKey,RowKey,N,N\n", "PartitionKey@Edm.Int32,RowKey\n", ""} {
		if _, err := tableio.NewReader(strings.NewReader(hdr), tableio.CSV); err == nil {
			t.Errorf("header %q: no error", hdr)
		}
	}
	// A last record without a line end, ending in a quoted field.
	if es, _, bad := readAll(t, tableio.CSV, "PartitionKey,RowKey\na,\"1\""); len(bad) != 0 || len(es) != 1 || es[0].RowKey != "1" {
		t.Errorf("no final line end: %v %v", es, bad)
	}
	if _, _, bad := readAll(t, tableio.CSV, "PartitionKey,RowKey\n\"a,1\n"); len(bad) != 1 {
		t.Errorf("unclosed quote: %v", bad)
	}
}

func TestSkipThrough(t *testing.T) {
	for _, f := range []tableio.Format{tableio.JSONL, tableio.CSV} {
		out := string(write(t, f, entities()))
		r, err := tableio.NewReader(strings.NewReader(out), f)
		if err != nil {
			t.Fatal(err)
		}
		// In CSV the first entity spans lines 2-3 (a quoted newline).
		through := 1
		if f == tableio.CSV {
			through = 3
		}
		n, err := r.SkipThrough(through)
		if err != nil || n != 1 {
			t.Fatalf("%v: skipped %d: %v", f, n, err)
		}
		_, e, err := r.Next()
		if err != nil || e.Properties["Mixed"].String() != "five" {
			t.Fatalf("%v: after skipping: %v %v", f, e, err)
		}
	}
}

// TestByteOrderMark: a UTF-8 byte-order mark at the start of a file (Excel
// writes one to CSV, Windows editors to any text) is not part of the
// first record; one anywhere else is data.
func TestByteOrderMark(t *testing.T) {
	for f, in := range map[tableio.Format]string{
		tableio.CSV:   "\uFEFFPartitionKey,RowKey,N@Edm.Int32,S\np,r,1,\uFEFFx\n",
		tableio.JSONL: "\uFEFF" + `{"PartitionKey":"p","RowKey":"r","N":1,"S":"` + "\uFEFF" + `x"}` + "\n",
	} {
		r, err := tableio.NewReader(strings.NewReader(in), f)
		if err != nil {
			t.Fatalf("%v with a byte-order mark: %v", f, err)
		}
		line, e, err := r.Next()
		if err != nil || line != 1+btoi(f == tableio.CSV) || e.PartitionKey != "p" || e.RowKey != "r" ||
			e.Properties["N"].Int32() != 1 || e.Properties["S"].String() != "\uFEFFx" {
			t.Fatalf("%v with a byte-order mark: line %d, %+v, %v", f, line, e, err)
		}
		if _, _, err := r.Next(); err != io.EOF {
			t.Fatalf("%v: after the record: %v", f, err)
		}
	}
	// Only one mark, at the very start, is skipped.
	if _, err := tableio.NewReader(strings.NewReader("\uFEFF\uFEFFPartitionKey,RowKey\n"), tableio.CSV); err == nil {
		t.Error("two byte-order marks: accepted")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
