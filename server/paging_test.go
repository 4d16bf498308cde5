package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// pages lists a table through aztables' pager and returns each page's
// RowKeys ("p/r" when keys span partitions) and its continuation.
func pages(t *testing.T, c *aztables.Client, filter string) (out []string) {
	t.Helper()
	var opts *aztables.ListEntitiesOptions
	if filter != "" {
		opts = &aztables.ListEntitiesOptions{Filter: &filter}
	}
	p := c.NewListEntitiesPager(opts)
	for p.More() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, raw := range page.Entities {
			var e aztables.Entity
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, e.PartitionKey+"/"+e.RowKey)
		}
		cont := ""
		if page.NextPartitionKey != nil {
			cont += "pk"
		}
		if page.NextRowKey != nil {
			cont += "+rk"
		}
		out = append(out, "["+strings.Join(keys, " ")+"]"+cont)
	}
	return out
}

func seedPaging(t *testing.T, opts ...localtabletest.Option) (*localtabletest.Server, *aztables.Client) {
	srv := localtabletest.New(t, opts...)
	srv.Seed(t, "paged",
		`{"PartitionKey":"a","RowKey":"1"}`, `{"PartitionKey":"a","RowKey":"2"}`, `{"PartitionKey":"a","RowKey":"3"}`,
		`{"PartitionKey":"b","RowKey":"1"}`, `{"PartitionKey":"c","RowKey":"1"}`, `{"PartitionKey":"c","RowKey":"2","X":1}`)
	return srv, srv.Client.NewClient("paged")
}

// Each paging option shapes pages as the service may; the SDK's pager
// follows them to every entity, once.
func TestPagingOptions(t *testing.T) {
	for _, c := range []struct {
		name   string
		paging localtabletest.Paging
		filter string
		want   string
	}{
		{"none", localtabletest.Paging{}, "",
			"[a/1 a/2 a/3 b/1 c/1 c/2]"},
		{"MaxPageSize", localtabletest.Paging{MaxPageSize: 4}, "",
			"[a/1 a/2 a/3 b/1]pk+rk [c/1 c/2]"},
		{"EmptyFirstPage", localtabletest.Paging{EmptyFirstPage: true}, "",
			"[]pk [a/1 a/2 a/3 b/1 c/1 c/2]"},
		{"EmptyFirstPage filtered", localtabletest.Paging{EmptyFirstPage: true}, "RowKey ge '2'",
			"[]pk [a/2 a/3 c/2]"},
		{"PartitionBoundaries", localtabletest.Paging{PartitionBoundaries: true}, "",
			"[a/1 a/2 a/3]pk [b/1]pk [c/1 c/2]"},
		{"PartitionBoundaries and MaxPageSize", localtabletest.Paging{PartitionBoundaries: true, MaxPageSize: 2}, "",
			"[a/1 a/2]pk+rk [a/3]pk [b/1]pk [c/1 c/2]"},
		{"ScanLimit", localtabletest.Paging{ScanLimit: 2}, "X eq 1",
			"[]pk+rk []pk+rk [c/2]"},
		{"all", localtabletest.Paging{MaxPageSize: 1, EmptyFirstPage: true, PartitionBoundaries: true}, "",
			"[]pk [a/1]pk+rk [a/2]pk+rk [a/3]pk+rk [b/1]pk+rk [c/1]pk+rk [c/2]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, tc := seedPaging(t, localtabletest.WithPaging(c.paging))
			if got := strings.Join(pages(t, tc, c.filter), " "); got != c.want {
				t.Fatalf("pages %s, want %s", got, c.want)
			}
		})
	}
}

// A NextPartitionKey alone resumes at the start of that partition, as the
// service's continuations without NextRowKey do; the header is absent,
// not empty.
func TestPagingPartitionContinuation(t *testing.T) {
	srv, _ := seedPaging(t, localtabletest.WithPaging(localtabletest.Paging{PartitionBoundaries: true}))
	hc := &http.Client{Transport: srv.Transport}
	get := func(query string) (*http.Response, string) {
		req := sharedKeyRequest(t, "devstoreaccount1", srv.Key(), "GET", srv.URL+"/paged()"+query, "")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("")
	npk := resp.Header.Get("x-ms-continuation-NextPartitionKey")
	if _, has := resp.Header["X-Ms-Continuation-Nextrowkey"]; has || npk == "" || strings.Count(body, "RowKey") != 3 {
		t.Fatalf("first page: %v %s", resp.Header, body)
	}
	_, body = get("?NextPartitionKey=" + npk)
	if !strings.Contains(body, `"PartitionKey":"b"`) || strings.Count(body, "RowKey") != 1 {
		t.Fatalf("resumed page: %s", body)
	}
	// A lone NextPartitionKey that is not a token is refused, as before.
	resp, body = get("?NextPartitionKey=garbage")
	if resp.StatusCode != 400 {
		t.Fatalf("a bad token: %d %s", resp.StatusCode, body)
	}
}

// Listing tables honours MaxPageSize and EmptyFirstPage too.
func TestPagingTables(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		paging localtabletest.Paging
		want   string
	}{
		{localtabletest.Paging{MaxPageSize: 2}, "[tab1 tab2] [tab3]"},
		{localtabletest.Paging{EmptyFirstPage: true}, "[] [tab1 tab2 tab3]"},
	} {
		srv := localtabletest.New(t, localtabletest.WithPaging(c.paging))
		for _, n := range []string{"tab1", "tab2", "tab3"} {
			srv.Seed(t, n)
		}
		var got []string
		p := srv.Client.NewListTablesPager(nil)
		for p.More() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tb := range page.Tables {
				names = append(names, *tb.Name)
			}
			got = append(got, "["+strings.Join(names, " ")+"]")
		}
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("%+v: pages %s, want %s", c.paging, s, c.want)
		}
	}
}
