package localtable

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/localtable/localtable/internal/keyenc"
)

// MaxAccessPolicies is the most stored access policies a table may have.
const MaxAccessPolicies = 5

// AccessPolicy is a stored access policy of a table (a signed identifier):
// shared access signatures that name its ID take their start, expiry and
// permissions from it.
type AccessPolicy struct {
	ID         string    // at most 64 characters, unique within the table
	Start      time.Time // zero: unset
	Expiry     time.Time // zero: unset
	Permission string    // a subset of "raud", in that order; may be empty
}

func formatPolicyTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parsePolicyTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// validatePolicies checks a table's access policies against the service's
// rules: at most 5, IDs of 1 to 64 characters and unique, permissions from
// "raud".
func validatePolicies(ps []AccessPolicy) error {
	if len(ps) > MaxAccessPolicies {
		return newError(ErrInvalidInput, "%d access policies; a table may have at most %d", len(ps), MaxAccessPolicies)
	}
	seen := make(map[string]bool, len(ps))
	for _, p := range ps {
		if p.ID == "" || len(p.ID) > 64 {
			return newError(ErrInvalidInput, "access policy ID %q must be 1 to 64 characters", p.ID)
		}
		if seen[p.ID] {
			return newError(ErrInvalidInput, "access policy ID %q appears twice", p.ID)
		}
		seen[p.ID] = true
		for _, c := range p.Permission {
			switch c {
			case 'r', 'a', 'u', 'd':
			default:
				return newError(ErrInvalidInput, "access policy %q: permission %q is not one of r, a, u, d", p.ID, c)
			}
		}
		if !p.Start.IsZero() && !p.Expiry.IsZero() && p.Expiry.Before(p.Start) {
			return newError(ErrInvalidInput, "access policy %q expires before it starts", p.ID)
		}
	}
	return nil
}

// GetAccessPolicy returns the table's stored access policies.
func (t *Table) GetAccessPolicy(ctx context.Context) ([]AccessPolicy, error) {
	if err := t.a.enter(ctx); err != nil {
		return nil, err
	}
	defer t.a.exit()
	lt, err := t.a.strategy.current(ctx, t.name) // on a shared engine, another process may have set them
	if err != nil {
		return nil, err
	}
	return slices.Clone(*lt.policies.Load()), nil
}

// SetAccessPolicy replaces the table's stored access policies (at most 5).
func (t *Table) SetAccessPolicy(ctx context.Context, policies []AccessPolicy) error {
	if err := validatePolicies(policies); err != nil {
		return err
	}
	a := t.a
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	stored := append([]AccessPolicy(nil), policies...)
	for i := range stored {
		p := &stored[i]
		p.Start, p.Expiry = truncPolicyTime(p.Start), truncPolicyTime(p.Expiry)
	}
	a.ddl.Lock()
	defer a.ddl.Unlock()
	lower := strings.ToLower(t.name)
	return a.update(ctx, "setting the access policies of table "+t.name, maxConflictRetries, [][]byte{keyenc.CatalogKey(lower)}, func(rs *readSet) (*metaPlan, error) {
		rec, ws, err := planSetPolicies(t.name, lower, rs.vals[0], rs.found[0], stored)
		if !rs.found[0] {
			a.forget(lower, nil) // on a shared engine, another process deleted it
		}
		if err != nil {
			return nil, err
		}
		return &metaPlan{
			writes:  ws,
			changes: []change{{kind: changeTablePolicies, tableID: rec.ID, table: rec.Name}},
			finish: func(err error) {
				if err == nil {
					a.adopt(lower, rec)
				}
			},
		}, nil
	})
}

func truncPolicyTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
