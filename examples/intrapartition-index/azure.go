package main

// The same pattern as code that runs against Azure: the official Go SDK
// (aztables). azure_test.go runs it against localtabletest.NewServer; point
// the client at a storage account and it runs there unchanged.

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// sdkEmployee is an employee entity as the SDK reads and writes it.
type sdkEmployee struct {
	PartitionKey string
	RowKey       string
	EmployeeID   string
	FirstName    string
	LastName     string
	Email        string
	Age          int32
}

// insertWithSDK writes the empid_ and email_ copies in one transaction.
func insertWithSDK(ctx context.Context, c *aztables.Client, emp sdkEmployee) error {
	byID, byEmail := emp, emp
	byID.RowKey, byEmail.RowKey = "empid_"+emp.EmployeeID, emailKey(emp.Email)
	a, err := json.Marshal(byID)
	if err != nil {
		return err
	}
	b, err := json.Marshal(byEmail)
	if err != nil {
		return err
	}
	_, err = c.SubmitTransaction(ctx, []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: a},
		{ActionType: aztables.TransactionTypeAdd, Entity: b},
	}, nil)
	return err
}

// getWithSDK is a point query: one entity by its keys, with its ETag.
func getWithSDK(ctx context.Context, c *aztables.Client, rowKey string) (sdkEmployee, azcore.ETag, error) {
	var emp sdkEmployee
	resp, err := c.GetEntity(ctx, dept, rowKey, nil)
	if err != nil {
		return emp, "", err
	}
	return emp, resp.ETag, json.Unmarshal(resp.Value, &emp)
}

// odataString quotes s as an OData string literal.
func odataString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// emailsFromWithSDK lists the employees whose email starts with prefix: a
// RowKey range over the email_ copies.
func emailsFromWithSDK(ctx context.Context, c *aztables.Client, prefix string) ([]sdkEmployee, error) {
	lo := emailKey(prefix)
	hi := lo[:len(lo)-1] + string(lo[len(lo)-1]+1)
	filter := "PartitionKey eq " + odataString(dept) + " and RowKey ge " + odataString(lo) + " and RowKey lt " + odataString(hi)
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	var out []sdkEmployee
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, raw := range page.Entities {
			var e sdkEmployee
			if err := json.Unmarshal(raw, &e); err != nil {
				return nil, err
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// changeEmailWithSDK replaces the empid_ copy, deletes the old email_ copy
// and adds the new one in one transaction, on the ETags read.
func changeEmailWithSDK(ctx context.Context, c *aztables.Client, id, newEmail string) error {
	emp, idTag, err := getWithSDK(ctx, c, "empid_"+id)
	if err != nil {
		return err
	}
	_, emailTag, err := getWithSDK(ctx, c, emailKey(emp.Email))
	if err != nil {
		return err
	}
	oldEmail := emp.Email
	emp.Email = newEmail
	updated, err := json.Marshal(emp)
	if err != nil {
		return err
	}
	emp.RowKey = emailKey(newEmail)
	added, err := json.Marshal(emp)
	if err != nil {
		return err
	}
	deleted, err := json.Marshal(map[string]string{"PartitionKey": dept, "RowKey": emailKey(oldEmail)})
	if err != nil {
		return err
	}
	_, err = c.SubmitTransaction(ctx, []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: updated, IfMatch: &idTag},
		{ActionType: aztables.TransactionTypeDelete, Entity: deleted, IfMatch: &emailTag},
		{ActionType: aztables.TransactionTypeAdd, Entity: added},
	}, nil)
	return err
}
