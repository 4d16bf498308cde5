package reqclass

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/localtable/localtable/internal/odata"
)

// FuzzClassify classifies arbitrary path segments, as a request and as a
// batch operation: no panic, and an entity whose keys parse re-quotes to
// a segment that classifies to the same keys. (It was the server's
// FuzzEntityPath's check of its resource parser.)
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"tt1(PartitionKey='p',RowKey='r')", "tt1(PartitionKey='p''k', RowKey='')", "tt1()", "tt1",
		"tt1(RowKey='r',PartitionKey='p')", "tt1(PartitionKey='a',RowKey=", "Tables('tt1')", "$batch",
		"tt1(PartitionKey='%2F',RowKey='%ZZ')",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seg string) {
		for _, m := range []string{"GET", "PUT", "DELETE", "MERGE", "POST", "OPTIONS"} {
			r := &http.Request{Method: m, Header: http.Header{}, URL: &url.URL{Path: "/acct/" + seg}}
			c := Classify(r)
			if c.Op != Unknown && c.Problem != OK {
				t.Fatalf("%s %q: %v with problem %d", m, seg, c.Op, c.Problem)
			}
			if c.Resource == Entity && c.Problem == OK {
				again := c.Table + "(PartitionKey=" + odata.Quote(c.PartitionKey) + ",RowKey=" + odata.Quote(c.RowKey) + ")"
				r2 := &http.Request{Method: m, Header: http.Header{}, URL: &url.URL{Path: "/acct/" + again}}
				c2 := Classify(r2)
				if c2.PartitionKey != c.PartitionKey || c2.RowKey != c.RowKey || c2.Op != c.Op {
					t.Fatalf("%s %q: keys %q %q do not round-trip: %q %q %v", m, seg, c.PartitionKey, c.RowKey, c2.PartitionKey, c2.RowKey, c2.Op)
				}
			}
			ClassifyBatchOp(m, &url.URL{Path: "/acct/" + seg}, "")
		}
	})
}
