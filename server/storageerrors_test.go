package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

// faultEngine is an in-memory engine whose reads and commits fail, while
// fail is set, as a networked engine's do (storage/etcd): with
// storage.ErrUnavailable, or a commit with storage.ErrCommitUnknown.
type faultEngine struct {
	storage.Engine
	readErr, commitErr atomic.Pointer[error]
}

func (f *faultEngine) Get(key []byte) ([]byte, io.Closer, error) {
	if err := f.readErr.Load(); err != nil {
		return nil, nil, *err
	}
	return f.Engine.Get(key)
}

func (f *faultEngine) NewBatch() storage.Batch { return &faultBatch{Batch: f.Engine.NewBatch(), f: f} }

type faultBatch struct {
	storage.Batch
	f *faultEngine
}

func (b *faultBatch) Commit(sync bool) error {
	if err := b.f.commitErr.Load(); err != nil {
		b.Batch.Close()
		return *err
	}
	return b.Batch.Commit(sync)
}

// TestStorageErrors: the errors of an engine that reaches its store over
// a network are answered as the service answers such failures, not as
// 500 InternalError: the store unreachable (nothing applied, retry) as 503
// ServerBusy, a write of unknown outcome as 500 OperationTimedOut.
func TestStorageErrors(t *testing.T) {
	eng := &faultEngine{Engine: memory.New(nil)}
	acct, err := localtable.Open(&localtable.Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	if _, err := acct.CreateTable(context.Background(), "Faults"); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(server.New(acct, nil))
	defer hs.Close()
	sc, err := aztables.NewServiceClientFromConnectionString(
		server.ConnectionString(hs.URL+"/"+server.DevAccountName, server.DevAccountName, server.DevAccountKey),
		&aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	tbl := sc.NewClient("Faults")
	ctx := context.Background()
	entity := func(rk string) []byte {
		return []byte(fmt.Sprintf(`{"PartitionKey":"p","RowKey":%q}`, rk))
	}
	unavailable := fmt.Errorf("storage/etcd: get: %w (etcdserver: no leader)", storage.ErrUnavailable)
	refused := fmt.Errorf("storage/etcd: commit: %w (etcdserver: too many requests)", storage.ErrUnavailable)
	unknown := fmt.Errorf("storage/etcd: commit: %w (etcdserver: request timed out)", storage.ErrCommitUnknown)
	want := func(what string, err error, status int, code string) {
		t.Helper()
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != status || re.ErrorCode != code {
			t.Errorf("%s = %v, want %d %s", what, err, status, code)
		}
	}

	eng.readErr.Store(&unavailable)
	_, err = tbl.GetEntity(ctx, "p", "r", nil)
	want("GetEntity, the store unreachable", err, http.StatusServiceUnavailable, "ServerBusy")
	eng.readErr.Store(nil)

	eng.commitErr.Store(&refused)
	_, err = tbl.AddEntity(ctx, entity("r"), nil)
	want("AddEntity, the commit refused", err, http.StatusServiceUnavailable, "ServerBusy")
	_, err = tbl.SubmitTransaction(ctx, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: entity("b")}}, nil)
	want("a batch, the commit refused", err, http.StatusServiceUnavailable, "ServerBusy")

	eng.commitErr.Store(&unknown)
	_, err = tbl.AddEntity(ctx, entity("r"), nil)
	want("AddEntity, the commit's outcome unknown", err, http.StatusInternalServerError, "OperationTimedOut")
	eng.commitErr.Store(nil)

	if _, err := tbl.AddEntity(ctx, entity("r"), nil); err != nil {
		t.Errorf("AddEntity once the store is back: %v", err)
	}
}
