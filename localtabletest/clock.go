package localtabletest

import (
	"time"

	"github.com/localtable/localtable/internal/testkit"
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
type Clock = testkit.Clock

// NewClock returns a manual Clock that stands at start until Advance or
// Set move it, for an Account opened without a server: pass its Now as
// localtable.Options.Clock. Being safe for concurrent use, it may be moved
// while the account's own goroutines (the expiry sweeper, the change
// feed's retention) read it, where a closure over a variable the test
// assigns would race with them. A Server's clock is Server.Clock
// (WithTime makes it manual).
func NewClock(start time.Time) *Clock { return testkit.NewManualClock(start) }
