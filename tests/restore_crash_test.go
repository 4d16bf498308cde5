package tests

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage/pebble"
)

// syncFS is a file system that calls onSync after every file or
// directory sync that succeeds: the moments at which a power loss shows
// something new.
type syncFS struct {
	vfs.FS
	mu     sync.Mutex
	onSync func()
}

func (fs *syncFS) synced() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.onSync != nil {
		fs.onSync()
	}
}

func (fs *syncFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &syncFile{File: f, fs: fs}, nil
}

func (fs *syncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.Create(name, c))
}

func (fs *syncFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.wrap(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs *syncFS) OpenDir(name string) (vfs.File, error) { return fs.wrap(fs.FS.OpenDir(name)) }

func (fs *syncFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.ReuseForWrite(oldname, newname, c))
}

type syncFile struct {
	vfs.File
	fs *syncFS
}

func (f *syncFile) Sync() error {
	err := f.File.Sync()
	if err == nil {
		f.fs.synced()
	}
	return err
}

func (f *syncFile) SyncData() error {
	err := f.File.SyncData()
	if err == nil {
		f.fs.synced()
	}
	return err
}

func (f *syncFile) SyncTo(n int64) (bool, error) {
	full, err := f.File.SyncTo(n)
	if err == nil {
		f.fs.synced()
	}
	return full, err
}

// TestRestorePowerLoss loses power at every sync of Account.Restore on
// pebble, and after it: reopened, the account must never hand out a
// Timestamp at or below one it handed out before the power loss, whatever
// the restored checkpoint's clock said (else an ETag of the abandoned
// state could match a new write again).
func TestRestorePowerLoss(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	fs := &syncFS{FS: mem}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := tabletest.NewFakeClock(t0)
	db, err := pebble.Open("db", &pebble.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	a, err := localtable.Open(&localtable.Options{Engine: db, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tbl, err := a.CreateTable(ctx, "Restored")
	if err != nil {
		t.Fatal(err)
	}
	e := localtable.Entity{PartitionKey: "p", RowKey: "r"}
	if _, err := tbl.Insert(ctx, e); err != nil {
		t.Fatal(err)
	}
	cp, err := a.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	clock.Set(t0.Add(time.Minute)) // far past the checkpoint's reservation
	tag, err := tbl.Upsert(ctx, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	last, err := tbl.Get(ctx, "p", "r", nil)
	if err != nil || last.ETag != tag {
		t.Fatalf("Get = %v, %v", last, err)
	}

	var images []*vfs.MemFS
	fs.mu.Lock()
	fs.onSync = func() { images = append(images, mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})) }
	fs.mu.Unlock()
	if err := a.Restore(ctx, cp); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	fs.onSync = nil
	images = append(images, mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}))
	fs.mu.Unlock()
	if len(images) < 2 {
		t.Fatalf("%d crash images: Restore synced nothing", len(images))
	}

	for i, img := range images {
		db, err := pebble.Open("db", &pebble.Options{FS: img})
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		// The clock is back at the checkpoint's time: only the stored mark
		// keeps the Timestamps ahead of the ones handed out.
		b, err := localtable.Open(&localtable.Options{Engine: db, Clock: func() time.Time { return t0 }})
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		if _, err := b.Table("Restored").Upsert(ctx, e, nil); err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		got, err := b.Table("Restored").Get(ctx, "p", "r", nil)
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		if !got.Timestamp.After(last.Timestamp) {
			t.Errorf("image %d of %d: a write after the power loss is stamped %v, not after %v handed out before it", i, len(images), got.Timestamp, last.Timestamp)
		}
		b.Close()
	}
}

// TestNoSyncClockMarkDurable writes on pebble with NoSync (bulk loads),
// loses power with nothing of the writes synced, and reopens with the
// clock where it was: the Timestamps handed out to the lost writes are
// not handed out again, as the clock's mark is synced even in that mode.
func TestNoSyncClockMarkDurable(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	frozen := func() time.Time { return t0 }
	db, err := pebble.Open("db", &pebble.Options{FS: mem, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := localtable.Open(&localtable.Options{Engine: db, Clock: frozen})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tbl, err := a.CreateTable(ctx, "Bulk")
	if err != nil {
		t.Fatal(err)
	}
	lost, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"})
	if err != nil {
		t.Fatal(err)
	}
	img := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})

	db2, err := pebble.Open("db", &pebble.Options{FS: img})
	if err != nil {
		t.Fatal(err)
	}
	b, err := localtable.Open(&localtable.Options{Engine: db2, Clock: frozen})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.CreateTableIfNotExists(ctx, "Bulk"); err != nil {
		t.Fatal(err)
	}
	again, err := b.Table("Bulk").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if again == lost {
		t.Fatalf("after the power loss, a write got ETag %s again, the ETag of a write acknowledged before it", again)
	}
}
