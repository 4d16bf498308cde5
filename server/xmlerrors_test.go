package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
	"github.com/localtable/localtable/server"
)

// The XML operations (table ACL, service properties and stats) answer
// every failure in the service's OData XML error format, with the codes
// the Table service uses there: InvalidXmlDocument for a body it cannot
// parse and for a value it rejects, ResourceNotFound for a missing table.
func TestWireXMLOperationErrors(t *testing.T) {
	hs, _ := rawServer(t)
	base := hs.URL + "/devstoreaccount1"
	v := map[string]string{"x-ms-version": "2019-02-02"}
	const badXML = "XML specified is not syntactically valid."
	props := func(inner string) string {
		return `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` + inner + `</StorageServiceProperties>`
	}
	retention := func(r string) string {
		return props(`<MinuteMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs>` + r + `</MinuteMetrics>`)
	}
	for _, c := range []struct {
		what, method, path, body string
		status                   int
		code, msg                string
	}{
		{"ACL of a missing table", "GET", "/nosuch?comp=acl", "", 404, "ResourceNotFound", "The specified resource does not exist."},
		{"set ACL of a missing table", "PUT", "/nosuch?comp=acl", "<SignedIdentifiers/>", 404, "ResourceNotFound", "The specified resource does not exist."},
		{"unparsable ACL", "PUT", "/tt1?comp=acl", "<SignedIdentifiers><broken", 400, "InvalidXmlDocument", badXML},
		{"six identifiers", "PUT", "/tt1?comp=acl", "<SignedIdentifiers>" + strings.Repeat("<SignedIdentifier><Id>x</Id></SignedIdentifier>", 6) + "</SignedIdentifiers>", 400, "InvalidXmlDocument", badXML},
		{"bad policy time", "PUT", "/tt1?comp=acl", "<SignedIdentifiers><SignedIdentifier><Id>x</Id><AccessPolicy><Start>yesterday</Start></AccessPolicy></SignedIdentifier></SignedIdentifiers>", 400, "InvalidXmlDocument", badXML},
		{"identifier without Id", "PUT", "/tt1?comp=acl", "<SignedIdentifiers><SignedIdentifier><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>", 400, "InvalidXmlDocument", badXML},
		{"ACL with a bad method", "POST", "/tt1?comp=acl", "", 405, "MethodNotAllowed", "The requested method POST is not allowed"},
		{"unparsable properties", "PUT", "/?restype=service&comp=properties", "<StorageServiceProperties><Logging>", 400, "InvalidXmlDocument", badXML},
		{"properties, wrong root", "PUT", "/?restype=service&comp=properties", "<Other/>", 400, "InvalidXmlDocument", badXML},
		{"retention of 366 days", "PUT", "/?restype=service&comp=properties", retention(`<RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy>`), 400, "InvalidXmlDocument", badXML},
		{"retention of 0 days", "PUT", "/?restype=service&comp=properties", retention(`<RetentionPolicy><Enabled>true</Enabled><Days>0</Days></RetentionPolicy>`), 400, "InvalidXmlDocument", badXML},
		{"retention of <&> days", "PUT", "/?restype=service&comp=properties", retention(`<RetentionPolicy><Enabled>true</Enabled><Days>&lt;&amp;&gt;</Days></RetentionPolicy>`), 400, "InvalidXmlDocument", badXML},
		{"retention without days", "PUT", "/?restype=service&comp=properties", retention(`<RetentionPolicy><Enabled>true</Enabled></RetentionPolicy>`), 400, "InvalidXmlDocument", badXML},
		{"non-boolean", "PUT", "/?restype=service&comp=properties", props(`<Logging><Version>1.0</Version><Delete>yes</Delete><Read>false</Read><Write>false</Write></Logging>`), 400, "InvalidXmlDocument", badXML},
		{"enabled metrics without IncludeAPIs", "PUT", "/?restype=service&comp=properties", props(`<HourMetrics><Version>1.0</Version><Enabled>true</Enabled></HourMetrics>`), 400, "InvalidXmlDocument", badXML},
		{"properties with a bad method", "DELETE", "/?restype=service&comp=properties", "", 405, "MethodNotAllowed", "The requested method DELETE"},
		{"stats at the primary", "GET", "/?restype=service&comp=stats", "", 400, "InvalidQueryParameterValue", "Value for one of the query parameters specified in the request URI is invalid."},
		{"account root without restype", "GET", "/", "", 400, "InvalidUri", ""},
	} {
		resp, got := do(t, c.method, base+c.path, v, c.body)
		wantODataXMLError(t, c.what, resp, got, c.status, c.code, c.msg)
		if resp.Header.Get("X-Content-Type-Options") != "" || resp.Header.Get("Cache-Control") != "" {
			t.Errorf("%s: the service's XML operations send neither X-Content-Type-Options nor Cache-Control: %v", c.what, resp.Header)
		}
	}
	// Valid settings pass, disabled retention needs no days.
	good := props(`<Logging><Version>1.0</Version><Delete>false</Delete><Read>true</Read><Write>1</Write><RetentionPolicy><Enabled>true</Enabled><Days>365</Days></RetentionPolicy></Logging>` +
		`<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>1</Days></RetentionPolicy></HourMetrics>` +
		`<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>`)
	if resp, got := do(t, "PUT", base+"/?restype=service&comp=properties", v, good); resp.StatusCode != 202 {
		t.Fatalf("valid properties: %d %s", resp.StatusCode, got)
	}
	// The JSON operations keep the JSON format.
	resp, got := do(t, "GET", base+"/nosuch()", map[string]string{"x-ms-version": "2019-02-02", "Accept": minimal}, "")
	if resp.StatusCode != 404 || !strings.HasPrefix(got, `{"odata.error":{"code":"TableNotFound"`) || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("JSON operation error: %d %v %s", resp.StatusCode, resp.Header, got)
	}
}

// Authentication failures at an XML operation are in its XML format too,
// and the SDK reads their codes.
func TestSDKXMLOperationErrors(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	_, err := srv.Client.NewClient("nosuch").GetAccessPolicy(ctx, nil)
	wantCode(t, err, 404, "ResourceNotFound")
	_, err = srv.Client.NewClient("nosuch").SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{})
	wantCode(t, err, 404, "ResourceNotFound")
	_, err = srv.Client.SetProperties(ctx, aztables.ServiceProperties{MinuteMetrics: &aztables.Metrics{
		Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true), RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(366))},
	}}, nil)
	wantCode(t, err, 400, "InvalidXmlDocument")

	req := sharedKeyRequest(t, server.DevAccountName, []byte("wrong key"), "GET", srv.URL+"/?restype=service&comp=properties", "")
	resp, got := send(t, req)
	wantODataXMLError(t, "bad key, properties", resp, got, http.StatusForbidden, "AuthenticationFailed", "Server failed to authenticate the request.")
}
