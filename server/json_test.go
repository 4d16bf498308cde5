package server_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestWireEdmRoundTrip sends every Edm type in raw JSON and reads back
// exactly the JSON text docs/protocol.md §3 prescribes.
func TestWireEdmRoundTrip(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	cases := []struct {
		name, in, out string
	}{
		{"string", `"P":"héllo \"x\""`, `"P":"héllo \"x\""`},
		{"string typed", `"P@odata.type":"Edm.String","P":"s"`, `"P":"s"`},
		{"empty string", `"P":""`, `"P":""`},
		{"int32", `"P":-2147483648`, `"P":-2147483648`},
		{"int32 typed", `"P@odata.type":"Edm.Int32","P":2147483647`, `"P":2147483647`},
		{"bool", `"P":false`, `"P":false`},
		{"bool typed", `"P@odata.type":"Edm.Boolean","P":true`, `"P":true`},
		{"int too big is double", `"P":2147483648`, `"P":2147483648.0`},
		{"double", `"P":1234.1234`, `"P":1234.1234`},
		{"double integral", `"P@odata.type":"Edm.Double","P":2`, `"P":2.0`},
		{"double exponent", `"P":1e300`, `"P":1e+300`},
		{"double negative zero", `"P":-0.0`, `"P":-0.0`},
		{"double as string", `"P@odata.type":"Edm.Double","P":"1.5"`, `"P":1.5`},
		{"NaN", `"P@odata.type":"Edm.Double","P":"NaN"`, `"P@odata.type":"Edm.Double","P":"NaN"`},
		{"Infinity", `"P@odata.type":"Edm.Double","P":"Infinity"`, `"P@odata.type":"Edm.Double","P":"Infinity"`},
		{"-Infinity", `"P@odata.type":"Edm.Double","P":"-Infinity"`, `"P@odata.type":"Edm.Double","P":"-Infinity"`},
		{"int64 max", `"P@odata.type":"Edm.Int64","P":"9223372036854775807"`, `"P@odata.type":"Edm.Int64","P":"9223372036854775807"`},
		{"int64 min", `"P@odata.type":"Edm.Int64","P":"-9223372036854775808"`, `"P@odata.type":"Edm.Int64","P":"-9223372036854775808"`},
		{"int64 small", `"P@odata.type":"Edm.Int64","P":"0"`, `"P@odata.type":"Edm.Int64","P":"0"`},
		{"binary", `"P@odata.type":"Edm.Binary","P":"U29tZUJpbmFyeQ=="`, `"P@odata.type":"Edm.Binary","P":"U29tZUJpbmFyeQ=="`},
		{"binary empty", `"P@odata.type":"Edm.Binary","P":""`, `"P@odata.type":"Edm.Binary","P":""`},
		{"guid upper", `"P@odata.type":"Edm.Guid","P":"4185404A-5818-48C3-B9BE-F217DF0DBA6F"`, `"P@odata.type":"Edm.Guid","P":"4185404a-5818-48c3-b9be-f217df0dba6f"`},
		{"datetime 0 digits", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43Z"`, `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43Z"`},
		{"datetime 1 digit", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43.1Z"`, `"P":"2013-08-02T17:37:43.1Z"`},
		{"datetime 2 digits", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43.12Z"`, `"P":"2013-08-02T17:37:43.12Z"`},
		{"datetime 3 digits", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43.123Z"`, `"P":"2013-08-02T17:37:43.123Z"`},
		{"datetime 4 digits", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43.1234Z"`, `"P":"2013-08-02T17:37:43.1234Z"`},
		{"datetime 5 digits", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43.12345Z"`, `"P":"2013-08-02T17:37:43.12345Z"`},
		{"datetime 6 digits", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43.123456Z"`, `"P":"2013-08-02T17:37:43.123456Z"`},
		{"datetime 7 digits", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43.0090043Z"`, `"P":"2013-08-02T17:37:43.0090043Z"`},
		{"datetime trailing zeros", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43.1000000Z"`, `"P":"2013-08-02T17:37:43.1Z"`},
		{"datetime 9 digits truncated", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43.123456789Z"`, `"P":"2013-08-02T17:37:43.1234567Z"`},
		{"datetime offset", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T17:37:43.5+02:00"`, `"P":"2013-08-02T15:37:43.5Z"`},
		{"datetime negative offset", `"P@odata.type":"Edm.DateTime","P":"2013-08-02T23:37:43-05:30"`, `"P":"2013-08-03T05:07:43Z"`},
		{"datetime min", `"P@odata.type":"Edm.DateTime","P":"1601-01-01T00:00:00Z"`, `"P":"1601-01-01T00:00:00Z"`},
		{"datetime max", `"P@odata.type":"Edm.DateTime","P":"9999-12-31T23:59:59.9999999Z"`, `"P":"9999-12-31T23:59:59.9999999Z"`},
		{"null dropped", `"P":null,"Q":1`, `"Q":1`},
	}
	for i, c := range cases {
		rk := url.PathEscape(c.name)
		body := `{"PartitionKey":"edm","RowKey":"` + c.name + `",` + c.in + `}`
		resp, got := do(t, "POST", base+"/tt1", map[string]string{"Accept": minimal, "Prefer": "return-no-content"}, body)
		if resp.StatusCode != 204 {
			t.Errorf("%d %s: insert %d %s", i, c.name, resp.StatusCode, got)
			continue
		}
		resp, got = do(t, "GET", base+"/tt1(PartitionKey='edm',RowKey='"+rk+"')", map[string]string{"Accept": minimal}, "")
		if resp.StatusCode != 200 || !strings.Contains(got, c.out) {
			t.Errorf("%s: got %d %s, want %s", c.name, resp.StatusCode, got, c.out)
		}
		if c.name == "null dropped" && strings.Contains(got, `"P"`) {
			t.Errorf("null property kept: %s", got)
		}
		// Never annotate String, Int32, Boolean or a finite Double.
		for _, k := range []string{"Edm.String", "Edm.Int32", "Edm.Boolean"} {
			if strings.Contains(got, k) {
				t.Errorf("%s: %s annotated: %s", c.name, k, got)
			}
		}
		if strings.Contains(got, "Edm.Double") && !strings.Contains(c.out, "Edm.Double") {
			t.Errorf("%s: finite double annotated: %s", c.name, got)
		}
	}
}

// TestWireEntityJSONErrors sends bodies that the service rejects, each
// with its status and code; none is a 5xx.
func TestWireEntityJSONErrors(t *testing.T) {
	hs, _ := rawServer(t)
	url := hs.URL + "/devstoreaccount1/tt1"
	keys := `"PartitionKey":"p","RowKey":"r",`
	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{` + keys + `"X@odata.type":"Edm.Int64","X":"abc"}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.Int64","X":"9223372036854775808"}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.Int32","X":"x"}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.Int32","X":2147483648}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.Double","X":"inf"}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.Double","X":true}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.Double","X":"13e7705"}`, 400, "InvalidInput"}, // overflows: the service's InvalidInput (Azurite#2387)
		{`{` + keys + `"X":1e400}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.Boolean","X":"yes"}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.DateTime","X":"yesterday"}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.DateTime","X":"1600-12-31T23:59:59Z"}`, 400, "OutOfRangeInput"},
		{`{` + keys + `"X@odata.type":"Edm.DateTime","X":12}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.Binary","X":"***"}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.Guid","X":"4185404a"}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.String","X":5}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":"Edm.Decimal","X":"1"}`, 400, "InvalidInput"},
		{`{` + keys + `"X@odata.type":5,"X":"1"}`, 400, "InvalidInput"},
		{`{` + keys + `"X":{"a":1}}`, 400, "InvalidInput"},
		{`{` + keys + `"X":1,"X":2}`, 400, "DuplicatePropertiesSpecified"},
		{`{"PartitionKey":"p","PartitionKey":"q","RowKey":"r"}`, 400, "DuplicatePropertiesSpecified"},
		{`{"RowKey":"r"}`, 400, "PropertiesNeedValue"},
		{`{"PartitionKey":"p"}`, 400, "PropertiesNeedValue"},
		{`{"PartitionKey":null,"RowKey":"r"}`, 400, "PropertiesNeedValue"},
		{`{"PartitionKey":5,"RowKey":"r"}`, 400, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":true}`, 400, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":["r"]}`, 400, "InvalidInput"},
		{`{"PartitionKey":"a/b","RowKey":"r"}`, 400, "InvalidInput"},
		{`{"PartitionKey":"a#b","RowKey":"r"}`, 400, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"a?b"}`, 400, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"a\\b"}`, 400, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"a\u0001b"}`, 400, "InvalidInput"},
		{`{` + keys + `"1X":1}`, 400, "PropertyNameInvalid"},
		// Invalid text is refused, not stored as U+FFFD (issue 22).
		{`{` + keys + `"X":"a` + "\xff" + `"}`, 400, "InvalidInput"},
		{`{` + keys + `"X":"\ud800"}`, 400, "InvalidInput"},
		{`{"PartitionKey":"\udc00","RowKey":"r"}`, 400, "InvalidInput"},
		{`{` + keys + `"X` + "\xff" + `":1}`, 400, "PropertyNameInvalid"},
		{`{` + keys + `"` + strings.Repeat("N", 256) + `":1}`, 400, "PropertyNameTooLong"},
		{`{` + keys + `"X@odata.type":"Edm.Binary","X":"` + strings.Repeat("A", 87384) + `"}`, 400, "PropertyValueTooLarge"},
		{`{` + keys + `"X":"` + strings.Repeat("x", 32769) + `"}`, 400, "PropertyValueTooLarge"},
		{`{` + keys + bigEntity() + `}`, 400, "EntityTooLarge"},
		{``, 400, "InvalidInput"},
		{`null`, 400, "InvalidInput"},
		{`{}{}`, 400, "InvalidInput"},
	} {
		resp, got := do(t, "POST", url, map[string]string{"Accept": minimal}, c.body)
		if resp.StatusCode != c.status || resp.Header.Get("x-ms-error-code") != c.code {
			body := c.body
			if len(body) > 100 {
				body = body[:100]
			}
			t.Errorf("%s: %d %s, want %d %s: %.300s", body, resp.StatusCode, resp.Header.Get("x-ms-error-code"), c.status, c.code, got)
		}
	}
}

// TestWireKeysInURL addresses entities whose keys need quoting and
// escaping in the URL.
func TestWireKeysInURL(t *testing.T) {
	hs, acct := rawServer(t)
	base := hs.URL + "/devstoreaccount1/tt1"
	ctx := context.Background()
	for _, k := range [][2]string{
		{"p", ""},
		{"", ""},
		{"it's", "a''b"},
		{"with space", " lead and trail "},
		{"ünïcødé", "日本語🙂"},
		{"pct%25", "plus+amp&eq=semi;"},
		{"parens()", "comma,eq="},
	} {
		pk, rk := k[0], k[1]
		path := base + "(PartitionKey=" + url.PathEscape("'"+strings.ReplaceAll(pk, "'", "''")+"'") +
			",RowKey=" + url.PathEscape("'"+strings.ReplaceAll(rk, "'", "''")+"'") + ")"
		resp, got := do(t, "PUT", path, map[string]string{"Accept": minimal}, `{"V":1}`)
		if resp.StatusCode != 204 {
			t.Errorf("upsert (%q,%q): %d %s", pk, rk, resp.StatusCode, got)
			continue
		}
		if _, err := acct.Table("tt1").Get(ctx, pk, rk, nil); err != nil {
			t.Errorf("(%q,%q) stored under other keys: %v", pk, rk, err)
		}
		resp, got = do(t, "GET", path, map[string]string{"Accept": minimal}, "")
		var m map[string]any
		json.Unmarshal([]byte(got), &m)
		if resp.StatusCode != 200 || m["PartitionKey"] != pk || m["RowKey"] != rk {
			t.Errorf("get (%q,%q): %d %s", pk, rk, resp.StatusCode, got)
		}
		// A space after the comma is allowed.
		spaced := strings.Replace(path, ",RowKey=", ", RowKey=", 1)
		if resp, got = do(t, "GET", spaced, map[string]string{"Accept": minimal}, ""); resp.StatusCode != 200 {
			t.Errorf("get with space after comma (%q,%q): %d %s", pk, rk, resp.StatusCode, got)
		}
		if resp, got = do(t, "DELETE", path, map[string]string{"If-Match": "*"}, ""); resp.StatusCode != 204 {
			t.Errorf("delete (%q,%q): %d %s", pk, rk, resp.StatusCode, got)
		}
	}
	// %2F, %23, %3F, %5C in a key are the key rules' InvalidInput, not a
	// path split or a 404.
	for _, bad := range []string{"a%2Fb", "a%23b", "a%3Fb", "a%5Cb", "a%01b"} {
		for _, m := range []string{"GET", "PUT", "PATCH", "DELETE"} {
			path := base + "(PartitionKey='" + bad + "',RowKey='r')"
			resp, got := do(t, m, path, map[string]string{"Accept": minimal, "If-Match": "*"}, `{}`)
			if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != "InvalidInput" {
				t.Errorf("%s %s: %d %s", m, bad, resp.StatusCode, got)
			}
		}
	}
}

// bigEntity returns JSON members of an entity over 1 MiB (strings count
// two bytes a character) whose body is well under the 4 MiB body limit.
func bigEntity() string {
	var b strings.Builder
	for i := 0; i < 20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"P` + strconv.Itoa(i) + `":"` + strings.Repeat("y", 30000) + `"`)
	}
	return b.String()
}

// TestWireEntityValueForms pins each annotated form of a value, as the
// service's OData reader converts it: a JSON string becomes any type by
// the .NET parser of that type (so the Storage Explorer and the Python
// SDK can send "false" as an Edm.Boolean and "23" as an Edm.Int32; the
// Python SDK's live test_entity_with_edmtypes sends these and "0" as an
// Edm.Double, and expects "not a bool" to fail), a JSON number becomes only
// an Int32 (if integral and in range) or a Double, and an Int64 must be a
// string (the reader's CannotConvertInt64OrDecimal). A value that does not
// convert is 400 InvalidInput; a DateTime outside the service's range is
// 400 OutOfRangeInput. null is accepted whatever its annotation, and the
// property is not stored. Each accepted form is read back in the
// service's own form.
func TestWireEntityValueForms(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	const ok = ""
	cases := []struct {
		name, in string
		code     string // "" for accepted
		out      string // the property as read back, when accepted
	}{
		// Edm.Boolean.
		{"bool json", `"P@odata.type":"Edm.Boolean","P":false`, ok, `"P":false`},
		{"bool string false", `"P@odata.type":"Edm.Boolean","P":"false"`, ok, `"P":false`},
		{"bool string true", `"P@odata.type":"Edm.Boolean","P":"true"`, ok, `"P":true`},
		{"bool string True", `"P@odata.type":"Edm.Boolean","P":"True"`, ok, `"P":true`},
		{"bool string FALSE spaced", `"P@odata.type":"Edm.Boolean","P":" FALSE "`, ok, `"P":false`},
		{"bool string yes", `"P@odata.type":"Edm.Boolean","P":"yes"`, "InvalidInput", ""},
		{"bool string 1", `"P@odata.type":"Edm.Boolean","P":"1"`, "InvalidInput", ""},
		{"bool string empty", `"P@odata.type":"Edm.Boolean","P":""`, "InvalidInput", ""},
		{"bool string not a bool", `"P@odata.type":"Edm.Boolean","P":"not a bool"`, "InvalidInput", ""},
		{"bool number", `"P@odata.type":"Edm.Boolean","P":1`, "InvalidInput", ""},
		// Edm.Int32.
		{"int32 json", `"P@odata.type":"Edm.Int32","P":5`, ok, `"P":5`},
		{"int32 string", `"P@odata.type":"Edm.Int32","P":"5"`, ok, `"P":5`},
		{"int32 string signed spaced", `"P@odata.type":"Edm.Int32","P":" -23 "`, ok, `"P":-23`},
		{"int32 string plus", `"P@odata.type":"Edm.Int32","P":"+7"`, ok, `"P":7`},
		{"int32 string max", `"P@odata.type":"Edm.Int32","P":"2147483647"`, ok, `"P":2147483647`},
		{"int32 string over", `"P@odata.type":"Edm.Int32","P":"2147483648"`, "InvalidInput", ""},
		{"int32 json over", `"P@odata.type":"Edm.Int32","P":2147483648`, "InvalidInput", ""},
		{"int32 json under", `"P@odata.type":"Edm.Int32","P":-2147483649`, "InvalidInput", ""},
		{"int32 json fraction", `"P@odata.type":"Edm.Int32","P":5.0`, "InvalidInput", ""},
		{"int32 string fraction", `"P@odata.type":"Edm.Int32","P":"5.5"`, "InvalidInput", ""},
		{"int32 string hex", `"P@odata.type":"Edm.Int32","P":"0x10"`, "InvalidInput", ""},
		{"int32 bool", `"P@odata.type":"Edm.Int32","P":true`, "InvalidInput", ""},
		// Edm.Int64.
		{"int64 string", `"P@odata.type":"Edm.Int64","P":"-9223372036854775808"`, ok, `"P@odata.type":"Edm.Int64","P":"-9223372036854775808"`},
		{"int64 string spaced", `"P@odata.type":"Edm.Int64","P":" 42 "`, ok, `"P@odata.type":"Edm.Int64","P":"42"`},
		{"int64 json small", `"P@odata.type":"Edm.Int64","P":42`, "InvalidInput", ""},
		{"int64 json big", `"P@odata.type":"Edm.Int64","P":123456789012`, "InvalidInput", ""},
		{"int64 string over", `"P@odata.type":"Edm.Int64","P":"9223372036854775808"`, "InvalidInput", ""},
		{"int64 string decimal", `"P@odata.type":"Edm.Int64","P":"1.0"`, "InvalidInput", ""},
		{"int64 string exponent", `"P@odata.type":"Edm.Int64","P":"1e3"`, "InvalidInput", ""},
		{"int64 string words", `"P@odata.type":"Edm.Int64","P":"twelve"`, "InvalidInput", ""},
		// Edm.Double.
		{"double json int", `"P@odata.type":"Edm.Double","P":0`, ok, `"P":0.0`},
		{"double string", `"P@odata.type":"Edm.Double","P":"1.5"`, ok, `"P":1.5`},
		{"double string zero", `"P@odata.type":"Edm.Double","P":"0"`, ok, `"P":0.0`},
		{"double string exponent", `"P@odata.type":"Edm.Double","P":"-2.5E+3"`, ok, `"P":-2500.0`},
		{"double string thousands", `"P@odata.type":"Edm.Double","P":"1,000.25"`, ok, `"P":1000.25`},
		{"double string spaced", `"P@odata.type":"Edm.Double","P":" .5 "`, ok, `"P":0.5`},
		{"double NaN", `"P@odata.type":"Edm.Double","P":"NaN"`, ok, `"P@odata.type":"Edm.Double","P":"NaN"`},
		{"double Infinity", `"P@odata.type":"Edm.Double","P":"Infinity"`, ok, `"P@odata.type":"Edm.Double","P":"Infinity"`},
		{"double +Infinity", `"P@odata.type":"Edm.Double","P":"+Infinity"`, ok, `"P@odata.type":"Edm.Double","P":"Infinity"`},
		{"double -Infinity", `"P@odata.type":"Edm.Double","P":"-Infinity"`, ok, `"P@odata.type":"Edm.Double","P":"-Infinity"`},
		{"double INF", `"P@odata.type":"Edm.Double","P":"INF"`, "InvalidInput", ""},
		{"double -INF", `"P@odata.type":"Edm.Double","P":"-INF"`, "InvalidInput", ""},
		{"double string over", `"P@odata.type":"Edm.Double","P":"1e309"`, "InvalidInput", ""},
		{"double json over", `"P@odata.type":"Edm.Double","P":1e309`, "InvalidInput", ""},
		{"double unannotated over", `"P":-1e309`, "InvalidInput", ""},
		{"double string comma first", `"P@odata.type":"Edm.Double","P":",5"`, "InvalidInput", ""},
		{"double string hex", `"P@odata.type":"Edm.Double","P":"0x1p3"`, "InvalidInput", ""},
		{"double string empty", `"P@odata.type":"Edm.Double","P":""`, "InvalidInput", ""},
		{"double bool", `"P@odata.type":"Edm.Double","P":false`, "InvalidInput", ""},
		// Edm.DateTime.
		{"datetime", `"P@odata.type":"Edm.DateTime","P":"2008-07-10T00:00:00Z"`, ok, `"P@odata.type":"Edm.DateTime","P":"2008-07-10T00:00:00Z"`},
		{"datetime no zone", `"P@odata.type":"Edm.DateTime","P":"2008-07-10T00:00:00"`, ok, `"P":"2008-07-10T00:00:00Z"`},
		{"datetime feb 30", `"P@odata.type":"Edm.DateTime","P":"2008-02-30T00:00:00Z"`, "InvalidInput", ""},
		{"datetime words", `"P@odata.type":"Edm.DateTime","P":"not a date"`, "InvalidInput", ""},
		{"datetime year 0001", `"P@odata.type":"Edm.DateTime","P":"0001-01-01T00:00:00Z"`, "OutOfRangeInput", ""},
		{"datetime number", `"P@odata.type":"Edm.DateTime","P":1215648000`, "InvalidInput", ""},
		// Edm.Guid.
		{"guid", `"P@odata.type":"Edm.Guid","P":"c9da6455-213d-42c9-9a79-3e9149a57833"`, ok, `"P":"c9da6455-213d-42c9-9a79-3e9149a57833"`},
		{"guid braces", `"P@odata.type":"Edm.Guid","P":"{C9DA6455-213D-42C9-9A79-3E9149A57833}"`, ok, `"P":"c9da6455-213d-42c9-9a79-3e9149a57833"`},
		{"guid parentheses", `"P@odata.type":"Edm.Guid","P":"(c9da6455-213d-42c9-9a79-3e9149a57833)"`, ok, `"P":"c9da6455-213d-42c9-9a79-3e9149a57833"`},
		{"guid undivided", `"P@odata.type":"Edm.Guid","P":"c9da6455213d42c99a793e9149a57833"`, ok, `"P":"c9da6455-213d-42c9-9a79-3e9149a57833"`},
		{"guid short", `"P@odata.type":"Edm.Guid","P":"c9da6455-213d-42c9-9a79-3e9149a5783"`, "InvalidInput", ""},
		{"guid not hex", `"P@odata.type":"Edm.Guid","P":"g9da6455-213d-42c9-9a79-3e9149a57833"`, "InvalidInput", ""},
		{"guid misplaced dash", `"P@odata.type":"Edm.Guid","P":"c9da6455213d-42c9-9a79-3e9149a57833-"`, "InvalidInput", ""},
		{"guid number", `"P@odata.type":"Edm.Guid","P":5`, "InvalidInput", ""},
		// Edm.Binary.
		{"binary", `"P@odata.type":"Edm.Binary","P":"AAEC"`, ok, `"P@odata.type":"Edm.Binary","P":"AAEC"`},
		{"binary spaced", `"P@odata.type":"Edm.Binary","P":"AA EC\r\n"`, ok, `"P@odata.type":"Edm.Binary","P":"AAEC"`},
		{"binary no padding", `"P@odata.type":"Edm.Binary","P":"AAE"`, "InvalidInput", ""},
		{"binary bad char", `"P@odata.type":"Edm.Binary","P":"AA*C"`, "InvalidInput", ""},
		{"binary url alphabet", `"P@odata.type":"Edm.Binary","P":"_-_-"`, "InvalidInput", ""},
		{"binary number", `"P@odata.type":"Edm.Binary","P":12`, "InvalidInput", ""},
		// Edm.String.
		{"string from number", `"P@odata.type":"Edm.String","P":42`, "InvalidInput", ""},
		{"string from bool", `"P@odata.type":"Edm.String","P":true`, "InvalidInput", ""},
		// null with a type: accepted, not stored.
		{"null int32", `"P@odata.type":"Edm.Int32","P":null`, ok, ""},
		{"null int64", `"P@odata.type":"Edm.Int64","P":null`, ok, ""},
		{"null datetime", `"P@odata.type":"Edm.DateTime","P":null`, ok, ""},
		{"null string", `"P@odata.type":"Edm.String","P":null`, ok, ""},
	}
	for _, c := range cases {
		body := `{"PartitionKey":"forms","RowKey":"` + c.name + `",` + c.in + `}`
		resp, got := do(t, "POST", base+"/tt1", map[string]string{"Accept": minimal, "Prefer": "return-no-content"}, body)
		if c.code != ok {
			if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != c.code {
				t.Errorf("%s: %d %q, want 400 %s: %.200s", c.name, resp.StatusCode, resp.Header.Get("x-ms-error-code"), c.code, got)
			}
			continue
		}
		if resp.StatusCode != 204 {
			t.Errorf("%s: insert %d %.200s", c.name, resp.StatusCode, got)
			continue
		}
		// Read back, and write back what was read: the service's own form
		// round-trips unchanged.
		ent := base + "/tt1(PartitionKey='forms',RowKey='" + url.PathEscape(c.name) + "')"
		resp, got = do(t, "GET", ent, map[string]string{"Accept": minimal}, "")
		switch {
		case resp.StatusCode != 200:
			t.Errorf("%s: get %d %s", c.name, resp.StatusCode, got)
		case c.out == "" && strings.Contains(got, `"P"`):
			t.Errorf("%s: null stored: %s", c.name, got)
		case c.out != "" && !strings.Contains(got, c.out):
			t.Errorf("%s: read back %s, want %s", c.name, got, c.out)
		}
		resp, _ = do(t, "PUT", ent, map[string]string{"Accept": minimal}, got)
		if resp.StatusCode != 204 {
			t.Errorf("%s: writing back %s: %d", c.name, got, resp.StatusCode)
			continue
		}
		if _, again := do(t, "GET", ent, map[string]string{"Accept": minimal}, ""); c.out != "" && !strings.Contains(again, c.out) {
			t.Errorf("%s: after writing back, %s, want %s", c.name, again, c.out)
		}
	}
}
