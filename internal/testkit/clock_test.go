package testkit

import (
	"context"
	"testing"
	"time"
)

// TestClockFreezeResume: a frozen clock stands still, moves only by Set
// and Advance, and resumes running from where it stands, letting go the
// delays that waited on it.
func TestClockFreezeResume(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	src := base
	c := NewClock(func() time.Time { return src })
	c.Freeze()
	src = src.Add(time.Hour)
	if got := c.Now(); !got.Equal(base) || !c.Manual() {
		t.Fatalf("frozen: %v (manual %v), want %v", got, c.Manual(), base)
	}
	c.Advance(time.Minute)
	if got := c.Now(); !got.Equal(base.Add(time.Minute)) {
		t.Fatalf("frozen and advanced: %v", got)
	}
	done := make(chan error, 1)
	go func() { done <- c.Sleep(context.Background(), time.Hour) }()
	for {
		c.mu.Lock()
		n := len(c.waiters)
		c.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	c.Resume()
	if err := <-done; err != nil {
		t.Fatalf("a delay on the frozen clock after Resume: %v", err)
	}
	if c.Manual() {
		t.Error("manual after Resume")
	}
	src = src.Add(time.Second)
	if got := c.Now(); !got.Equal(base.Add(time.Minute + time.Second)) {
		t.Errorf("resumed: %v, want it running from where it stood", got)
	}
}
