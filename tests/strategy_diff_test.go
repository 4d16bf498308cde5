package tests

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

// TestStrategyDifferential runs the same random sequences of writes (and
// reads) once through the local commit strategy (an in-memory engine the
// account owns) and once through the versioned one (a shared engine,
// internal/sharedmem, as etcd is), each account on a clock of its own that
// says the same times, and requires identical outcomes: the same ETags in
// the same order, the same errors (code, and index of a transaction's
// failing action), and the same final state. Transactions with a failing
// action, merges, conditional updates and deletes with current and stale
// ETags, and table creation and deletion are all in the mix.
func TestStrategyDifferential(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	total := map[string]int{} // outcomes by kind, to check that the mix covers what it claims
	defer func() {
		t.Logf("outcomes: %v", total)
		for _, kind := range []string{"transact [W/", "ok", "UpdateConditionNotSatisfied", "EntityAlreadyExists at", "ResourceNotFound", "delete table ok"} {
			if total[kind] < seeds {
				t.Errorf("the sequences miss %q: %v", kind, total)
			}
		}
	}()
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 19))
			clockStep := time.Duration(r.IntN(3)) * time.Millisecond // 0: a frozen clock
			local := openDiff(t, memory.New(nil), clockStep)
			versioned := openDiff(t, sharedmem.New().Open(), clockStep)
			var g diffGen
			g.r = r
			for _, name := range diffTables {
				for _, a := range []*localtable.Account{local, versioned} {
					if _, err := a.CreateTable(context.Background(), name); err != nil {
						t.Fatal(err)
					}
				}
			}
			seen := map[string]int{}
			for step := range 300 {
				op := g.next()
				a, b := op(local), op(versioned)
				if a != b {
					t.Fatalf("step %d: outcomes differ\nlocal:     %s\nversioned: %s", step, a, b)
				}
				for _, kind := range []string{"transact [W/", "ok", "UpdateConditionNotSatisfied", "EntityAlreadyExists at", "ResourceNotFound", "delete table ok"} {
					if strings.Contains(a, kind) {
						seen[kind]++
					}
				}
			}
			for k, n := range seen {
				total[k] += n
			}
			if a, b := dumpAccount(t, local), dumpAccount(t, versioned); a != b {
				t.Fatalf("final states differ\nlocal:\n%s\nversioned:\n%s", a, b)
			}
		})
	}
}

func openDiff(t *testing.T, eng storage.Engine, step time.Duration) *localtable.Account {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, err := localtable.Open(&localtable.Options{
		Engine: eng,
		Clock: func() time.Time {
			now = now.Add(step)
			return now
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// diffGen makes random operations; each runs on an account and describes
// its outcome as text. It remembers the ETags it has seen, so that
// conditions name current and stale ones.
type diffGen struct {
	r     *rand.Rand
	etags []localtable.ETag
}

var diffTables = []string{"Alpha", "Beta", "gamma"}

func (g *diffGen) table() string { return diffTables[g.r.IntN(len(diffTables))] }

func (g *diffGen) entity() localtable.Entity {
	props := localtable.Properties{}
	for range g.r.IntN(4) {
		name := fmt.Sprintf("P%d", g.r.IntN(5))
		switch g.r.IntN(4) {
		case 0:
			props[name] = localtable.Int32Value(int32(g.r.IntN(100)))
		case 1:
			props[name] = localtable.StringValue(strings.Repeat("s", g.r.IntN(5)))
		case 2:
			props[name] = localtable.Value{} // null: a merge leaves the property as it is
		default:
			props[name] = localtable.DoubleValue(g.r.Float64())
		}
	}
	return localtable.Entity{
		PartitionKey: fmt.Sprintf("p%d", g.r.IntN(2)),
		RowKey:       fmt.Sprintf("r%d", g.r.IntN(6)),
		Properties:   props,
	}
}

func (g *diffGen) ifMatch() localtable.ETag {
	switch n := g.r.IntN(4); {
	case n == 0 || len(g.etags) == 0:
		return ""
	case n == 1:
		return localtable.ETagAny
	default:
		return g.etags[len(g.etags)-1-g.r.IntN(min(len(g.etags), 4))]
	}
}

// next returns a random operation.
func (g *diffGen) next() func(a *localtable.Account) string {
	ctx := context.Background()
	name := g.table()
	switch n := g.r.IntN(20); {
	case n == 0:
		return func(a *localtable.Account) string {
			_, err := a.CreateTableIfNotExists(ctx, name)
			return "create " + outcome(err)
		}
	case n == 1 && g.r.IntN(4) == 0:
		return func(a *localtable.Account) string { return "delete table " + outcome(a.DeleteTable(ctx, name)) }
	case n == 2:
		policies := []localtable.AccessPolicy{{ID: fmt.Sprint(g.r.IntN(9)), Permission: "r"}}
		return func(a *localtable.Account) string {
			return "policies " + outcome(a.Table(name).SetAccessPolicy(ctx, policies))
		}
	case n < 8:
		e, typ, tag := g.entity(), localtable.ActionType(g.r.IntN(6)), g.ifMatch()
		return func(a *localtable.Account) string {
			tags, err := a.Table(name).Transact(ctx, []localtable.Action{{Type: typ, Entity: e, IfMatch: tag}})
			g.saw(tags)
			return fmt.Sprintf("%v %v %s", typ, tags, outcome(err))
		}
	case n < 16:
		var acts []localtable.Action
		pk := fmt.Sprintf("p%d", g.r.IntN(2))
		for range 1 + g.r.IntN(6) {
			e := g.entity()
			e.PartitionKey = pk
			acts = append(acts, localtable.Action{Type: localtable.ActionType(g.r.IntN(6)), Entity: e, IfMatch: g.ifMatch()})
		}
		return func(a *localtable.Account) string {
			tags, err := a.Table(name).Transact(ctx, acts)
			g.saw(tags)
			return fmt.Sprintf("transact %v %s", tags, outcome(err))
		}
	default:
		e := g.entity()
		return func(a *localtable.Account) string {
			got, err := a.Table(name).Get(ctx, e.PartitionKey, e.RowKey, nil)
			if err != nil {
				return "get " + outcome(err)
			}
			return "get " + describeEntity(got)
		}
	}
}

func (g *diffGen) saw(tags []localtable.ETag) {
	for _, t := range tags {
		if t != "" && !slices.Contains(g.etags, t) {
			g.etags = append(g.etags, t)
		}
	}
}

// outcome describes an error by what a caller can tell of it: its code,
// and for a transaction the failing action's index.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var te *localtable.TransactionError
	index := ""
	if errors.As(err, &te) {
		index = fmt.Sprintf(" at %d", te.Index)
	}
	var e *localtable.Error
	if errors.As(err, &e) {
		return string(e.Code) + index
	}
	return "error " + err.Error()
}

func describeEntity(e localtable.Entity) string {
	names := make([]string, 0, len(e.Properties))
	for n := range e.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "(%s,%s) %s %s", e.PartitionKey, e.RowKey, e.ETag, e.Timestamp.Format(time.RFC3339Nano))
	for _, n := range names {
		fmt.Fprintf(&b, " %s=%v", n, e.Properties[n])
	}
	return b.String()
}

// dumpAccount describes every table, its access policies and its
// entities.
func dumpAccount(t *testing.T, a *localtable.Account) string {
	ctx := context.Background()
	var b strings.Builder
	for ti, err := range a.Tables(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tbl := a.Table(ti.Name)
		ps, err := tbl.GetAccessPolicy(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "table %s %v\n", ti.Name, ps)
		for e, err := range tbl.QueryAll(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "  %s\n", describeEntity(e))
		}
	}
	return b.String()
}
