package localtable

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// Table expiry (time to live).
//
// A table may name one of its properties as its expiry property
// (SetExpiry): an entity whose value of that property is an Edm.DateTime
// at or before the account's clock (Options.Clock) has expired. An
// entity whose property is missing, or of another type, never expires.
//
// An expired entity is invisible at once: Get fails with
// ErrEntityNotFound, queries, Rows, Count and the server do not return
// it, writes treat it as absent (an insert or upsert writes over it, an
// update or delete, with any If-Match, fails with ErrEntityNotFound). The
// check is made by every read and write at its own time, from the
// entity's record: nothing has to run for an entity to expire.
//
// It is then deleted in the background by the account's sweeper
// (sweeper.go), which reads the expired entries of an index on the
// property, not the table, and deletes each entity through the write
// pipeline, on condition that it is still expired with the ETag it read,
// as a change of kind ChangeExpired in the feed. An insert over an
// expired entity deletes it in the same commit: the feed shows its
// ChangeExpired, then the ChangeInsert.
//
// The policy lives in the table's catalog record (record.go, version 3),
// so it persists with the table and travels with its backups,
// checkpoints and exports, as its indexes do.

// expiryCheck is the expiry policy as a read or a write applies it: the
// property (""; none) and the time of the read, in ticks of the account's
// clock.
type expiryCheck struct {
	prop string
	now  int64
}

// expired reports whether the entity of record rec has expired: its
// value of the property is an Edm.DateTime at or before now.
func (x expiryCheck) expired(rec []byte) (bool, error) {
	if x.prop == "" {
		return false, nil
	}
	v, ok, err := findProperty(rec, x.prop)
	if err != nil || !ok || v.kind != KindDateTime {
		return false, err
	}
	return int64(v.num) <= x.now, nil
}

// expiryCheck returns the expiry policy of table lt as of now on the
// account's clock.
func (a *Account) expiryCheck(lt *liveTable) (expiryCheck, error) {
	prop := *lt.expiry.Load()
	if prop == "" {
		return expiryCheck{}, nil
	}
	now, err := clockTicks(a.clock.now())
	if err != nil {
		return expiryCheck{}, err
	}
	return expiryCheck{prop: prop, now: now}, nil
}

// hideExpired returns storage.ErrNotFound, having closed c, if the entity
// of record rec read from table lt has expired: a point read's check.
func (a *Account) hideExpired(lt *liveTable, rec []byte, c io.Closer) error {
	x, err := a.expiryCheck(lt)
	expired := false
	if err == nil {
		expired, err = x.expired(rec)
	}
	if err != nil || expired {
		c.Close()
	}
	if expired {
		return storage.ErrNotFound
	}
	return err
}

// Expiry returns the table's expiry property, or "" when the table has no
// expiry policy.
func (t *Table) Expiry(ctx context.Context) (string, error) {
	if err := t.a.enter(ctx); err != nil {
		return "", err
	}
	defer t.a.exit()
	lt, err := t.a.strategy.current(ctx, t.name) // on a shared engine, another process may have set it
	if err != nil {
		return "", err
	}
	return *lt.expiry.Load(), nil
}

// SetExpiry makes prop the table's expiry property: from its return on,
// an entity whose prop is an Edm.DateTime at or before the account's
// clock is expired, invisible to every read and absent to every write,
// and is deleted by the account's sweeper (see ExpiryOptions), each
// deletion a ChangeExpired in the feed.
//
// Only an Edm.DateTime value expires. An entity without prop, or whose
// prop is of another type (a String holding a date, such as a JSON
// value sent over HTTP without its "prop@odata.type": "Edm.DateTime"
// annotation, an Int64 of ticks or of Unix seconds), never expires, and
// no write of it fails: the policy ignores it silently, as DynamoDB
// ignores a TTL attribute that is not a Number.
//
// The sweeper reads an index on prop: SetExpiry uses an index of the
// table whose leading property is prop, or declares and builds one
// (named "expiry_" and the property, or "expiry" when the property's
// name cannot name an index) first, as CreateIndex does. A table has one
// expiry property; SetExpiry replaces the one it had. An index SetExpiry
// declared is the policy's: when the policy moves to another property
// (SetExpiry) or is removed (ClearExpiry), it is dropped in the same
// commit; an index the table declared itself (CreateIndex) stays.
//
// A store whose tables have an expiry policy cannot be opened by a
// localtable that predates expiry: it refuses their catalog records.
func (t *Table) SetExpiry(ctx context.Context, prop string) error {
	if err := ValidatePropertyName(prop); err != nil {
		return newError(ErrInvalidInput, "expiry property %q: %s", abbrev(prop), messageOf(err))
	}
	if isSystemProperty(prop) {
		return newError(ErrInvalidInput, "expiry property %q: a system property cannot be the expiry property", prop)
	}
	a := t.a
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	if err := t.expiryIndex(ctx, prop); err != nil {
		return err
	}
	return t.setExpiry(ctx, prop)
}

// ClearExpiry removes the table's expiry policy: entities the policy hid
// are visible again, as stored (those the sweeper deleted are gone). The
// index SetExpiry declared for the policy, if it declared one, is dropped
// in the same commit; an index of the table's own on the property stays.
// A table without a policy is left as it is.
func (t *Table) ClearExpiry(ctx context.Context) error {
	a := t.a
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	return t.setExpiry(ctx, "")
}

// setExpiry writes prop ("": none) as the table's expiry property.
func (t *Table) setExpiry(ctx context.Context, prop string) error {
	a := t.a
	lower := strings.ToLower(t.name)
	what := "setting the expiry policy of table " + t.name
	if prop == "" {
		what = "clearing the expiry policy of table " + t.name
	}
	return t.indexDDL(ctx, what, func(rs *readSet, lt *liveTable) (*metaPlan, error) {
		rec, ws, err := planSetExpiry(t.name, lower, rs.vals[0], rs.found[0], prop)
		if err != nil || ws == nil {
			return nil, err
		}
		return &metaPlan{writes: ws, finish: func(err error) {
			if err == nil {
				a.adopt(lower, rec)
			}
		}}, nil
	})
}

// expiryIndex makes sure the table has a ready index whose leading
// property is prop: one it declares, built if it is not yet, or a new one.
func (t *Table) expiryIndex(ctx context.Context, prop string) error {
	lt, err := t.a.strategy.current(ctx, t.name)
	if err != nil {
		return err
	}
	defs := *lt.indexes.Load()
	if x := expiryIndexOf(defs, prop, false); x != nil {
		if x.Ready {
			return nil
		}
		return t.buildIndex(ctx, x.ID)
	}
	name := "expiry"
	if n := "expiry_" + prop; len(n) <= maxIndexNameLen && asciiIdentifier(n) {
		name = n
	}
	for i := 2; findIndex(defs, name) >= 0; i++ {
		name = fmt.Sprintf("expiry%d", i)
	}
	id, ready, err := t.declareIndex(ctx, name, []string{prop}, true)
	if err != nil || ready {
		return err
	}
	return t.buildIndex(ctx, id)
}

// expiryIndexOf returns the index of defs that the sweeper reads for
// property prop: the first whose leading property is prop (and which is
// ready, with ready), or nil.
func expiryIndexOf(defs []indexDef, prop string, ready bool) *indexDef {
	for i := range defs {
		if defs[i].Props[0] == prop && (defs[i].Ready || !ready) {
			return &defs[i]
		}
	}
	return nil
}

// isSystemProperty reports whether name is PartitionKey, RowKey or
// Timestamp.
func isSystemProperty(name string) bool {
	return name == PartitionKeyName || name == RowKeyName || name == "Timestamp"
}

// planSetExpiry decides SetExpiry (prop) or ClearExpiry (prop "") of
// table name from its catalog record read: the record with the policy,
// and its writes; no writes when the record says so already. Setting a
// policy needs an index on prop that is ready. The indexes SetExpiry
// declared for a policy (ForExpiry) on another leading property than
// prop are dropped, with their entries, in the same commit.
func planSetExpiry(name, lower string, cur []byte, found bool, prop string) (*tableRecord, []write, error) {
	key := keyenc.CatalogKey(lower)
	rec, err := decodeCatalogRecord(name, key, cur, found)
	if err != nil {
		return nil, nil, err
	}
	var drops []write
	keep := rec.Indexes[:0:0]
	for _, x := range rec.Indexes {
		if x.ForExpiry && x.Props[0] != prop {
			prefix := keyenc.AppendIndexPrefix(nil, rec.ID, x.ID)
			drops = append(drops, write{key: prefix, del: true, end: keyenc.PrefixEnd(prefix)})
			continue
		}
		keep = append(keep, x)
	}
	if rec.Expiry == prop && drops == nil {
		return &rec, nil, nil
	}
	rec.Indexes = keep
	if prop != "" && expiryIndexOf(rec.Indexes, prop, true) == nil {
		return nil, nil, newError(ErrInvalidInput, "table %q has no built index on %s, which its expiry policy needs (it was dropped meanwhile?)", name, prop)
	}
	rec.Expiry = prop
	return &rec, append([]write{{key: key, value: rec.append(nil)}}, drops...), nil
}

// checkDropExpiryIndex refuses the drop of index i of rec when the
// record's expiry policy would be left without a ready index on its
// property.
func checkDropExpiryIndex(name string, rec *tableRecord, i int) error {
	if rec.Expiry == "" || rec.Indexes[i].Props[0] != rec.Expiry {
		return nil
	}
	rest := slices.Delete(slices.Clone(rec.Indexes), i, i+1)
	if expiryIndexOf(rest, rec.Expiry, true) != nil {
		return nil
	}
	return newError(ErrInvalidInput, "index %q of table %q is the one its expiry policy on %s reads: clear the policy first (ClearExpiry)", rec.Indexes[i].Name, name, rec.Expiry)
}
