package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/server"
)

// remoteStore is a running server's account, through aztables: the code
// path of the SDKs, with their authentication, retries and paging.
//
// aztables hands entities back re-encoded from a map[string]any, which
// turns the Double 1.0 into the number 1 (read back as an Int32). So a
// pipeline policy keeps the raw response body, which the server's codec
// reads with every type intact; and entities are sent with every Int32
// and Double annotated, which survives aztables' re-encoding of requests.
type remoteStore struct {
	target *remoteTarget
	svc    *aztables.ServiceClient
}

// rawKey carries a *rawBody in a request's context.
type rawKey struct{}

// rawBody receives a response body, and its headers.
type rawBody struct {
	b []byte
	h http.Header
}

// keepBody is a per-call policy that copies the response body into the
// context's *rawBody, if any.
type keepBody struct{}

func (keepBody) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err != nil || resp == nil {
		return resp, err
	}
	if rb, ok := req.Raw().Context().Value(rawKey{}).(*rawBody); ok {
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return resp, err
		}
		rb.b, rb.h = b, resp.Header
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	return resp, nil
}

// remoteRetry is how the SDK client retries; tests make it not wait.
var remoteRetry = policy.RetryOptions{MaxRetries: 2}

func openRemote(t *remoteTarget) (*remoteStore, error) {
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		PerCallPolicies: []policy.Policy{keepBody{}},
		Retry:           remoteRetry,
	}}
	svc, err := aztables.NewServiceClientFromConnectionString(t.connString, opts)
	if err != nil {
		return nil, err
	}
	return &remoteStore{target: t, svc: svc}, nil
}

func (r *remoteStore) Describe() string { return "server " + r.target.endpoint }

func (r *remoteStore) Close() error { return nil }

// remoteError is a service's answer: a *localtable.Error with the code and
// message, and the HTTP status it came with.
type remoteError struct {
	status int
	err    *localtable.Error
}

func (e *remoteError) Error() string { return e.err.Error() }
func (e *remoteError) Unwrap() error { return e.err }

// remoteErr turns an SDK error into a *remoteError: a *localtable.Error
// with the service's code and message, and its status.
func remoteErr(err error) error {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return err
	}
	msg := ""
	if re.RawResponse != nil {
		if body, perr := runtime.Payload(re.RawResponse); perr == nil {
			var odata struct {
				Err struct {
					Message struct {
						Value string `json:"value"`
					} `json:"message"`
				} `json:"odata.error"`
			}
			if json.Unmarshal(body, &odata) == nil {
				msg = odata.Err.Message.Value
			}
		}
	}
	// The service ends its message with RequestId: and Time: lines, of
	// no use in a command's error (and a hint goes after the message).
	if i := strings.Index(msg, "\nRequestId:"); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" {
		msg = http.StatusText(re.StatusCode)
	}
	return &remoteError{status: re.StatusCode, err: &localtable.Error{Code: localtable.ErrorCode(re.ErrorCode), Message: strings.TrimSpace(msg)}}
}

func (r *remoteStore) ListTables(ctx context.Context) ([]string, error) {
	var out []string
	p := r.svc.NewListTablesPager(nil)
	for p.More() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, remoteErr(err)
		}
		for _, t := range page.Tables {
			out = append(out, *t.Name)
		}
	}
	return out, nil
}

func (r *remoteStore) CreateTable(ctx context.Context, name string) error {
	_, err := r.svc.CreateTable(ctx, name, nil)
	return remoteErr(err)
}

// CheckTable asks the table for one entity: the service answers
// TableNotFound for a table that does not exist (its names are
// case-insensitive, which a query of the table list would not be).
func (r *remoteStore) CheckTable(ctx context.Context, name string) error {
	o := &aztables.ListEntitiesOptions{Top: to.Ptr(int32(1)), Select: to.Ptr(localtable.PartitionKeyName)}
	_, err := r.svc.NewClient(name).NewListEntitiesPager(o).NextPage(ctx)
	return remoteErr(err)
}

func (r *remoteStore) DeleteTable(ctx context.Context, name string) error {
	_, err := r.svc.DeleteTable(ctx, name, nil)
	return remoteErr(err)
}

func (r *remoteStore) Query(ctx context.Context, table string, q queryReq) (queryPage, error) {
	o := &aztables.ListEntitiesOptions{}
	if q.Filter != "" {
		o.Filter = to.Ptr(q.Filter)
	}
	if q.Select != nil {
		// The service returns only what $select names: ask for the keys
		// and Timestamp too, which a data directory always returns.
		sel := []string{localtable.PartitionKeyName, localtable.RowKeyName, localtable.TimestampName}
		for _, s := range q.Select {
			if !slices.Contains(sel, s) {
				sel = append(sel, s)
			}
		}
		o.Select = to.Ptr(strings.Join(sel, ","))
	}
	if q.Top > 0 {
		o.Top = to.Ptr(int32(q.Top))
	}
	if !q.Cont.IsZero() {
		o.NextPartitionKey, o.NextRowKey = to.Ptr(q.Cont.NextPartitionKey), to.Ptr(q.Cont.NextRowKey)
	}
	rb := &rawBody{}
	resp, err := r.svc.NewClient(table).NewListEntitiesPager(o).NextPage(context.WithValue(ctx, rawKey{}, rb))
	if err != nil {
		return queryPage{}, remoteErr(err)
	}
	var page queryPage
	if resp.NextPartitionKey != nil {
		page.Next.NextPartitionKey = *resp.NextPartitionKey
	}
	if resp.NextRowKey != nil {
		page.Next.NextRowKey = *resp.NextRowKey
	}
	var body struct {
		Value []json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(rb.b, &body); err != nil {
		return page, fmt.Errorf("reading the server's page: %v", err)
	}
	for _, raw := range body.Value {
		e, err := entityjson.Decode(raw, true)
		if err != nil {
			return page, fmt.Errorf("reading an entity of the server's page: %v", err)
		}
		page.Entities = append(page.Entities, e)
	}
	page.Stats = planHeaders(rb.h, len(page.Entities))
	return page, nil
}

// planHeaders reads a localtable server's query plan headers
// (server.ScannedHeader, server.IndexHeader) into the page's stats; nil
// from a server that sends none (the service, Azurite).
func planHeaders(h http.Header, returned int) *localtable.QueryStats {
	n, err := strconv.Atoi(h.Get(server.ScannedHeader))
	if err != nil {
		return nil
	}
	return &localtable.QueryStats{Scanned: n, Returned: returned, Index: h.Get(server.IndexHeader)}
}

func (r *remoteStore) Get(ctx context.Context, table, pk, rk string) (localtable.Entity, error) {
	rb := &rawBody{}
	resp, err := r.svc.NewClient(table).GetEntity(context.WithValue(ctx, rawKey{}, rb), pk, rk, nil)
	if err != nil {
		return localtable.Entity{}, remoteErr(err)
	}
	e, err := entityjson.Decode(rb.b, true)
	if err == nil && resp.ETag != "" {
		e.ETag = localtable.ETag(resp.ETag)
	}
	return e, err
}

// wireEntity is e's JSON for aztables (see remoteStore).
func wireEntity(e *localtable.Entity) []byte {
	return entityjson.Append(nil, e, &entityjson.Options{Annotate: true})
}

func (r *remoteStore) Write(ctx context.Context, table string, a localtable.Action) (localtable.ETag, error) {
	c := r.svc.NewClient(table)
	var tag azcore.ETag
	var err error
	ifMatch := azcore.ETag(a.IfMatch)
	if ifMatch == "" {
		ifMatch = azcore.ETagAny
	}
	switch a.Type {
	case localtable.ActionInsert:
		var resp aztables.AddEntityResponse
		resp, err = c.AddEntity(ctx, wireEntity(&a.Entity), nil)
		tag = resp.ETag
	case localtable.ActionUpdateReplace, localtable.ActionUpdateMerge:
		mode := aztables.UpdateModeReplace
		if a.Type == localtable.ActionUpdateMerge {
			mode = aztables.UpdateModeMerge
		}
		var resp aztables.UpdateEntityResponse
		resp, err = c.UpdateEntity(ctx, wireEntity(&a.Entity), &aztables.UpdateEntityOptions{IfMatch: &ifMatch, UpdateMode: mode})
		tag = resp.ETag
	case localtable.ActionUpsertReplace, localtable.ActionUpsertMerge:
		mode := aztables.UpdateModeReplace
		if a.Type == localtable.ActionUpsertMerge {
			mode = aztables.UpdateModeMerge
		}
		var resp aztables.UpsertEntityResponse
		resp, err = c.UpsertEntity(ctx, wireEntity(&a.Entity), &aztables.UpsertEntityOptions{UpdateMode: mode})
		tag = resp.ETag
	case localtable.ActionDelete:
		_, err = c.DeleteEntity(ctx, a.Entity.PartitionKey, a.Entity.RowKey, &aztables.DeleteEntityOptions{IfMatch: &ifMatch})
	default:
		return "", errors.New("unknown action")
	}
	return localtable.ETag(tag), remoteErr(err)
}

var transactionTypes = map[localtable.ActionType]aztables.TransactionType{
	localtable.ActionInsert:        aztables.TransactionTypeAdd,
	localtable.ActionUpdateReplace: aztables.TransactionTypeUpdateReplace,
	localtable.ActionUpdateMerge:   aztables.TransactionTypeUpdateMerge,
	localtable.ActionUpsertReplace: aztables.TransactionTypeInsertReplace,
	localtable.ActionUpsertMerge:   aztables.TransactionTypeInsertMerge,
	localtable.ActionDelete:        aztables.TransactionTypeDelete,
}

func (r *remoteStore) Transact(ctx context.Context, table string, acts []localtable.Action) error {
	out := make([]aztables.TransactionAction, len(acts))
	for i := range acts {
		a := &acts[i]
		out[i] = aztables.TransactionAction{ActionType: transactionTypes[a.Type], Entity: wireEntity(&a.Entity)}
		if a.IfMatch != "" {
			out[i].IfMatch = to.Ptr(azcore.ETag(a.IfMatch))
		}
	}
	rb := &rawBody{}
	_, err := r.svc.NewClient(table).SubmitTransaction(context.WithValue(ctx, rawKey{}, rb), out, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusAccepted {
		if ie := changesetError(rb.b); ie != nil {
			return ie
		}
	}
	return remoteErr(err)
}

// changesetError is the failure a $batch response reports in its
// changeset (the response itself is a 202): the status, code and message
// of the operation that failed; nil if body holds none.
func changesetError(body []byte) error {
	part := func(b []byte) (*multipart.Reader, bool) {
		line, _, _ := bytes.Cut(b, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !bytes.HasPrefix(line, []byte("--")) {
			return nil, false
		}
		return multipart.NewReader(bytes.NewReader(b), string(line[2:])), true
	}
	outer, ok := part(body)
	if !ok {
		return nil
	}
	p, err := outer.NextPart()
	if err != nil {
		return nil
	}
	inner, err := io.ReadAll(p)
	if err != nil {
		return nil
	}
	mr, ok := part(inner)
	if !ok {
		return nil
	}
	for {
		p, err := mr.NextPart()
		if err != nil {
			return nil
		}
		resp, err := http.ReadResponse(bufio.NewReader(p), nil)
		if err != nil {
			return nil
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 {
			continue
		}
		var odata struct {
			Err struct {
				Code    string `json:"code"`
				Message struct {
					Value string `json:"value"`
				} `json:"message"`
			} `json:"odata.error"`
		}
		json.Unmarshal(b, &odata)
		code := resp.Header.Get("x-ms-error-code")
		if code == "" {
			code = odata.Err.Code
		}
		msg := strings.TrimSpace(odata.Err.Message.Value)
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return &remoteError{status: resp.StatusCode, err: &localtable.Error{Code: localtable.ErrorCode(code), Message: msg}}
	}
}
