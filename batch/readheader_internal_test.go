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

// TestHasDelimiterAllocs guards hasDelimiter against allocating for a
// boundary as long as the SDKs' (a prefix and a UUID).
func TestHasDelimiterAllocs(t *testing.T) {
	boundary := "changeset_4185404a-5818-48c3-b9be-f217df0dba6f"
	body := []byte(`{"PartitionKey":"p","RowKey":"r"}` + "\r\n--" + boundary + "x\r\n")
	n := testing.AllocsPerRun(100, func() {
		if hasDelimiter(body, boundary) || hasDelimiter(nil, boundary) {
			t.Fatal("hasDelimiter: true")
		}
	})
	if n != 0 {
		t.Errorf("hasDelimiter: %v allocations, want 0", n)
	}
	if !hasDelimiter([]byte("a\r\n--"+boundary+"--\r\n"), boundary) {
		t.Error("hasDelimiter misses a close delimiter")
	}
}
