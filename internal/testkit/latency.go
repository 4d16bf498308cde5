package testkit

import (
	"math"
	"math/rand/v2"
	"time"
)

// Latency is a distribution of delays: it returns one delay, drawing what
// it needs from r, the server's random source (seeded by WithSeed, so that
// a test sees the same delays on every run). Fixed, Uniform and Normal
// make common ones; any func of this type will do.
type Latency func(r *rand.Rand) time.Duration

// Fixed is always d.
func Fixed(d time.Duration) Latency {
	return func(*rand.Rand) time.Duration { return d }
}

// Uniform is uniform in [lo, hi).
func Uniform(lo, hi time.Duration) Latency {
	return func(r *rand.Rand) time.Duration {
		if hi <= lo {
			return lo
		}
		return lo + time.Duration(r.Int64N(int64(hi-lo)))
	}
}

// Normal is normal with the given mean and standard deviation, cut off
// below at zero.
func Normal(mean, stddev time.Duration) Latency {
	return func(r *rand.Rand) time.Duration {
		d := float64(mean) + r.NormFloat64()*float64(stddev)
		return time.Duration(math.Max(d, 0))
	}
}

// SetLatency delays the given operations (every operation if none is
// named) by delays drawn from l before they are served; a nil l removes
// the latency. A latency for an operation overrides one for every
// operation. Delays follow the server's Clock: real sleeps by default; on
// a manual clock (WithTime) a delayed request waits until the test
// advances the clock.
func (k *Kit) SetLatency(l Latency, ops ...Operation) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(ops) == 0 {
		ops = []Operation{""}
	}
	for _, op := range ops {
		if l == nil {
			delete(k.latency, op)
		} else {
			k.latency[op] = l
		}
	}
}

// ClearLatency removes every latency.
func (k *Kit) ClearLatency() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.latency)
}
