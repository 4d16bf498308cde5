package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
)

// A server over an account, reached by the Azure SDK with the emulator's
// well-known account and key; what the SDK writes, the Account reads.
func ExampleNew() {
	ctx := context.Background()
	acct, _ := localtable.Open(nil)
	defer acct.Close()
	hs := httptest.NewServer(server.New(acct, nil)) // or http.ListenAndServe
	defer hs.Close()

	cs := server.ConnectionString(hs.URL+"/"+server.DevAccountName, server.DevAccountName, server.DevAccountKey)
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		panic(err)
	}
	client := svc.NewClient("People")
	if _, err := client.CreateTable(ctx, nil); err != nil {
		panic(err)
	}
	if _, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"Smith","RowKey":"John","Age":42}`), nil); err != nil {
		panic(err)
	}

	e, err := acct.Table("People").Get(ctx, "Smith", "John", nil)
	fmt.Println(e.Properties["Age"].Kind(), e.Properties["Age"].Int32(), err)
	// Output: Edm.Int32 42 <nil>
}

// The status the service answers each error code with; an error code the
// server does not know is a 500.
func ExampleHTTPStatus() {
	for _, code := range []localtable.ErrorCode{
		localtable.CodeEntityAlreadyExists,
		localtable.CodeUpdateConditionNotSatisfied,
		localtable.CodeTableNotFound,
		localtable.ErrorCodeOf(localtable.ErrRequestBodyTooLarge),
		"AuthenticationFailed",
		"NoSuchCode",
	} {
		fmt.Println(code, server.HTTPStatus(code))
	}
	// Output:
	// EntityAlreadyExists 409
	// UpdateConditionNotSatisfied 412
	// TableNotFound 404
	// RequestBodyTooLarge 413
	// AuthenticationFailed 403
	// NoSuchCode 500
}
