package main

import (
	"context"
	"testing"
	"time"

	"github.com/localtable/localtable/localtabletest"
)

// TestLogTailWithSDK runs the pattern through the official Go SDK against
// the test server: readings appended in a shuffled order come back newest
// first, and $top=5 is exactly the newest five.
func TestLogTailWithSDK(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	if _, err := srv.Client.CreateTable(ctx, "Readings", nil); err != nil {
		t.Fatal(err)
	}
	c := srv.Client.NewClient("Readings")
	const n = 200
	for i := 0; i < n; i++ {
		j := (i * 73) % n // a shuffled order
		if err := appendWithSDK(ctx, c, "sensor'7", start.Add(time.Duration(j)*time.Second), float64(j)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := newestWithSDK(ctx, c, "sensor'7", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("$top=5 returned %d readings", len(got))
	}
	for i, at := range got {
		if want := start.Add(time.Duration(n-1-i) * time.Second); !at.Equal(want) {
			t.Errorf("reading %d is at %v, want %v", i, at, want)
		}
	}
}
