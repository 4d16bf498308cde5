package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/localtable/localtable/localtabletest"
)

// TestIndexEntitiesWithSDK runs the pattern through the official Go SDK
// against the test server: 8 clients hire 160 employees over 4 last names
// concurrently, and every index entity ends listing exactly its employees.
func TestIndexEntitiesWithSDK(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	if _, err := srv.Client.CreateTable(ctx, "Employees", nil); err != nil {
		t.Fatal(err)
	}
	c := srv.Client.NewClient("Employees")
	names := lastNames[:4]
	const n = 160
	var wg sync.WaitGroup
	var mu sync.Mutex
	retries := 0
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += workers {
				r, err := hireWithSDK(ctx, c, empKey(i), fmt.Sprint("First", i), names[(i+i/workers)%len(names)])
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				retries += r
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d transactions retried after losing a race on an index entity", retries)
	for k, ln := range names {
		idx, found, err := getIndex(ctx, c, ln)
		if err != nil || !found {
			t.Fatalf("index %s: found %v, %v", ln, found, err)
		}
		var want []string
		for i := 0; i < n; i++ {
			if (i+i/workers)%len(names) == k {
				want = append(want, empKey(i))
			}
		}
		got := slices.Sorted(slices.Values(strings.Fields(idx.EmployeeIDs)))
		if !slices.Equal(got, want) {
			t.Errorf("index %s lists %d ids, want %d:\n got %v\nwant %v", ln, len(got), len(want), got, want)
		}
	}
}
