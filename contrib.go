package localtable

import (
	"context"
)

// Contributors: what else a commit writes.
//
// A feature that keeps data derived from the account's writes (a
// secondary index, a change feed) must write it in the
// same atomic commit as the write it derives from, on every engine, or a
// crash or a lost race leaves the two apart. It does so as a contributor:
// for every commit of the pipeline (pipeline.go), after the plan, it is
// handed the changes the commit makes and adds writes of its own to the
// commit's write set. It may read keys of its own first, through the
// commit's read: on a shared engine the commit is then conditioned on
// them too, and re-run, contributor included, if another writer changed
// them. A write that fails or is refused never reaches the contributors,
// and an attempt that does not commit leaves nothing of theirs behind.
//
// Contributors are set when the account is opened and never change. An
// account without any pays nothing for the extension point: the changes
// are not even built; nor are they for an entity write that none of them
// wants (contributor.wants: the index maintainer, on a table without
// indexes), and a contributor that does not want it is not called.

// contributor adds writes to the commits of an account.
type contributor interface {
	// contribute adds the writes of c.changes to c. It must not keep c
	// or the slices of its changes beyond the call, and must decide from
	// what c holds and what c.read returns alone: it runs again from
	// scratch when the attempt is re-run.
	contribute(c *commitContext) error
	// wants reports whether the contributor may add writes to a commit of
	// entity writes into lt, as the commit's read found lt (false: it
	// would add none, and need not be called).
	wants(lt *liveTable) bool
}

// contributorSet is a set of an account's contributors: bit i is
// a.contributors[i]. An account has at most maxContributors (Open sets
// at most 2; TestContributorsFit).
type contributorSet uint8

// maxContributors is the most contributors a contributorSet holds.
const maxContributors = 8

// allContributors holds every contributor: those of a commit that is not
// of entity writes.
const allContributors = ^contributorSet(0)

// wanted returns the contributors of a that want the changes of a commit
// of entity writes into lt (0: none).
func (a *Account) wanted(lt *liveTable) contributorSet {
	var set contributorSet
	for i, k := range a.contributors {
		if k.wants(lt) {
			set |= 1 << i
		}
	}
	return set
}

// changeKind is the kind of a change a commit makes.
type changeKind uint8

// The kinds of change.
const (
	changeInsert        changeKind = iota + 1 // an entity that did not exist was written
	changeReplace                             // an existing entity was replaced
	changeMerge                               // properties were merged into an existing entity
	changeDelete                              // an entity was deleted
	changeTableCreated                        // a table was created
	changeTableDeleted                        // a table was deleted, with every entity in it
	changeTablePolicies                       // a table's access policies were replaced
	changeClockMark                           // the clock's mark moved
	changeRestored                            // the account's data was replaced by a Restore
	changeExpired                             // an expired entity was deleted by the sweeper (expiry.go)
)

// change is one change a commit makes, as contributors see it. The
// slices are valid during the contribute call only.
type change struct {
	kind    changeKind
	tableID uint64
	table   string // the table's name, as created
	// lt is the table of an entity change, as the write found it (its
	// indexes are those the commit maintains); nil for other changes.
	lt *liveTable
	// key is the entity's engine key, old its record before the change
	// (nil if it did not exist; the expired record for an insert over an
	// expired entity) and new after it (nil for a delete).
	key, old, new []byte
	// expired marks an insert over an entity that had expired (old): the
	// feed shows an expired change before the insert.
	expired bool
}

// commitContext is a commit being made, as a contributor sees it.
// (Account.contribute sets each of its fields: a new one must be set there.)
type commitContext struct {
	ctx     context.Context
	a       *Account
	rs      *readSet
	changes []change
	writes  []write
	after   []func() // run once the commit is made (see afterCommit)
	inline  [2]func()
	buf     []byte // see scratch
	// ticks is the commit's time on the account's clock, when the write
	// took one (its entities' Timestamp); 0 if not (see now).
	ticks int64
}

// now returns the commit's time on the account's clock, in ticks.
func (c *commitContext) now() int64 {
	if c.ticks == 0 {
		c.ticks, _ = clockTicks(c.a.clock.now())
	}
	return c.ticks
}

// afterCommit makes f run once the commit is made, and not at all if it
// fails: for what the contributor must say only of committed writes (a
// change feed wakes its watchers).
func (c *commitContext) afterCommit(f func()) { c.after = append(c.after, f) }

// committed runs the afterCommit functions of a commit that was made; c
// may be nil (no contributor ran).
func (c *commitContext) committed() {
	if c == nil {
		return
	}
	for _, f := range c.after {
		f()
	}
}

// hold takes, for a contributor that keeps in memory what it would
// otherwise read in every commit (on an engine the account owns alone:
// strategy.alone), what read takes: the commits whose contributors read
// or hold are serialized from then until their commit.
func (c *commitContext) hold() {
	if c.rs.release == nil {
		c.rs.release = c.a.strategy.exclusive()
	}
}

// scratch returns an empty buffer with room for n bytes, valid until the
// commit, for a contributor to build its writes in (the engines copy
// what a commit writes). The buffer is reused by the account's next
// commits.
func (c *commitContext) scratch(n int) []byte {
	if cap(c.buf)-len(c.buf) < n {
		c.buf = make([]byte, 0, max(n, 2*cap(c.buf)))
	}
	l := len(c.buf)
	c.buf = c.buf[:l+n]
	return c.buf[l : l : l+n]
}

// read reads keys for the contributor, through the commit's read: on a
// shared engine the commit is conditioned on them; locally the commits
// whose contributors read are serialized from their first read to their
// commit, so what they read stays true until then. found[i] false:
// keys[i] is absent. The values are valid until the commit.
func (c *commitContext) read(keys ...[]byte) (vals [][]byte, found []bool, err error) {
	c.hold()
	from := len(c.rs.keys)
	if err := c.a.strategy.read(c.ctx, c.rs, nil, keys); err != nil {
		return nil, nil, err
	}
	return c.rs.vals[from:], c.rs.found[from:], nil
}

// set adds the write of value under key to the commit.
func (c *commitContext) set(key, value []byte) {
	// Field by field: a composite literal would be built on the stack
	// and copied by loads wider than its stores (see applyWrites).
	c.writes = append(c.writes, write{})
	w := &c.writes[len(c.writes)-1]
	w.key, w.value = key, value
}

// del adds the deletion of key to the commit.
func (c *commitContext) del(key []byte) {
	c.writes = append(c.writes, write{key: key, del: true})
}

// delRange adds the deletion of [start, end) to the commit.
func (c *commitContext) delRange(start, end []byte) {
	c.writes = append(c.writes, write{key: start, del: true, end: end})
}

// contribute runs the contributors of set on the changes of a commit
// whose write set is ws and read set rs, in c (nil: a new one; a pooled
// write passes its own, reused): the commit's writes are then c.writes,
// ws with theirs, and c.committed must be called once it is made. ticks
// is the commit's time, if it took one (else 0).
func (a *Account) contribute(ctx context.Context, c *commitContext, set contributorSet, rs *readSet, ws []write, changes []change, ticks int64) (*commitContext, error) {
	if c == nil {
		c = new(commitContext)
	}
	// Field by field, not *c = commitContext{…, buf: c.buf[:0]}: a
	// composite literal that reads c is built on the stack and copied
	// (see applyWrites).
	c.ctx, c.a, c.rs, c.changes, c.writes, c.ticks = ctx, a, rs, changes, ws, ticks
	c.after, c.inline, c.buf = c.inline[:0], [2]func(){}, c.buf[:0]
	for i, k := range a.contributors {
		if set&(1<<i) == 0 {
			continue
		}
		if err := k.contribute(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// entityChanges appends to cs the changes of an entity write into lt:
// for action i, its read in rs (state before), its plan's step steps[i]
// and its write, the next of ws (a skipped step has none).
func entityChanges(cs []change, lt *liveTable, actions []Action, steps []entityStep, rs *readSet, ws []write) []change {
	j := 0
	for i := range actions {
		st := &steps[i]
		if st.skip {
			continue
		}
		w := &ws[j]
		j++
		cs = append(cs, change{}) // filled field by field: see applyWrites
		c := &cs[len(cs)-1]
		c.tableID, c.table, c.lt, c.key = lt.id, lt.name, lt, w.key
		if rs.found[i] {
			c.old = rs.vals[i]
		}
		switch {
		case actions[i].Type == actionExpire:
			c.kind = changeExpired
		case w.del:
			c.kind = changeDelete
		case !st.exists:
			c.kind, c.expired = changeInsert, st.expired
		case actions[i].Type == ActionUpdateMerge || actions[i].Type == ActionUpsertMerge:
			c.kind = changeMerge
		default:
			c.kind = changeReplace
		}
		if !w.del {
			c.new = w.value
		}
	}
	return cs
}
