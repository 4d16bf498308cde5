package localtabletest

import (
	"time"

	"github.com/localtable/localtable/internal/testkit"
)

// Latency is a distribution of delays: it returns one delay, drawing what
// it needs from r, the server's random source (seeded by WithSeed, so that
// a test sees the same delays on every run). Fixed, Uniform and Normal
// make common ones; any func of this type will do.
type Latency = testkit.Latency

// Fixed is always d.
func Fixed(d time.Duration) Latency { return testkit.Fixed(d) }

// Uniform is uniform in [lo, hi).
func Uniform(lo, hi time.Duration) Latency { return testkit.Uniform(lo, hi) }

// Normal is normal with the given mean and standard deviation, cut off
// below at zero.
func Normal(mean, stddev time.Duration) Latency { return testkit.Normal(mean, stddev) }

// SetLatency delays the given operations (every operation if none is
// named) by delays drawn from l before they are served; a nil l removes
// the latency. A latency for an operation overrides one for every
// operation. Delays follow the server's Clock: real sleeps by default; on
// a manual clock (WithTime) a delayed request waits until the test
// advances the clock.
func (s *Server) SetLatency(l Latency, ops ...Operation) { s.kit.SetLatency(l, ops...) }
