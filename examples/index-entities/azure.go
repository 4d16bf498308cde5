package main

// The same pattern as code that runs against Azure: the official Go SDK
// (aztables). azure_test.go runs it against localtabletest.NewServer; point
// the client at a storage account and it runs there unchanged.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// sdkIndex is an index entity as the SDK reads it.
type sdkIndex struct {
	ETag        azcore.ETag `json:"-"`
	EmployeeIDs string
}

// getIndex reads lastName's index entity; found is false if there is none.
func getIndex(ctx context.Context, c *aztables.Client, lastName string) (idx sdkIndex, found bool, err error) {
	resp, err := c.GetEntity(ctx, dept, indexKey(lastName), nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return idx, false, nil
	}
	if err != nil {
		return idx, false, err
	}
	if err := json.Unmarshal(resp.Value, &idx); err != nil {
		return idx, false, err
	}
	idx.ETag = resp.ETag
	return idx, true, nil
}

// failedAction returns the index and error code of the action that failed
// a transaction. aztables reports a failed transaction as a ResponseError
// of status 202 carrying the service's multipart response, in which the
// failing operation's odata.error message starts with its index ("1:The
// update condition specified in the request was not satisfied.").
func failedAction(err error) (index int, code string, ok bool) {
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusAccepted {
		return 0, "", false
	}
	m := odataError.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, "", false
	}
	index, _ = strconv.Atoi(m[2])
	return index, m[1], true
}

var odataError = regexp.MustCompile(`"code":"(\w+)".*?"value":"(\d+):`)

// lostRace reports whether a transaction failed because another writer
// changed (412) or created (409) the index entity, action 1, first.
func lostRace(err error) bool {
	i, code, ok := failedAction(err)
	return ok && i == 1 && (code == "UpdateConditionNotSatisfied" || code == "EntityAlreadyExists")
}

// hireWithSDK inserts an employee and adds them to their last name's index
// entity in one transaction, retrying when it loses a race on the index.
func hireWithSDK(ctx context.Context, c *aztables.Client, id, first, last string) (retries int, err error) {
	emp, err := json.Marshal(map[string]any{"PartitionKey": dept, "RowKey": id, "FirstName": first, "LastName": last})
	if err != nil {
		return 0, err
	}
	for ; ; retries++ {
		idx, found, err := getIndex(ctx, c, last)
		if err != nil {
			return retries, err
		}
		list := id
		if idx.EmployeeIDs != "" {
			list = idx.EmployeeIDs + " " + id
		}
		ent, err := json.Marshal(map[string]any{"PartitionKey": dept, "RowKey": indexKey(last), "EmployeeIDs": list})
		if err != nil {
			return retries, err
		}
		indexAction := aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: ent}
		if found {
			etag := idx.ETag
			indexAction = aztables.TransactionAction{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent, IfMatch: &etag}
		}
		_, err = c.SubmitTransaction(ctx, []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: emp},
			indexAction,
		}, nil)
		if lostRace(err) {
			continue
		}
		return retries, err
	}
}
