package etcd_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// feedLine is what a watcher's line says of a change.
type feedLine struct {
	Revision uint64 `json:"revision"`
	Commit   uint64 `json:"commit"`
	Last     bool   `json:"last"`
	Kind     string `json:"kind"`
	Table    string `json:"table"`
	Entity   struct {
		ETag string `json:"odata.etag"`
		PK   string `json:"PartitionKey"`
		RK   string `json:"RowKey"`
		N    *int32 `json:"N"`
	} `json:"entity"`
}

func (l feedLine) String() string {
	n := "-"
	if l.Entity.N != nil {
		n = fmt.Sprint(*l.Entity.N)
	}
	return fmt.Sprintf("%d/%d %v %s %s %s/%s %s %s", l.Revision, l.Commit, l.Last, l.Kind, l.Table, l.Entity.PK, l.Entity.RK, n, l.Entity.ETag)
}

// watchServer runs 'localtable watch --from 0 -o jsonl' on the server of
// a connection string and returns the changes it prints, until the one of
// PartitionKey "end"; the process is stopped after it.
func watchServer(t *testing.T, bin, connString string) <-chan []feedLine {
	t.Helper()
	cmd := exec.Command(bin, "watch", "--from", "0", "-o", "jsonl", "--connection-string", connString)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	done := make(chan []feedLine, 1)
	go func() {
		defer func() {
			cmd.Process.Kill()
			cmd.Wait()
		}()
		var lines []feedLine
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l feedLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("watch: line %q: %v", sc.Text(), err)
				break
			}
			lines = append(lines, l)
			if l.Entity.PK == "end" {
				break
			}
		}
		if len(lines) == 0 || lines[len(lines)-1].Entity.PK != "end" {
			t.Errorf("watch of %s ended after %d changes without the end marker; stderr:\n%s", connString, len(lines), stderr.String())
		}
		done <- lines
	}()
	return done
}

// TestFeedTwoServerProcesses runs two servers (the localtable command
// with etcd support, serve --etcd --feed) on one cluster and prefix, and a
// watcher of each one's feed ('localtable watch', GET /ACCOUNT/$changes):
// writers write through both servers at once; both watchers see the same
// sequence of changes, with revisions 1, 2, 3… without a gap, holding
// every acknowledged write once, each writer's in the order acknowledged.
func TestFeedTwoServerProcesses(t *testing.T) {
	bin := buildCommand(t)
	prefix := newPrefix("feed-servers")
	var cs []string
	for range 2 {
		cs = append(cs, startServer(t, bin, etcdServeArgs(prefix, "--feed")...))
	}
	ctx := bg()
	_, err := sdkClient(t, cs[0]).CreateTable(ctx, "Fed", nil)
	must(t, err)
	var watches []<-chan []feedLine
	for _, c := range cs {
		watches = append(watches, watchServer(t, bin, c))
	}
	const writers, perWriter = 4, 12
	acked := make([][]string, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tbl := sdkClient(t, cs[w%2]).NewClient("Fed")
			for i := range perWriter {
				rk := fmt.Sprint(i % 3)
				_, err := tbl.UpsertEntity(ctx, entityJSON(t, fmt.Sprintf("w%d", w), rk, map[string]any{"N": int32(i)}), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
				if err != nil {
					// A write that lost too many races is answered 503
					// ServerBusy and applied nothing: not in the feed.
					t.Logf("writer %d: %v", w, err)
					continue
				}
				acked[w] = append(acked[w], fmt.Sprintf("w%d/%s %d", w, rk, i))
			}
		}()
	}
	wg.Wait()
	_, err = sdkClient(t, cs[1]).NewClient("Fed").AddEntity(ctx, entityJSON(t, "end", "end", nil), nil)
	must(t, err)
	var seen [][]feedLine
	for i, w := range watches {
		select {
		case lines := <-w:
			seen = append(seen, lines)
		case <-time.After(2 * time.Minute):
			t.Fatalf("watcher %d: no end marker within 2 minutes", i)
		}
	}
	if t.Failed() {
		return
	}
	var text [2][]string
	for i := range seen {
		for _, l := range seen[i] {
			text[i] = append(text[i], l.String())
		}
	}
	if !slices.Equal(text[0], text[1]) {
		t.Fatalf("the watchers saw different sequences:\n%s\n---\n%s", strings.Join(text[0], "\n"), strings.Join(text[1], "\n"))
	}
	total := 2 // the table's creation and the end marker
	for _, a := range acked {
		total += len(a)
	}
	if len(seen[0]) != total {
		t.Fatalf("the watchers saw %d changes; %d were acknowledged:\n%s", len(seen[0]), total, strings.Join(text[0], "\n"))
	}
	byWriter := make([][]string, writers)
	for i, l := range seen[0] {
		if l.Revision != uint64(i+1) {
			t.Fatalf("change %d has revision %d: a gap or a duplicate", i, l.Revision)
		}
		if i == 0 || i == total-1 {
			continue
		}
		var w int
		fmt.Sscanf(l.Entity.PK, "w%d", &w)
		byWriter[w] = append(byWriter[w], fmt.Sprintf("%s/%s %d", l.Entity.PK, l.Entity.RK, *l.Entity.N))
	}
	if seen[0][0].Kind != "TableCreated" || seen[0][total-1].Entity.PK != "end" {
		t.Errorf("first %s, last %s", seen[0][0], seen[0][total-1])
	}
	for w := range writers {
		if !slices.Equal(byWriter[w], acked[w]) {
			t.Errorf("writer %d: feed %q\nacknowledged %q", w, byWriter[w], acked[w])
		}
	}
}
