package localtable

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/localtable/localtable/internal/edmfmt"
)

// clock hands out entity Timestamps: 100 ns ticks from the account's time
// source, strictly increasing per account even when the source stalls or
// steps back, and never reused after a reopen.
//
// To survive restarts without a write per entity, it persists a high-water
// mark (as sequence allocators do): before handing out a tick above the
// persisted mark it durably raises the mark to that tick plus
// clockReserve. After a reopen it resumes above the mark, so no tick is
// handed out twice even if the source is behind the last stored Timestamp.
// A clean Close (settle) lowers the mark to the last tick handed out, so
// that reopening does not move Timestamps ahead of the source: only a
// crash costs the rest of the reservation, at most clockReserve.
type clock struct {
	now func() time.Time

	mu       sync.Mutex
	last     int64                                       // last tick handed out
	reserved int64                                       // persisted high-water mark
	persist  func(ctx context.Context, mark int64) error // durably stores the mark
	// lower durably lowers the mark this clock reserved to last, the
	// last tick handed out, or as far toward it as the ticks of others
	// sharing the mark allow (see Account.lowerClock).
	lower func(last int64) error
}

// clockReserve is how far ahead of the last tick the mark is raised: one
// second. A reopen resumes at most this far ahead of the last write.
const clockReserve = ticksPerSecond

// nextAfter returns the next Timestamp tick, above floor too. ctx bounds
// the write of a new reservation, when one is needed. It never returns a
// tick outside [minTicks, maxTicks], nor one it returned before: a source
// outside the range is ErrClockOutOfRange, and so is every call after the
// one that returned maxTicks. A write passes as floor the largest
// Timestamp of the entities it replaces (-1 for none), which on a shared
// engine another process's clock may have handed out, so that each
// entity's ETags strictly increase; the clock then goes on from there.
func (c *clock) nextAfter(ctx context.Context, floor int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, err := clockTicks(c.now())
	if err != nil {
		return 0, err
	}
	if last := max(c.last, floor); t <= last {
		if last >= maxTicks {
			return 0, newError(ErrClockOutOfRange, "the account's Timestamps are spent: a write was stamped %s, the last Timestamp there is, and Timestamps never repeat", edmfmt.DateTime7(MaxDateTime))
		}
		t = last + 1
	}
	if t > c.reserved {
		mark := min(t+clockReserve, maxTicks) // t <= maxTicks: no overflow
		if err := c.persist(ctx, mark); err != nil {
			return 0, err
		}
		c.reserved = mark
	}
	c.last = t
	return t, nil
}

// settle gives back the part of the reservation that no tick used: the
// persisted mark becomes the last tick handed out. It is for a clean
// Close, once no write is in flight; if it fails, the reservation stays,
// which is safe.
func (c *clock) settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last >= c.reserved || c.lower == nil {
		return
	}
	if c.lower(c.last) == nil {
		c.reserved = c.last
	}
}

// clockTicks converts a time of the clock to ticks, or fails with
// ErrClockOutOfRange if it is outside the range of Timestamps.
func clockTicks(now time.Time) (int64, error) {
	if now.Before(MinDateTime) || now.After(MaxDateTime) {
		return 0, newError(ErrClockOutOfRange, "the clock says %s, outside the range of Timestamps %s to %s", now.UTC().Format(time.RFC3339Nano), edmfmt.DateTime(MinDateTime), edmfmt.DateTime7(MaxDateTime))
	}
	return TimeToTicks(now), nil
}

func encodeTicks(t int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(t)) }

// encodeMark encodes the clock's mark as a shared engine stores it: the
// ticks, then the nonce of the Account that wrote it, so that an Account
// can tell its own write of a value from another process's write of the
// same value (a process lowering the mark at Close may write back a value
// that another wrote before it).
func encodeMark(t int64, nonce uint64) []byte {
	if nonce == 0 {
		return encodeTicks(t) // an engine of one account: the ticks alone
	}
	return binary.BigEndian.AppendUint64(encodeTicks(t), nonce)
}

// decodeMark decodes the clock's mark: 8 bytes of ticks, with nonce 0 (as
// an engine of one process stores it), or ticks and nonce (encodeMark).
func decodeMark(b []byte) (t int64, nonce uint64, ok bool) {
	switch len(b) {
	case 8:
		t, ok = decodeTicks(b)
		return t, 0, ok
	case 16:
		return int64(binary.BigEndian.Uint64(b)), binary.BigEndian.Uint64(b[8:]), true
	}
	return 0, 0, false
}

func decodeTicks(b []byte) (int64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b)), true
}

// persistClock durably raises the clock's mark to cover mark, through
// the pipeline. On a shared engine other accounts raise it too, so it is
// only ever raised (see planRaiseMark); the account remembers the value it
// wrote and the one that write replaced, for lowerClock.
func (a *Account) persistClock(ctx context.Context, mark int64) error {
	return a.update(ctx, "raising the clock's mark", 10*maxConflictRetries, [][]byte{metaClock}, func(rs *readSet) (*metaPlan, error) {
		wrote, prev, ws, err := planRaiseMark(rs.vals[0], rs.found[0], mark, a.strategy.nonce())
		if err != nil {
			return nil, err
		}
		if ws == nil {
			a.clockWrote = -1 // the mark is at the last tick there is: nothing to lower
			return nil, nil
		}
		return &metaPlan{
			writes:  ws,
			changes: []change{{kind: changeClockMark}},
			// Synced even when the engine's commits are not (bulk loads):
			// else a power loss could take the mark with the writes that
			// used it, and hand their Timestamps, so their ETags, out again.
			durable: true,
			finish: func(err error) {
				if err == nil {
					a.clockWrote, a.clockPrev = wrote, prev
				}
			},
		}, nil
	})
}

// lowerClock lowers the clock's mark to last, the last tick this Account
// handed out, for a clean Close, if the mark is still the one it wrote
// (see planLowerMark): on a shared engine other processes' ticks may rely
// on it.
func (a *Account) lowerClock(last int64) error {
	if a.clockWrote < 0 {
		return errClockMarkMoved
	}
	moved := false
	err := a.update(context.Background(), "lowering the clock's mark", maxConflictRetries, [][]byte{metaClock}, func(rs *readSet) (*metaPlan, error) {
		var ws []write
		ws, moved = planLowerMark(rs.vals[0], rs.found[0], a.clockWrote, a.clockPrev, last, a.strategy.nonce())
		if moved {
			return nil, nil
		}
		return &metaPlan{writes: ws, changes: []change{{kind: changeClockMark}}}, nil
	})
	if err == nil && moved {
		err = errClockMarkMoved
	}
	if err == nil {
		a.clockWrote = -1
	}
	return err
}

// errClockMarkMoved says that the clock's mark on a shared engine is no
// longer the one this Account wrote, so it was left alone.
var errClockMarkMoved = errors.New("localtable: the clock's mark moved")
