package tableio_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/localtable/localtable/internal/tableio"
)

// Offset is the end of the last record returned, to the byte, whatever
// the reader's buffer holds: blank lines, a byte-order mark, a CSV field
// spanning lines, a record that is not an entity, and after SkipThrough.
func TestReaderOffset(t *testing.T) {
	for _, tc := range []struct {
		name    string
		format  tableio.Format
		records []string // each record with its line end and the blank lines before it
		skip    int      // lines SkipThrough skips first
	}{
		{"jsonl", tableio.JSONL, []string{
			"\ufeff" + `{"PartitionKey":"p","RowKey":"1"}` + "\n",
			"\n  \n" + `{"PartitionKey":"p","RowKey":"2","N":"two"}` + "\r\n",
			`not json` + "\n",
			`{"PartitionKey":"p","RowKey":"4"}`,
		}, 0},
		{"jsonl skip", tableio.JSONL, []string{
			`{"PartitionKey":"p","RowKey":"1"}` + "\n" + `{"PartitionKey":"p","RowKey":"2"}` + "\n",
			`{"PartitionKey":"p","RowKey":"3"}` + "\n",
		}, 2},
		{"csv", tableio.CSV, []string{
			"PartitionKey,RowKey,Note\r\n",
			"p,1,plain\r\n",
			"\r\np,2,\"two\r\nlines\"\r\n",
			"p,3,last",
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input := strings.Join(tc.records, "")
			rd, err := tableio.NewReader(strings.NewReader(input), tc.format)
			if err != nil {
				t.Fatal(err)
			}
			want, first := int64(0), 0
			if tc.format == tableio.CSV {
				want, first = int64(len(tc.records[0])), 1
			}
			if tc.skip > 0 {
				if _, err := rd.SkipThrough(tc.skip); err != nil {
					t.Fatal(err)
				}
				want, first = int64(len(tc.records[0])), 1
				// SkipThrough read the record after the skipped ones.
				if got := rd.Offset(); got != want && got != want+int64(len(tc.records[1])) {
					t.Fatalf("after SkipThrough: Offset %d, want %d", got, want)
				}
			}
			for _, rec := range tc.records[first:] {
				_, _, err := rd.Next()
				var re *tableio.RecordError
				if err != nil && !errors.As(err, &re) {
					t.Fatalf("Next: %v", err)
				}
				want += int64(len(rec))
				if got := rd.Offset(); got != want {
					t.Fatalf("after the record %q: Offset %d, want %d", rec, got, want)
				}
			}
			if _, _, err := rd.Next(); err != io.EOF {
				t.Fatalf("at the end: %v", err)
			}
			if got := rd.Offset(); got != int64(len(input)) {
				t.Fatalf("at the end: Offset %d, want %d", got, len(input))
			}
		})
	}
}
