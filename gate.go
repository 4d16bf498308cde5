package localtable

import (
	"context"
	"sync"
	"sync/atomic"
)

// gate counts an account's calls in flight so that Close can wait for
// them: every call that touches the engine enters the gate and exits it
// when it no longer does, and Close shuts the gate, waits until it is
// empty, and only then closes the engine.
type gate struct {
	// state is the number of calls inside, plus gateShut once Close has
	// begun. Entering adds one and, if the gate is shut, takes it back.
	state   atomic.Int64
	drained chan struct{} // closed once the gate is shut and empty
	once    sync.Once
}

const gateShut = 1 << 62

func newGate() *gate { return &gate{drained: make(chan struct{})} }

// enter admits a call, or reports false once the gate is shut.
func (g *gate) enter() bool {
	if g.state.Add(1)&gateShut != 0 {
		g.exit()
		return false
	}
	return true
}

// exit ends a call that enter admitted (or takes back a refused one).
func (g *gate) exit() {
	if g.state.Add(-1) == gateShut {
		g.once.Do(func() { close(g.drained) })
	}
}

// shut refuses every later call and reports whether this was the first
// shut. Wait on g.drained for the calls inside.
func (g *gate) shut() bool {
	for {
		s := g.state.Load()
		if s&gateShut != 0 {
			return false
		}
		if g.state.CompareAndSwap(s, s|gateShut) {
			if s == 0 {
				g.once.Do(func() { close(g.drained) })
			}
			return true
		}
	}
}

// isShut reports whether Close has begun.
func (g *gate) isShut() bool { return g.state.Load()&gateShut != 0 }

// enter admits a call of the account: it fails with ErrClosed once Close
// has begun, and with ctx's error if ctx is done. After a nil error, the
// caller must call a.exit when it no longer touches the engine.
func (a *Account) enter(ctx context.Context) error {
	if !a.gate.enter() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		a.gate.exit()
		return err
	}
	return nil
}

// exit ends a call that enter admitted.
func (a *Account) exit() { a.gate.exit() }

// interrupted is what a long call checks as it goes: ErrClosed once Close
// has begun (Close waits for it), or ctx's error.
func (a *Account) interrupted(ctx context.Context) error {
	if a.gate.isShut() {
		return ErrClosed
	}
	return ctx.Err()
}
