package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// TestWireMetadataLevels checks, for every response that carries entities
// or tables, exactly the annotations docs/protocol.md §3 prescribes at each of
// nometadata, minimalmetadata and fullmetadata.
func TestWireMetadataLevels(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	ins := `{"PartitionKey":"p","RowKey":"r","S":"s","I":7,"B":true,"Two":2.0,"F":1.5,
	"L@odata.type":"Edm.Int64","L":"-9223372036854775808",
	"N@odata.type":"Edm.Double","N":"-Infinity",
	"D@odata.type":"Edm.DateTime","D":"2013-08-02T17:37:43.1000000Z",
	"G@odata.type":"Edm.Guid","G":"4185404a-5818-48c3-b9be-f217df0dba6f",
	"X@odata.type":"Edm.Binary","X":"AAE="}`
	resp, got := do(t, "POST", base+"/tt1", map[string]string{"Accept": "application/json;odata=nometadata", "Prefer": "return-no-content"}, ins)
	if resp.StatusCode != 204 || resp.Header.Get("Preference-Applied") != "return-no-content" || got != "" {
		t.Fatalf("insert no-content: %d %q", resp.StatusCode, got)
	}
	etag := resp.Header.Get("ETag")
	const entPath = "tt1(PartitionKey='p',RowKey='r')"
	props := map[string]any{"S": "s", "I": 7.0, "B": true, "Two": 2.0, "F": 1.5,
		"L": "-9223372036854775808", "N": "-Infinity", "D": "2013-08-02T17:37:43.1Z",
		"G": "4185404a-5818-48c3-b9be-f217df0dba6f", "X": "AAE=", "PartitionKey": "p", "RowKey": "r"}
	typed := map[string]string{"L": "Edm.Int64", "N": "Edm.Double", "D": "Edm.DateTime", "G": "Edm.Guid", "X": "Edm.Binary"}

	// checkEntity checks one entity object at a level; meta is the
	// odata.metadata expected, "" when none.
	checkEntity := func(t *testing.T, level string, obj map[string]any, meta string, sel bool) {
		t.Helper()
		want := map[string]bool{}
		for k := range obj {
			want[k] = false
		}
		expect := func(k string, v any) {
			t.Helper()
			if g, ok := obj[k]; !ok {
				t.Errorf("%s: no %s in %v", level, k, obj)
			} else if v != nil && g != v {
				t.Errorf("%s: %s = %#v, want %#v", level, k, g, v)
			}
			want[k] = true
		}
		for k, v := range props {
			if sel && k != "S" && k != "L" && k != "PartitionKey" && k != "RowKey" {
				continue
			}
			expect(k, v)
			if ty, ok := typed[k]; ok && level != "nometadata" {
				expect(k+"@odata.type", ty)
			}
		}
		if !sel {
			expect("Timestamp", nil)
			ts, _ := obj["Timestamp"].(string)
			if len(ts) != len("2006-01-02T15:04:05.0000000Z") {
				t.Errorf("%s: Timestamp %q has not 7 fractional digits", level, ts)
			}
		}
		if meta != "" {
			expect("odata.metadata", meta)
		}
		if level != "nometadata" {
			expect("odata.etag", etag)
		}
		if level == "fullmetadata" {
			expect("odata.type", "devstoreaccount1.tt1")
			expect("odata.id", base+"/"+entPath)
			expect("odata.editLink", entPath)
			if !sel {
				expect("Timestamp@odata.type", "Edm.DateTime")
			}
		}
		for k, seen := range want {
			if !seen {
				t.Errorf("%s: unexpected member %s = %v", level, k, obj[k])
			}
		}
	}
	decode := func(t *testing.T, s string) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%v: %s", err, s)
		}
		return m
	}

	for _, level := range []string{"nometadata", "minimalmetadata", "fullmetadata"} {
		ct := "application/json;odata=" + level + ";streaming=true;charset=utf-8"
		// The level comes from Accept, or from $format overriding an Accept
		// that asks for another level.
		other := "application/json;odata=fullmetadata"
		if level == "fullmetadata" {
			other = "application/json;odata=nometadata"
		}
		for _, via := range []string{"accept", "format"} {
			hdr := map[string]string{"Accept": "application/json;odata=" + level}
			q := ""
			if via == "format" {
				hdr["Accept"] = other
				q = "$format=application/json;odata=" + level
			}
			name := level + "/" + via
			t.Run(name, func(t *testing.T) {
				elem := base + "/$metadata#tt1/@Element"
				if level == "nometadata" {
					elem = ""
				}
				// Get entity.
				resp, got := do(t, "GET", base+"/"+entPath+"?"+q, hdr, "")
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ct || resp.Header.Get("ETag") != etag {
					t.Fatalf("get: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), got)
				}
				checkEntity(t, level, decode(t, got), elem, false)
				// Exact text details: integral double, Int64 string, no
				// annotation on String/Int32/Boolean/plain Double.
				for _, s := range []string{`"Two":2.0`, `"I":7,`, `"L":"-9223372036854775808"`} {
					if !strings.Contains(got, s) {
						t.Errorf("get: no %s in %s", s, got)
					}
				}
				// Get with $select.
				sq := q
				if sq != "" {
					sq += "&"
				}
				resp, got = do(t, "GET", base+"/"+entPath+"?"+sq+"$select=S,L,PartitionKey,RowKey", hdr, "")
				if resp.StatusCode != 200 {
					t.Fatalf("get $select: %d %s", resp.StatusCode, got)
				}
				checkEntity(t, level, decode(t, got), elem, true)
				// Query entities.
				resp, got = do(t, "GET", base+"/tt1()?"+q, hdr, "")
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ct {
					t.Fatalf("query: %d %s", resp.StatusCode, got)
				}
				m := decode(t, got)
				wantKeys := 1
				if level != "nometadata" {
					wantKeys = 2
					if m["odata.metadata"] != base+"/$metadata#tt1" {
						t.Errorf("query odata.metadata %v", m["odata.metadata"])
					}
				}
				vals, _ := m["value"].([]any)
				if len(m) != wantKeys || len(vals) != 1 {
					t.Fatalf("query: %s", got)
				}
				checkEntity(t, level, vals[0].(map[string]any), "", false)
				// List tables.
				resp, got = do(t, "GET", base+"/Tables?"+q, hdr, "")
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ct {
					t.Fatalf("list tables: %d %s", resp.StatusCode, got)
				}
				m = decode(t, got)
				if len(m) != wantKeys || (level != "nometadata" && m["odata.metadata"] != base+"/$metadata#Tables") {
					t.Errorf("list tables: %s", got)
				}
				vals, _ = m["value"].([]any)
				if len(vals) != 1 {
					t.Fatalf("list tables: %s", got)
				}
				checkTable(t, level, base, vals[0].(map[string]any), "tt1", "")
			})
		}
	}

	// Insert with return-content (the default, and asked for), and table
	// creation, at every level.
	for i, level := range []string{"nometadata", "minimalmetadata", "fullmetadata"} {
		for j, prefer := range []string{"", "return-content"} {
			hdr := map[string]string{"Accept": "application/json;odata=" + level, "Content-Type": "application/json"}
			if prefer != "" {
				hdr["Prefer"] = prefer
			}
			rk := string(rune('a'+i)) + string(rune('0'+j))
			resp, got := do(t, "POST", base+"/tt1", hdr, `{"PartitionKey":"q","RowKey":"`+rk+`","L@odata.type":"Edm.Int64","L":"5","S":"x"}`)
			if resp.StatusCode != 201 || resp.Header.Get("Preference-Applied") != prefer || resp.Header.Get("ETag") == "" {
				t.Fatalf("%s insert %q: %d %v %s", level, prefer, resp.StatusCode, resp.Header, got)
			}
			m := decode(t, got)
			path := "tt1(PartitionKey='q',RowKey='" + rk + "')"
			if resp.Header.Get("Location") != base+"/"+path {
				t.Errorf("Location %s", resp.Header.Get("Location"))
			}
			want := []string{"PartitionKey", "RowKey", "Timestamp", "L", "S"}
			switch level {
			case "minimalmetadata":
				want = append(want, "odata.metadata", "odata.etag", "L@odata.type")
			case "fullmetadata":
				want = append(want, "odata.metadata", "odata.etag", "L@odata.type", "odata.type", "odata.id", "odata.editLink", "Timestamp@odata.type")
			}
			if len(m) != len(want) {
				t.Errorf("%s insert: members %v, want %v", level, m, want)
			}
			for _, k := range want {
				if _, ok := m[k]; !ok {
					t.Errorf("%s insert: no %s in %s", level, k, got)
				}
			}
			if level != "nometadata" && (m["odata.etag"] != resp.Header.Get("ETag") || m["odata.metadata"] != base+"/$metadata#tt1/@Element") {
				t.Errorf("%s insert: %s", level, got)
			}
			if level == "fullmetadata" && m["odata.id"] != base+"/"+path {
				t.Errorf("odata.id %v", m["odata.id"])
			}

			name := "Tbl" + rk
			resp, got = do(t, "POST", base+"/Tables", hdr, `{"TableName":"`+name+`"}`)
			if resp.StatusCode != 201 || resp.Header.Get("Location") != base+"/Tables('"+name+"')" || resp.Header.Get("Content-Type") != "application/json;odata="+level+";streaming=true;charset=utf-8" {
				t.Fatalf("%s create table: %d %v %s", level, resp.StatusCode, resp.Header, got)
			}
			meta := base + "/$metadata#Tables/@Element"
			if level == "nometadata" {
				meta = ""
			}
			checkTable(t, level, base, decode(t, got), name, meta)
		}
	}

	// Plain application/json means minimal.
	resp, got = do(t, "GET", base+"/"+entPath, map[string]string{"Accept": "application/json"}, "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json;odata=minimalmetadata") || !strings.Contains(got, `"odata.etag"`) || strings.Contains(got, `"odata.type"`) {
		t.Fatalf("application/json: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	// Create table with return-no-content.
	resp, got = do(t, "POST", base+"/Tables", map[string]string{"Accept": minimal, "Prefer": "return-no-content"}, `{"TableName":"NoContent"}`)
	loc := base + "/Tables('NoContent')"
	if resp.StatusCode != 204 || got != "" || resp.Header.Get("Preference-Applied") != "return-no-content" || resp.Header.Get("DataServiceId") != loc || resp.Header.Get("Location") != loc {
		t.Fatalf("create table no-content: %d %v %q", resp.StatusCode, resp.Header, got)
	}
}

// checkTable checks a table entry: TableName, odata.metadata when meta
// is set, and the three fullmetadata members.
func checkTable(t *testing.T, level, base string, m map[string]any, name, meta string) {
	t.Helper()
	want := map[string]any{"TableName": name}
	if meta != "" {
		want["odata.metadata"] = meta
	}
	if level == "fullmetadata" {
		want["odata.type"] = "devstoreaccount1.Tables"
		want["odata.id"] = base + "/Tables('" + name + "')"
		want["odata.editLink"] = "Tables('" + name + "')"
	}
	if len(m) != len(want) {
		t.Errorf("%s table: %v, want %v", level, m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s table: %s = %v, want %v", level, k, m[k], v)
		}
	}
}

// TestSDKMetadataFormats reads entities and tables through aztables at
// each metadata format it offers.
func TestSDKMetadataFormats(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	c := newTable(t, srv, "formats")
	ent := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "r"},
		Properties: map[string]any{"L": aztables.EDMInt64(1 << 40), "S": "s"}}
	b, _ := json.Marshal(ent)
	if _, err := c.AddEntity(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []aztables.MetadataFormat{aztables.MetadataFormatNone, aztables.MetadataFormatMinimal, aztables.MetadataFormatFull} {
		g, err := c.GetEntity(ctx, "p", "r", &aztables.GetEntityOptions{Format: to.Ptr(f)})
		if err != nil {
			t.Fatalf("%s: GetEntity: %v", f, err)
		}
		var e aztables.EDMEntity
		if err := json.Unmarshal(g.Value, &e); err != nil || e.RowKey != "r" || e.Properties["S"] != "s" {
			t.Fatalf("%s: GetEntity: %v %s", f, err, g.Value)
		}
		if f != aztables.MetadataFormatNone && e.Properties["L"] != aztables.EDMInt64(1<<40) {
			t.Errorf("%s: Int64 %#v", f, e.Properties["L"])
		}
		p, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: to.Ptr(f)}).NextPage(ctx)
		if err != nil || len(p.Entities) != 1 {
			t.Fatalf("%s: ListEntities: %v", f, err)
		}
		tp, err := srv.Client.NewListTablesPager(&aztables.ListTablesOptions{Format: to.Ptr(f)}).NextPage(ctx)
		if err != nil || len(tp.Tables) != 1 || *tp.Tables[0].Name != "formats" {
			t.Fatalf("%s: ListTables: %v", f, err)
		}
	}
}
