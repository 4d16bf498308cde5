package filter

import (
	"context"
	"strings"
	"sync"

	"github.com/localtable/localtable"
)

// TypeCheck is a Predicate that matches as its Filter does and notes, in
// the entities a query scans through it, the Edm types of the properties
// the filter compares, so that Hints can say which comparisons cannot
// hold. Values of different types never compare (see Compare): the
// service answers "Total eq '12.5'" with no entity when Total is an
// Edm.Double, and so does localtable, faithfully; the hint is for the
// person who wrote it. The explorer and 'localtable query --explain' show
// the hints beside Explain's plan.
//
// A TypeCheck is for one query (its pages in turn or at once: it is safe
// for concurrent use). Matching through it costs a lookup of each
// compared property per entity scanned.
type TypeCheck struct {
	f     *Filter
	props []string // the properties compared, in order of appearance
	lits  map[string][]localtable.Value

	mu      sync.Mutex
	scanned int
	seen    map[string]map[localtable.Kind]localtable.Value // property → kinds seen → an example
}

// TypeCheck returns a TypeCheck of f, to pass as a query's filter in
// place of f.
func (f *Filter) TypeCheck() *TypeCheck {
	c := &TypeCheck{f: f, lits: map[string][]localtable.Value{}, seen: map[string]map[localtable.Kind]localtable.Value{}}
	var walk func(Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case *Comparison:
			if _, ok := c.lits[e.Property]; !ok {
				c.props = append(c.props, e.Property)
				c.seen[e.Property] = map[localtable.Kind]localtable.Value{}
			}
			for _, v := range c.lits[e.Property] {
				if v.Kind() == e.Value.Kind() {
					return
				}
			}
			c.lits[e.Property] = append(c.lits[e.Property], e.Value)
		case *AndExpr:
			walk(e.Left)
			walk(e.Right)
		case *OrExpr:
			walk(e.Left)
			walk(e.Right)
		case *NotExpr:
			walk(e.X)
		}
	}
	walk(f.Expr())
	return c
}

// Match reports whether the filter matches e, noting the types of e's
// compared properties.
func (c *TypeCheck) Match(e *localtable.Entity) bool {
	c.note(e)
	return c.f.Match(e)
}

// MatchReader is Match for the entity r reads (see
// localtable.ReaderPredicate): a query scans through a TypeCheck as fast
// as through its Filter, but for the lookups.
func (c *TypeCheck) MatchReader(r localtable.PropertyReader) bool {
	c.note(r)
	return c.f.MatchReader(r)
}

// MatchInRanges is MatchReader for an entity within the filter's key
// ranges (see localtable.RangeReaderPredicate), noting the types as
// MatchReader does.
func (c *TypeCheck) MatchInRanges(r localtable.PropertyReader) bool {
	c.note(r)
	return c.f.MatchInRanges(r)
}

// note notes the types of the compared properties of the entity r reads.
func (c *TypeCheck) note(r localtable.PropertyReader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scanned++
	for _, p := range c.props {
		if v, ok := r.Property(p); ok && !v.IsNull() {
			if kinds := c.seen[p]; kinds[v.Kind()].IsNull() {
				kinds[v.Kind()] = detach(v)
			}
		}
	}
}

// detach returns v apart from the memory of the record it was read from,
// which a query reuses for the next entity.
func detach(v localtable.Value) localtable.Value {
	switch v.Kind() {
	case localtable.KindString:
		return localtable.StringValue(strings.Clone(v.String()))
	case localtable.KindBinary:
		return localtable.BinaryValue(v.Binary()) // Binary copies
	case localtable.KindGUID:
		return localtable.GUIDValue(v.GUID())
	}
	return v
}

// Probe reads up to limit entities (0: DefaultProbeLimit) of t in the
// filter's key ranges, by
// its key ranges alone (through no index), noting their types for Hints
// and matching none of them. It does nothing once the query through c
// noted an entity. A query read through an index notes only the entities
// the index gives it, and a comparison whose literal is of another type
// than the property's values finds no entry, so nothing is noted and no
// hint given: the case hints are for. Call Probe after such a query
// (tools do, before they show Hints).
func (c *TypeCheck) Probe(ctx context.Context, t *localtable.Table, limit int) error {
	c.mu.Lock()
	noted := c.scanned > 0
	c.mu.Unlock()
	if noted {
		return nil
	}
	if limit <= 0 {
		limit = DefaultProbeLimit
	}
	_, err := t.Query(ctx, &localtable.QueryOptions{Filter: probe{c}, ScanLimit: limit})
	return err
}

// DefaultProbeLimit is the entities Probe reads with a limit of 0: enough
// to meet the types a property holds in most tables, few enough for a
// tool to probe on each query it shows.
const DefaultProbeLimit = 1000

// probe is the Predicate of Probe: it notes each entity's types and
// matches none, and has the filter's key ranges but no PropertyRanges, so
// that it reads the entities rather than an index.
type probe struct{ c *TypeCheck }

func (p probe) Match(e *localtable.Entity) bool { p.c.note(e); return false }

func (p probe) MatchReader(r localtable.PropertyReader) bool { p.c.note(r); return false }

func (p probe) KeyRanges() ([]localtable.KeyRange, bool) { return p.c.f.KeyRanges() }

func (p probe) String() string { return p.c.f.String() }

// KeyRanges returns the filter's key ranges.
func (c *TypeCheck) KeyRanges() ([]localtable.KeyRange, bool) { return c.f.KeyRanges() }

// PropertyRanges returns the filter's ranges of a property, so that a
// query checked for hints plans as the filter does (an index included).
// It has no PropertyRangesExact: a Count must read the entities for the
// hints.
func (c *TypeCheck) PropertyRanges(name string) ([]localtable.ValueRange, bool) {
	return c.f.PropertyRanges(name)
}

// String returns the filter's $filter text.
func (c *TypeCheck) String() string { return c.f.String() }

// Err returns the filter's error, if it carries one.
func (c *TypeCheck) Err() error { return c.f.Err() }

// Hints returns a sentence for each comparison that no entity scanned so
// far can satisfy for its type: the property has values in them, all of
// types its literal does not compare with, as
//
//	Total is Edm.Double in the entities scanned (12.5, for one); the filter compares it with a String ('12.5'), and values of different types never match: write a Double literal, such as 12.5.
//
// It returns nil when no entity was scanned, and says nothing of a
// property absent from every entity scanned.
func (c *TypeCheck) Hints() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scanned == 0 {
		return nil
	}
	var hints []string
	for _, p := range c.props {
		kinds := c.seen[p]
		if len(kinds) == 0 {
			continue
		}
		var names []string
		var example localtable.Value
		for k := localtable.KindString; k <= localtable.KindBinary; k++ {
			if v, ok := kinds[k]; ok {
				names = append(names, k.String())
				if example.IsNull() {
					example = v
				}
			}
		}
		for _, lit := range c.lits[p] {
			comparable := false
			for _, v := range kinds { // Compare's rule: eq or ne holds unless the types differ
				comparable = comparable || Compare(v, OpEq, lit) || Compare(v, OpNe, lit)
			}
			if comparable {
				continue
			}
			h := p + " is " + strings.Join(names, " or ") + " in the entities scanned (" + Literal(example) + ", for one); the filter compares it with " +
				article(lit.Kind()) + " (" + Literal(lit) + "), and values of different types never match"
			if len(names) == 1 {
				h += ": write " + article(example.Kind()) + " literal, such as " + Literal(example)
			}
			hints = append(hints, h+".")
		}
	}
	return hints
}

// article is a kind's short name with its article: "a String", "an Int32".
func article(k localtable.Kind) string {
	s := strings.TrimPrefix(k.String(), "Edm.")
	if s != "" && strings.ContainsRune("AEIOU", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}
