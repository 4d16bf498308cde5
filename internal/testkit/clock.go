package testkit

import (
	"context"
	"sync"
	"time"
)

// Clock is a server's time: the source of entity Timestamps, of the
// window in which Shared Key request dates are accepted (15 minutes either
// side), of SAS start and expiry and bearer token lifetimes, of response
// dates, and of the time-based quirks (TableBeingDeleted, throttling).
//
// A Clock follows another clock (time.Now, or WithClock's) shifted by what
// Advance and Set add, or, made by WithTime, stands still until Advance or
// Set move it: a manual clock. The server's clients (Server.Client and
// those made with Server.ClientOptions) date their requests by it, so
// moving it does not make them stale; a client dated by the real clock is
// refused once the Clock is 15 minutes away.
//
// A Clock is safe for concurrent use.
type Clock struct {
	mu      sync.Mutex
	base    func() time.Time // nil: manual
	offset  time.Duration    // added to base
	now     time.Time        // a manual clock's time
	follow  func() time.Time // a frozen clock's base, for Resume; nil: time.Now
	waiters []clockWaiter    // Sleeps on a manual clock
}

type clockWaiter struct {
	until time.Time
	wake  chan struct{}
}

// NewClock returns a clock that follows base (such as time.Now).
func NewClock(base func() time.Time) *Clock { return &Clock{base: base} }

// NewManualClock returns a manual clock that stands at start.
func NewManualClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *Clock) nowLocked() time.Time {
	if c.base == nil {
		return c.now
	}
	return c.base().Add(c.offset)
}

// Manual reports whether the clock stands still between calls to Advance
// and Set (WithTime, or Freeze).
func (c *Clock) Manual() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base == nil
}

// Freeze stops the clock at the time it shows: it becomes a manual clock,
// which only Advance and Set move, until Resume.
func (c *Clock) Freeze() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base != nil {
		c.now = c.nowLocked()
		c.follow, c.base = c.base, nil
	}
}

// Resume makes a manual clock run again from the time it shows, following
// the clock it followed before Freeze (time.Now for one made manual). The
// requests waiting on it for a delay are let go at once.
func (c *Clock) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base != nil {
		return
	}
	c.base = c.follow
	if c.base == nil {
		c.base = time.Now
	}
	c.offset = c.now.Sub(c.base())
	for _, w := range c.waiters {
		close(w.wake)
	}
	c.waiters = nil
}

// Advance moves the clock forward by d (back, if d is negative). On a
// manual clock it wakes the requests delayed until then.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base == nil {
		c.now = c.now.Add(d)
		c.wakeLocked()
	} else {
		c.offset += d
	}
}

// Set sets the clock to t; a clock that follows another keeps running
// from t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base == nil {
		c.now = t
		c.wakeLocked()
	} else {
		c.offset = t.Sub(c.base())
	}
}

func (c *Clock) wakeLocked() {
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if c.now.Before(w.until) {
			kept = append(kept, w)
		} else {
			close(w.wake)
		}
	}
	c.waiters = kept
}

// Sleep waits for d of the clock's time, or until ctx is done (returning
// its error). A clock that follows another sleeps in real time; a manual
// clock returns once Advance or Set has moved it d past the call, and
// never by itself.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	c.mu.Lock()
	if c.base != nil {
		c.mu.Unlock()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	w := clockWaiter{until: c.now.Add(d), wake: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	c.mu.Unlock()
	select {
	case <-w.wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
