package main

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/localtable/localtable/localtabletest"
)

// TestIntraPartitionIndexWithSDK runs the pattern through the official Go
// SDK against the test server.
func TestIntraPartitionIndexWithSDK(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	if _, err := srv.Client.CreateTable(ctx, "Employees", nil); err != nil {
		t.Fatal(err)
	}
	c := srv.Client.NewClient("Employees")
	for id := 1; id <= 50; id++ {
		e := newEmployee(id)
		if err := insertWithSDK(ctx, c, sdkEmployee{PartitionKey: dept, EmployeeID: e.EmployeeID,
			FirstName: e.FirstName, LastName: e.LastName, Email: e.Email, Age: e.Age}); err != nil {
			t.Fatal(err)
		}
	}
	// An id already taken fails the whole transaction: no email_ copy.
	dup := sdkEmployee{PartitionKey: dept, EmployeeID: "000007", Email: "dup@contoso.com"}
	if err := insertWithSDK(ctx, c, dup); err == nil {
		t.Fatal("inserting a taken id succeeded")
	}
	if _, _, err := getWithSDK(ctx, c, emailKey("dup@contoso.com")); status(err) != http.StatusNotFound {
		t.Fatalf("the failed transaction left its email_ copy: %v", err)
	}

	want := newEmployee(23)
	got, _, err := getWithSDK(ctx, c, emailKey(want.Email))
	if err != nil || got.EmployeeID != want.EmployeeID {
		t.Fatalf("lookup by email: %+v, %v", got, err)
	}
	list, err := emailsFromWithSDK(ctx, c, "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.Email[0] != 'a' {
			t.Errorf("range of emails from 'a' returned %s", e.Email)
		}
	}
	if len(list) == 0 {
		t.Fatal("no email starts with 'a'")
	}

	if err := changeEmailWithSDK(ctx, c, want.EmployeeID, "new.address@contoso.com"); err != nil {
		t.Fatal(err)
	}
	got, _, err = getWithSDK(ctx, c, emailKey("new.address@contoso.com"))
	if err != nil || got.EmployeeID != want.EmployeeID {
		t.Fatalf("lookup by the new email: %+v, %v", got, err)
	}
	if _, _, err := getWithSDK(ctx, c, emailKey(want.Email)); status(err) != http.StatusNotFound {
		t.Fatalf("the old email_ copy is still there: %v", err)
	}
	byID, _, err := getWithSDK(ctx, c, "empid_"+want.EmployeeID)
	if err != nil || byID.Email != "new.address@contoso.com" {
		t.Fatalf("empid_ copy after the change: %+v, %v", byID, err)
	}
}

func status(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}
