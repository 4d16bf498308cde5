package localtabletest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	lt "github.com/localtable/localtable/localtabletest"
)

// Each of aztables' URL helpers works against both kinds of server.
func TestSDKURLHelpers(t *testing.T) {
	for _, kind := range []struct {
		name  string
		start func(t *testing.T) *lt.Server
	}{
		{"New", func(t *testing.T) *lt.Server { return lt.New(t) }},
		{"NewServer", func(t *testing.T) *lt.Server { return lt.NewServer(t) }},
		{"NewServerTLS", func(t *testing.T) *lt.Server { return lt.NewServer(t, lt.WithTLS()) }},
	} {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			srv := kind.start(t)
			if srv.ServiceURL != srv.URL+"/" || srv.TableURL("orders") != srv.URL+"/orders" {
				t.Fatalf("URL %q, ServiceURL %q, TableURL %q", srv.URL, srv.ServiceURL, srv.TableURL("orders"))
			}
			orders := srv.Client.NewClient("orders") // ServiceClient.NewClient
			if _, err := orders.CreateTable(ctx, nil); err != nil {
				t.Fatal(err)
			}
			addEntity(t, orders, "p", "r")
			now := srv.Clock.Now()

			t.Run("Client.GetTableSASURL", func(t *testing.T) {
				sasURL, err := orders.GetTableSASURL(aztables.SASPermissions{Read: true, Add: true}, now.Add(-time.Minute), now.Add(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(sasURL, srv.URL+"/orders?") {
					t.Fatalf("SAS URL %s is not under %s/orders", sasURL, srv.URL)
				}
				sc, err := aztables.NewClientWithNoCredential(sasURL, srv.ClientOptions())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := sc.GetEntity(ctx, "p", "r", nil); err != nil {
					t.Fatalf("read through the table SAS: %v", err)
				}
				addEntity(t, sc, "p", "sas")
			})
			t.Run("ConnectionString.GetTableSASURL", func(t *testing.T) {
				cs, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString, srv.ClientOptions())
				if err != nil {
					t.Fatal(err)
				}
				sasURL, err := cs.NewClient("orders").GetTableSASURL(aztables.SASPermissions{Read: true}, now.Add(-time.Minute), now.Add(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				sc, _ := aztables.NewClientWithNoCredential(sasURL, srv.ClientOptions())
				if _, err := sc.GetEntity(ctx, "p", "r", nil); err != nil {
					t.Fatalf("%s: %v", sasURL, err)
				}
			})
			t.Run("ServiceClient.GetAccountSASURL", func(t *testing.T) {
				sasURL, err := srv.Client.GetAccountSASURL(aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
					aztables.AccountSASPermissions{Read: true, List: true, Create: true, Add: true}, now.Add(-time.Minute), now.Add(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(sasURL, srv.URL+"/?") {
					t.Fatalf("account SAS URL %s", sasURL)
				}
				sc, err := aztables.NewServiceClientWithNoCredential(sasURL, srv.ClientOptions())
				if err != nil {
					t.Fatal(err)
				}
				_, err = sc.CreateTable(ctx, "viasas", nil)
				if kind.name == "NewServer" {
					// GetAccountSASURL signs spr=https: plain HTTP is refused,
					// as the service refuses it.
					wantCode(t, err, 403, "AuthorizationProtocolMismatch")
					return
				}
				if err != nil {
					t.Fatalf("create through the account SAS: %v", err)
				}
				if _, err := sc.NewClient("orders").GetEntity(ctx, "p", "r", nil); err != nil {
					t.Fatalf("read through the account SAS: %v", err)
				}
			})
			t.Run("NewClient", func(t *testing.T) {
				for _, u := range []string{srv.TableURL("orders"), srv.URL + "/orders"} {
					c, err := aztables.NewClientWithSharedKey(u, srv.Credential, srv.ClientOptions())
					if err != nil {
						t.Fatal(err)
					}
					if _, err := c.GetEntity(ctx, "p", "r", nil); err != nil {
						t.Fatalf("NewClientWithSharedKey(%s): %v", u, err)
					}
					tc, err := aztables.NewClient(u, srv.TokenCredential(), srv.ClientOptions())
					if err != nil {
						t.Fatal(err)
					}
					_, err = tc.GetEntity(ctx, "p", "r", nil)
					if kind.name == "NewServer" {
						if err == nil || !strings.Contains(err.Error(), "TLS") {
							t.Fatalf("a token over plain HTTP: %v", err) // azcore refuses
						}
						continue
					}
					if err != nil {
						t.Fatalf("NewClient(%s): %v", u, err)
					}
				}
				for _, u := range []string{srv.ServiceURL, srv.URL} {
					sc, err := aztables.NewServiceClientWithSharedKey(u, srv.Credential, srv.ClientOptions())
					if err != nil {
						t.Fatal(err)
					}
					if _, err := sc.NewClient("orders").GetEntity(ctx, "p", "r", nil); err != nil {
						t.Fatalf("NewServiceClientWithSharedKey(%s).NewClient: %v", u, err)
					}
				}
			})
		})
	}
}
