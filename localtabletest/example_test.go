package localtabletest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// A test starts a server in one line and uses the aztables client it
// returns; the server and its account are closed when the test ends.
func ExampleNewServer() {
	t := &testing.T{} // in a real test, the *testing.T of the test
	srv := localtabletest.NewServer(t)
	ctx := context.Background()

	orders := srv.Client.NewClient("orders")
	if _, err := orders.CreateTable(ctx, nil); err != nil {
		fmt.Println(err)
		return
	}
	e, _ := json.Marshal(map[string]any{"PartitionKey": "customer1", "RowKey": "order1", "Total": 12.5})
	if _, err := orders.AddEntity(ctx, e, nil); err != nil {
		fmt.Println(err)
		return
	}

	// The underlying account is there for direct inspection.
	got, err := srv.Account.Table("orders").Get(ctx, "customer1", "order1", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.Properties["Total"].Double())
	// Output: 12.5
}

// WithTLS serves HTTPS, so that clients made with a token credential
// (which refuse plain HTTP) work: Server.TokenCredential hands out tokens
// the server accepts, and ClientOptions trust the certificate.
func ExampleWithTLS() {
	t := &testing.T{} // in a real test, the *testing.T of the test
	srv := localtabletest.NewServer(t, localtabletest.WithTLS())
	ctx := context.Background()

	client, err := aztables.NewServiceClient(srv.URL, srv.TokenCredential(), srv.ClientOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := client.CreateTable(ctx, "secure", nil); err != nil {
		fmt.Println(err)
		return
	}
	_, err = srv.Account.GetTable(ctx, "secure")
	fmt.Println(strings.HasPrefix(srv.URL, "https://"), err)
	// Output: true <nil>
}
