package main

// The same pattern as code that runs against Azure: the official Go SDK
// (aztables). azure_test.go runs it against localtabletest.NewServer; point
// the client at a storage account and it runs there unchanged.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
)

// appendWithSDK writes a reading under its inverted-ticks RowKey.
func appendWithSDK(ctx context.Context, c *aztables.Client, sensor string, at time.Time, celsius float64) error {
	b, err := json.Marshal(map[string]any{
		"PartitionKey":  sensor,
		"RowKey":        localtable.InvertedTicksKey(at),
		"At@odata.type": "Edm.DateTime",
		"At":            at.UTC().Format(time.RFC3339Nano),
		"Celsius":       celsius,
	})
	if err != nil {
		return err
	}
	_, err = c.AddEntity(ctx, b, nil)
	return err
}

// newestWithSDK returns the sensor's newest n readings, newest first: the
// first page of a query with $top=n, since the keys sort newest first.
func newestWithSDK(ctx context.Context, c *aztables.Client, sensor string, n int32) ([]time.Time, error) {
	f := "PartitionKey eq " + quote(sensor)
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f, Top: &n})
	page, err := pager.NextPage(ctx)
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for _, raw := range page.Entities {
		var e struct{ RowKey string }
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, err
		}
		at, err := localtable.ParseInvertedTicksKey(e.RowKey)
		if err != nil {
			return nil, err
		}
		out = append(out, at)
	}
	return out, nil
}

func quote(s string) string {
	b := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, '\'')
		}
		b = append(b, s[i])
	}
	return string(append(b, '\''))
}
