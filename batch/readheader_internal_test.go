package batch

import "testing"

// TestReadHeaderAllocs guards readHeader's allocations: one copy of the
// header block holds every name and value, and one slice the fields.
func TestReadHeaderAllocs(t *testing.T) {
	head := []byte("Content-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\n" +
		"Prefer: return-no-content\r\nDataServiceVersion: 3.0\r\nContent-Length: 10\r\n")
	n := testing.AllocsPerRun(100, func() {
		h, err := readHeader(head)
		if err != nil || len(h) != 5 || h[4].Value != "10" {
			t.Fatalf("readHeader = %v, %v", h, err)
		}
	})
	if n > 2 {
		t.Errorf("readHeader: %v allocations, want at most 2", n)
	}
}
