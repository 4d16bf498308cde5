package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// These tests drive the server through the official Go SDK.

func newTable(t *testing.T, srv *localtabletest.Server, name string) *aztables.Client {
	t.Helper()
	c := srv.Client.NewClient(name)
	if _, err := c.CreateTable(context.Background(), nil); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return c
}

func code(err error) (int, string) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, re.ErrorCode
	}
	return 0, ""
}

func wantCode(t *testing.T, err error, status int, c string) {
	t.Helper()
	if gs, gc := code(err); gs != status || gc != c {
		t.Fatalf("got %d %q (%v), want %d %q", gs, gc, err, status, c)
	}
}

func TestSDKEntityEDMTypes(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "types")
	dt := time.Date(2013, 8, 2, 17, 37, 43, 9004300, time.UTC)
	ent := aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: "pk", RowKey: "a r"}, // EDMEntity quote-doubles keys in its JSON (SDK bug)
		Properties: map[string]any{
			"Bin":  aztables.EDMBinary("SomeBinary"),
			"Bool": true,
			"DT":   aztables.EDMDateTime(dt),
			"Dbl":  2.0,
			"Frac": 1234.1234,
			"Guid": aztables.EDMGUID("4185404a-5818-48c3-b9be-f217df0dba6f"),
			"I32":  int32(1234),
			"I64":  aztables.EDMInt64(123456789012),
			"Str":  "test",
			"Big":  aztables.EDMInt64(math.MaxInt64),
		},
	}
	b, _ := json.Marshal(ent)
	if _, err := c.AddEntity(ctx, b, nil); err != nil {
		t.Fatalf("AddEntity: %v", err)
	}
	if _, err := c.AddEntity(ctx, b, nil); err == nil {
		t.Fatal("duplicate insert succeeded")
	} else {
		wantCode(t, err, 409, "EntityAlreadyExists")
	}
	resp, err := c.GetEntity(ctx, "pk", "a r", nil)
	if err != nil {
		t.Fatalf("GetEntity: %v", err)
	}
	var got aztables.EDMEntity
	if err := json.Unmarshal(resp.Value, &got); err != nil {
		t.Fatal(err)
	}
	p := got.Properties
	if string(p["Bin"].(aztables.EDMBinary)) != "SomeBinary" || p["Bool"] != true || !time.Time(p["DT"].(aztables.EDMDateTime)).Equal(dt) ||
		p["Dbl"] != int32(2) /* encoding/json writes 2.0 as 2: an Int32 */ || p["Frac"] != 1234.1234 || p["Guid"] != aztables.EDMGUID("4185404a-5818-48c3-b9be-f217df0dba6f") ||
		p["I32"] != int32(1234) || p["I64"] != aztables.EDMInt64(123456789012) || p["Str"] != "test" || p["Big"] != aztables.EDMInt64(math.MaxInt64) {
		t.Fatalf("round trip: %#v\nraw %s", p, resp.Value)
	}
	if got.ETag == "" || got.Timestamp == (aztables.EDMDateTime{}) {
		t.Fatalf("no ETag/Timestamp: %s", resp.Value)
	}
}

func TestSDKUpdateMergeReplaceETag(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "upd")
	put := func(m map[string]any) []byte { b, _ := json.Marshal(m); return b }
	add, err := c.AddEntity(ctx, put(map[string]any{"PartitionKey": "p", "RowKey": "r", "A": "a", "B": "b"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Merge keeps B.
	up, err := c.UpdateEntity(ctx, put(map[string]any{"PartitionKey": "p", "RowKey": "r", "A": "a2"}), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &add.ETag})
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	// A stale ETag fails with 412.
	_, err = c.UpdateEntity(ctx, put(map[string]any{"PartitionKey": "p", "RowKey": "r"}), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &add.ETag})
	wantCode(t, err, 412, "UpdateConditionNotSatisfied")
	g, _ := c.GetEntity(ctx, "p", "r", nil)
	var m map[string]any
	json.Unmarshal(g.Value, &m)
	if m["A"] != "a2" || m["B"] != "b" {
		t.Fatalf("after merge: %v", m)
	}
	if g.ETag != up.ETag {
		t.Fatalf("ETag %s, update returned %s", g.ETag, up.ETag)
	}
	// Replace drops B.
	if _, err := c.UpdateEntity(ctx, put(map[string]any{"PartitionKey": "p", "RowKey": "r", "C": 1}), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatal(err)
	}
	g, _ = c.GetEntity(ctx, "p", "r", nil)
	m = nil
	json.Unmarshal(g.Value, &m)
	if _, ok := m["B"]; ok || m["C"] != 1.0 {
		t.Fatalf("after replace: %v", m)
	}
	// Update of a missing entity is 404; upsert creates it.
	_, err = c.UpdateEntity(ctx, put(map[string]any{"PartitionKey": "p", "RowKey": "x"}), nil)
	wantCode(t, err, 404, "ResourceNotFound")
	for _, mode := range []aztables.UpdateMode{aztables.UpdateModeMerge, aztables.UpdateModeReplace} {
		if _, err := c.UpsertEntity(ctx, put(map[string]any{"PartitionKey": "p", "RowKey": "u" + string(mode), "V": 1}), &aztables.UpsertEntityOptions{UpdateMode: mode}); err != nil {
			t.Fatalf("upsert %s: %v", mode, err)
		}
	}
	// Delete with a stale ETag fails; with * succeeds; then 404.
	_, err = c.DeleteEntity(ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: &add.ETag})
	wantCode(t, err, 412, "UpdateConditionNotSatisfied")
	if _, err := c.DeleteEntity(ctx, "p", "r", nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteEntity(ctx, "p", "r", nil)
	wantCode(t, err, 404, "ResourceNotFound")
	_, err = srv.Client.NewClient("missing").AddEntity(ctx, put(map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
	wantCode(t, err, 404, "TableNotFound")
}

func TestSDKTables(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	for i := 0; i < 5; i++ {
		newTable(t, srv, fmt.Sprintf("tbl%d", i))
	}
	_, err := srv.Client.CreateTable(ctx, "TBL0", nil)
	wantCode(t, err, 409, "TableAlreadyExists")
	_, err = srv.Client.CreateTable(ctx, "1bad", nil)
	wantCode(t, err, 400, "InvalidResourceName")
	var names []string
	pager := srv.Client.NewListTablesPager(&aztables.ListTablesOptions{Top: to.Ptr(int32(2))})
	pages := 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tp := range p.Tables {
			names = append(names, *tp.Name)
		}
	}
	if len(names) != 5 || pages != 3 {
		t.Fatalf("tables %v in %d pages", names, pages)
	}
	p, err := srv.Client.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq 'tbl3'")}).NextPage(ctx)
	if err != nil || len(p.Tables) != 1 || *p.Tables[0].Name != "tbl3" {
		t.Fatalf("filtered: %v %v", p.Tables, err)
	}
	if _, err := srv.Client.DeleteTable(ctx, "tbl3", nil); err != nil {
		t.Fatal(err)
	}
	_, err = srv.Client.DeleteTable(ctx, "tbl3", nil)
	wantCode(t, err, 404, "ResourceNotFound")
}

func TestSDKPagingAndFilters(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "paging")
	for i := 0; i < 2100; i += 100 {
		var acts []aztables.TransactionAction
		for j := i; j < i+100 && j < 2100; j++ {
			b, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("%05d", j), "N": j, "Even": j%2 == 0})
			acts = append(acts, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: b})
		}
		if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
			t.Fatalf("batch at %d: %v", i, err)
		}
	}
	count, pages := 0, 0
	pager := c.NewListEntitiesPager(nil)
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		count += len(p.Entities)
	}
	if count != 2100 || pages != 3 {
		t.Fatalf("%d entities in %d pages", count, pages)
	}
	f := "N ge 100 and N lt 200 and Even eq true"
	pager = c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f, Select: to.Ptr("N,Missing"), Top: to.Ptr(int32(7))})
	count = 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Entities {
			var m map[string]any
			json.Unmarshal(e, &m)
			if v, ok := m["Missing"]; !ok || v != nil {
				t.Fatalf("$select of a missing property: %s", e)
			}
			count++
		}
	}
	if count != 50 {
		t.Fatalf("filtered %d, want 50", count)
	}
	_, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("N eq eq")}).NextPage(ctx)
	wantCode(t, err, 400, "InvalidInput")
}

func TestSDKTransactions(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "batch")
	ent := func(rk string, v int) []byte {
		b, _ := json.Marshal(map[string]any{"PartitionKey": "p'k", "RowKey": rk, "V": v})
		return b
	}
	if _, err := c.AddEntity(ctx, ent("exists", 0), nil); err != nil {
		t.Fatal(err)
	}
	ok := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: ent("a", 1)},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: ent("b", 2)},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: ent("c", 3)},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: ent("exists", 4)},
	}
	if _, err := c.SubmitTransaction(ctx, ok, nil); err != nil {
		t.Fatalf("batch: %v", err)
	}
	del := []aztables.TransactionAction{{ActionType: aztables.TransactionTypeDelete, Entity: ent("a", 0)}}
	if _, err := c.SubmitTransaction(ctx, del, nil); err != nil {
		t.Fatalf("delete batch: %v", err)
	}
	bad := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: ent("new1", 1)},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent("b", 1)},
		{ActionType: aztables.TransactionTypeAdd, Entity: ent("exists", 1)},
	}
	_, err := c.SubmitTransaction(ctx, bad, nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusAccepted {
		t.Fatalf("failed batch: %v", err)
	}
	if _, err := c.GetEntity(ctx, "p'k", "new1", nil); err == nil {
		t.Fatal("failed batch applied its first action")
	}
	if _, err := c.GetEntity(ctx, "p'k", "a", nil); err == nil {
		t.Fatal("delete in batch not applied")
	}
}

func TestSDKWrongKey(t *testing.T) {
	srv := localtabletest.NewServer(t)
	cred, _ := aztables.NewSharedKeyCredential("devstoreaccount1", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	sc, _ := aztables.NewServiceClientWithSharedKey(srv.URL, cred, nil)
	_, err := sc.CreateTable(context.Background(), "nope", nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	if !strings.Contains(err.Error(), "AuthenticationFailed") {
		t.Fatal(err)
	}
}
