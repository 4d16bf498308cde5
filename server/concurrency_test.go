package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// TestSDKConcurrentClients drives one server from many goroutines through
// aztables at once: inserts on many partitions, an ETag-conditioned
// read-modify-write counter on one hot entity, paged queries while writes
// happen, batches on private partitions, and competing batches on one
// partition. The final state is checked exactly.
func TestSDKConcurrentClients(t *testing.T) {
	const (
		workers    = 16
		inserts    = 20 // entities each worker inserts on its partition
		increments = 8  // counter increments each worker makes
		batches    = 4  // batches of batchSize each worker submits
		batchSize  = 5
	)
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "hot")
	mustJSON := func(m map[string]any) []byte { b, _ := json.Marshal(m); return b }
	if _, err := c.AddEntity(ctx, mustJSON(map[string]any{"PartitionKey": "counter", "RowKey": "c", "N": 0}), nil); err != nil {
		t.Fatal(err)
	}

	var (
		wg         sync.WaitGroup
		mu         sync.Mutex
		errs       []error
		conflicts  int
		raceWins   int
		raceLosses int
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// Each worker has its own client, as separate processes would.
			sc, err := aztables.NewServiceClientWithSharedKey(srv.URL, srv.Credential, nil)
			if err != nil {
				fail(err)
				return
			}
			tc := sc.NewClient("hot")
			for i := 0; i < inserts; i++ {
				if _, err := tc.AddEntity(ctx, mustJSON(map[string]any{"PartitionKey": fmt.Sprintf("p%02d", w), "RowKey": fmt.Sprintf("%03d", i), "W": w, "I": i}), nil); err != nil {
					fail(fmt.Errorf("insert %d/%d: %w", w, i, err))
				}
				if i%5 != 0 {
					continue
				}
				// A paged query while others write: pages in key order,
				// no entity twice.
				pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr(int32(13)), Select: to.Ptr("PartitionKey,RowKey")})
				var keys []string
				seen := map[string]bool{}
				for pager.More() {
					p, err := pager.NextPage(ctx)
					if err != nil {
						fail(fmt.Errorf("query: %w", err))
						return
					}
					for _, e := range p.Entities {
						var m map[string]any
						json.Unmarshal(e, &m)
						k := m["PartitionKey"].(string) + "\x00" + m["RowKey"].(string)
						if seen[k] {
							fail(fmt.Errorf("query returned %q twice", k))
						}
						seen[k] = true
						keys = append(keys, k)
					}
				}
				if !sort.StringsAreSorted(keys) {
					fail(errors.New("query results out of key order"))
				}
				// Entities present for the whole query are all returned:
				// this worker's own inserts so far, and the counter.
				for j := 0; j <= i; j++ {
					if k := fmt.Sprintf("p%02d\x00%03d", w, j); !seen[k] {
						fail(fmt.Errorf("query missed %q, inserted before it began", k))
					}
				}
				if !seen["counter\x00c"] {
					fail(errors.New("query missed the counter"))
				}
			}
			// Read-modify-write on the hot entity, retrying on 412.
			for i := 0; i < increments; {
				g, err := tc.GetEntity(ctx, "counter", "c", nil)
				if err != nil {
					fail(fmt.Errorf("get counter: %w", err))
					return
				}
				var m map[string]any
				json.Unmarshal(g.Value, &m)
				n := int(m["N"].(float64))
				_, err = tc.UpdateEntity(ctx, mustJSON(map[string]any{"PartitionKey": "counter", "RowKey": "c", "N": n + 1}),
					&aztables.UpdateEntityOptions{IfMatch: &g.ETag, UpdateMode: aztables.UpdateModeReplace})
				var re *azcore.ResponseError
				switch {
				case err == nil:
					i++
				case errors.As(err, &re) && re.StatusCode == http.StatusPreconditionFailed:
					mu.Lock()
					conflicts++
					mu.Unlock()
				default:
					fail(fmt.Errorf("update counter: %w", err))
					return
				}
			}
			// Batches on the worker's own partition.
			for b := 0; b < batches; b++ {
				var acts []aztables.TransactionAction
				for j := 0; j < batchSize; j++ {
					acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace,
						Entity: mustJSON(map[string]any{"PartitionKey": fmt.Sprintf("b%02d", w), "RowKey": fmt.Sprintf("%d-%d", b, j), "B": b})})
				}
				if _, err := tc.SubmitTransaction(ctx, acts, nil); err != nil {
					fail(fmt.Errorf("batch %d/%d: %w", w, b, err))
				}
			}
			// Competing batches: all insert the same rows; exactly one wins.
			var acts []aztables.TransactionAction
			for j := 0; j < batchSize; j++ {
				acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
					Entity: mustJSON(map[string]any{"PartitionKey": "race", "RowKey": fmt.Sprint(j), "W": w})})
			}
			_, err = tc.SubmitTransaction(ctx, acts, nil)
			var re *azcore.ResponseError
			switch {
			case err == nil:
				mu.Lock()
				raceWins++
				mu.Unlock()
			case errors.As(err, &re) && re.StatusCode == http.StatusAccepted && strings.Contains(err.Error(), "EntityAlreadyExists"):
				mu.Lock()
				raceLosses++
				mu.Unlock()
			default:
				fail(fmt.Errorf("competing batch: %w", err))
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	// Final state, exactly.
	g, err := c.GetEntity(ctx, "counter", "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(g.Value, &m)
	if n := int(m["N"].(float64)); n != workers*increments {
		t.Errorf("counter %d, want %d (lost updates; %d conflicts retried)", n, workers*increments, conflicts)
	}
	if raceWins != 1 || raceLosses != workers-1 {
		t.Errorf("competing batches: %d won, %d lost", raceWins, raceLosses)
	}
	counts := map[string]int{}
	winner := -1.0
	pager := c.NewListEntitiesPager(nil)
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Entities {
			var m map[string]any
			json.Unmarshal(e, &m)
			pk := m["PartitionKey"].(string)
			counts[pk]++
			if pk == "race" {
				if winner >= 0 && m["W"] != winner {
					t.Errorf("competing batches interleaved: %v", m)
				}
				winner = m["W"].(float64)
			}
		}
	}
	for w := 0; w < workers; w++ {
		if n := counts[fmt.Sprintf("p%02d", w)]; n != inserts {
			t.Errorf("partition p%02d: %d entities, want %d", w, n, inserts)
		}
		if n := counts[fmt.Sprintf("b%02d", w)]; n != batches*batchSize {
			t.Errorf("partition b%02d: %d entities, want %d", w, n, batches*batchSize)
		}
	}
	if counts["race"] != batchSize || counts["counter"] != 1 || len(counts) != 2*workers+2 {
		t.Errorf("partitions: %v", counts)
	}
}
