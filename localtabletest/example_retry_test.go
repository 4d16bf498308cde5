package localtabletest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// This file is a small piece of user code, a page-view counter, with the
// bug that lost responses find, the test that finds it, and the fix.

// counter is the entity the code keeps: a count and the id of the last
// increment applied.
type counter struct {
	PartitionKey, RowKey string
	Count                int32
	LastOp               string `json:",omitempty"`
}

func readCounter(ctx context.Context, c *aztables.Client, pk, rk string) (counter, azcore.ETag, error) {
	resp, err := c.GetEntity(ctx, pk, rk, nil)
	if err != nil {
		return counter{}, "", err
	}
	var v counter
	err = json.Unmarshal(resp.Value, &v)
	return v, resp.ETag, err
}

func writeCounter(ctx context.Context, c *aztables.Client, v counter, etag azcore.ETag) error {
	b, _ := json.Marshal(v)
	_, err := c.UpdateEntity(ctx, b, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
	return err
}

func conflict(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusPreconditionFailed
}

// incrementNaive is optimistic concurrency as it is usually written:
// read, add one, write back if nobody wrote since (If-Match), and on 412
// start over. It is wrong: when the write is applied but its response is
// lost, the SDK retries the same PUT, the service answers 412 (the ETag
// changed, by this very write), and the loop adds one again.
func incrementNaive(ctx context.Context, c *aztables.Client, pk, rk string) error {
	for {
		v, etag, err := readCounter(ctx, c, pk, rk)
		if err != nil {
			return err
		}
		v.Count++
		if err := writeCounter(ctx, c, v, etag); !conflict(err) {
			return err
		}
	}
}

// incrementOnce is the fix: each increment has an id, written with the
// count; after a 412 it re-reads and, if the entity already carries its
// id, its own write landed and it is done.
func incrementOnce(ctx context.Context, c *aztables.Client, pk, rk, opID string) error {
	for {
		v, etag, err := readCounter(ctx, c, pk, rk)
		if err != nil {
			return err
		}
		if v.LastOp == opID {
			return nil // applied by an attempt whose response was lost
		}
		v.Count++
		v.LastOp = opID
		if err := writeCounter(ctx, c, v, etag); !conflict(err) {
			return err
		}
	}
}

// loseFirstUpdate makes the first update apply and then drops the
// connection, as a network failure after the service commits.
func loseFirstUpdate(srv *localtabletest.Server) *localtabletest.Fault {
	return srv.Inject(localtabletest.Rule{
		Ops:        []localtabletest.Operation{localtabletest.OpUpdate},
		AfterApply: true,
		Times:      1,
		Action:     localtabletest.DropConnection(),
	})
}

func TestLostResponseFindsDoubleIncrement(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name      string
		increment func(*aztables.Client) error
		want      int32
	}{
		{"naive", func(c *aztables.Client) error { return incrementNaive(ctx, c, "page", "home") }, 2}, // the bug, found
		{"once", func(c *aztables.Client) error { return incrementOnce(ctx, c, "page", "home", "op-1") }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := localtabletest.New(t)
			srv.Seed(t, "counters", counter{PartitionKey: "page", RowKey: "home"})
			lost := loseFirstUpdate(srv)
			tc := srv.Client.NewClient("counters")
			if err := c.increment(tc); err != nil {
				t.Fatal(err)
			}
			v, _, err := readCounter(ctx, tc, "page", "home")
			if err != nil {
				t.Fatal(err)
			}
			if lost.Hits() != 1 || v.Count != c.want {
				t.Fatalf("one increment left Count %d (want %d); requests:\n%s", v.Count, c.want, srv.Log())
			}
			// The SDK retried the lost update itself: the log shows it.
			ups := srv.Log().Op(localtabletest.OpUpdate)
			if ups[0].Status != 0 || !ups[0].Applied || ups[1].ErrorCode != "UpdateConditionNotSatisfied" {
				t.Fatalf("updates:\n%s", ups)
			}
		})
	}
}

// A response lost after the write is applied makes the SDK retry the
// write; naive optimistic-concurrency code then counts twice.
func Example_lostResponse() {
	t := &testing.T{} // in a real test, the *testing.T of the test
	ctx := context.Background()
	for _, fixed := range []bool{false, true} {
		srv := localtabletest.New(t)
		srv.Seed(t, "counters", counter{PartitionKey: "page", RowKey: "home"})
		loseFirstUpdate(srv)
		c := srv.Client.NewClient("counters")
		if fixed {
			incrementOnce(ctx, c, "page", "home", "op-1")
		} else {
			incrementNaive(ctx, c, "page", "home")
		}
		v, _, _ := readCounter(ctx, c, "page", "home")
		fmt.Printf("fixed=%v: one increment, Count=%d\n", fixed, v.Count)
		fmt.Print(srv.Log())
	}
	// Output:
	// fixed=false: one increment, Count=2
	// #1 GetEntity counters (page, home) → 200
	// #2 UpdateEntity counters (page, home) → no response [drop connection after apply, applied]
	// #3 UpdateEntity counters (page, home) → 412 UpdateConditionNotSatisfied
	// #4 GetEntity counters (page, home) → 200
	// #5 UpdateEntity counters (page, home) → 204
	// #6 GetEntity counters (page, home) → 200
	// fixed=true: one increment, Count=1
	// #1 GetEntity counters (page, home) → 200
	// #2 UpdateEntity counters (page, home) → no response [drop connection after apply, applied]
	// #3 UpdateEntity counters (page, home) → 412 UpdateConditionNotSatisfied
	// #4 GetEntity counters (page, home) → 200
	// #5 GetEntity counters (page, home) → 200
}

// docs/testing.md's version of the test: AssertTable fails on the naive
// counter and passes on the fixed one.
func TestAssertTableCatchesDoubleIncrement(t *testing.T) {
	ctx := context.Background()
	for _, fixed := range []bool{false, true} {
		srv := localtabletest.New(t)
		srv.Seed(t, "counters", `{"PartitionKey":"page","RowKey":"home","Count":0}`)
		loseFirstUpdate(srv)
		c := srv.Client.NewClient("counters")
		want := `{"PartitionKey":"page","RowKey":"home","Count":1}`
		if fixed {
			if err := incrementOnce(ctx, c, "page", "home", "op-1"); err != nil {
				t.Fatal(err)
			}
			want = `{"PartitionKey":"page","RowKey":"home","Count":1,"LastOp":"op-1"}`
		} else if err := incrementNaive(ctx, c, "page", "home"); err != nil {
			t.Fatal(err)
		}
		rec := &recorder{TB: t}
		srv.AssertTable(rec, "counters", want)
		if failed := len(rec.msgs) > 0; failed == fixed {
			t.Errorf("fixed=%v: AssertTable reported %q", fixed, rec.msgs)
		}
		if !fixed && (len(rec.msgs) != 1 || !strings.Contains(rec.msgs[0], "Edm.Int32 2")) {
			t.Errorf("the naive counter's diff: %q", rec.msgs)
		}
	}
}
