package pebble_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
	"github.com/localtable/localtable/storage/storagetest"
)

func TestConformanceMem(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine {
		db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem()})
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

func TestConformanceDisk(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine {
		db, err := pebble.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

func commit(t *testing.T, e storage.Engine, sync bool, fn func(b storage.Batch) error) {
	t.Helper()
	b := e.NewBatch()
	defer b.Close()
	if err := fn(b); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(sync); err != nil {
		t.Fatal(err)
	}
}

func scanAll(t *testing.T, r storage.Reader) []string {
	t.Helper()
	it, err := r.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReopen(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fs    vfs.FS
		dir   string
		opts  pebble.Options
		flush bool
	}{
		{"disk", nil, t.TempDir(), pebble.Options{}, false},
		{"disk-flushed", nil, t.TempDir(), pebble.Options{}, true},
		{"disk-nosync", nil, t.TempDir(), pebble.Options{NoSync: true}, false},
		{"mem", vfs.NewMem(), "db", pebble.Options{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.FS = tc.fs
			db, err := pebble.Open(tc.dir, &opts)
			if err != nil {
				t.Fatal(err)
			}
			commit(t, db, true, func(b storage.Batch) error {
				for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
					if err := b.Set([]byte(k), []byte("v"+k)); err != nil {
						return err
					}
				}
				return nil
			})
			commit(t, db, false, func(b storage.Batch) error {
				return errors.Join(b.DeleteRange([]byte("b"), []byte("d")), b.Delete([]byte("f")),
					b.Set([]byte("a"), []byte("new")))
			})
			// The range deletion must persist both through the WAL and,
			// flushed, in sstables.
			if err := db.Sync(); err != nil {
				t.Fatal(err)
			}
			if tc.flush {
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			want := []string{"a=new", "d=vd", "e=ve"}
			if got := scanAll(t, db); !slices.Equal(got, want) {
				t.Fatalf("before reopen: %v, want %v", got, want)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); !errors.Is(err, storage.ErrClosed) {
				t.Errorf("second Close = %v, want ErrClosed", err)
			}

			for round := range 2 {
				db, err = pebble.Open(tc.dir, &opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := scanAll(t, db); !slices.Equal(got, want) {
					t.Fatalf("after reopen %d: %v, want %v", round, got, want)
				}
				if _, _, err := db.Get([]byte("b")); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("Get(b) after reopen = %v, want ErrNotFound", err)
				}
				// Write more so the second reopen also replays new data.
				commit(t, db, true, func(b storage.Batch) error {
					return b.Set([]byte("round"), []byte{byte('0' + round)})
				})
				want = []string{"a=new", "d=vd", "e=ve", "round=" + string(rune('0'+round))}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestOpenError(t *testing.T) {
	fs := vfs.NewMem()
	f, err := fs.Create("file", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if db, err := pebble.Open("file", &pebble.Options{FS: fs}); err == nil {
		db.Close()
		t.Fatal("Open on a regular file succeeded")
	}
}

func ExampleOpen() {
	db, err := pebble.Open("example", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		panic(err)
	}
	defer db.Close()

	b := db.NewBatch()
	b.Set([]byte("greeting"), []byte("hello"))
	if err := b.Commit(true); err != nil {
		panic(err)
	}
	b.Close()

	v, closer, err := db.Get([]byte("greeting"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", v)
	closer.Close()

	_, _, err = db.Get([]byte("missing"))
	fmt.Println(errors.Is(err, storage.ErrNotFound))
	// Output:
	// hello
	// true
}

// TestCrash simulates power loss with a crashable in-memory file system
// that keeps only what was fsynced.
func TestCrash(t *testing.T) {
	pair := func(v string) func(b storage.Batch) error {
		return func(b storage.Batch) error {
			return errors.Join(b.Set([]byte("p/a"), []byte(v)), b.Set([]byte("p/b"), []byte(v)))
		}
	}
	reopen := func(t *testing.T, fs *vfs.MemFS, opts pebble.Options) []string {
		t.Helper()
		opts.FS = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		db, err := pebble.Open("db", &opts)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		return scanAll(t, db)
	}
	t.Run("sync", func(t *testing.T) {
		fs := vfs.NewCrashableMem()
		db, err := pebble.Open("db", &pebble.Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		commit(t, db, true, pair("1"))
		if got, want := reopen(t, fs, pebble.Options{}), []string{"p/a=1", "p/b=1"}; !slices.Equal(got, want) {
			t.Fatalf("after crash: %v, want %v (Commit(true) must be durable)", got, want)
		}
		commit(t, db, false, pair("2"))
		got := reopen(t, fs, pebble.Options{})
		if !slices.Equal(got, []string{"p/a=1", "p/b=1"}) && !slices.Equal(got, []string{"p/a=2", "p/b=2"}) {
			t.Fatalf("after crash: %v, want pair 1 or pair 2 (batches are atomic)", got)
		}
		if err := db.Sync(); err != nil {
			t.Fatal(err)
		}
		if got, want := reopen(t, fs, pebble.Options{}), []string{"p/a=2", "p/b=2"}; !slices.Equal(got, want) {
			t.Fatalf("after Sync and crash: %v, want %v", got, want)
		}
	})
	t.Run("nosync", func(t *testing.T) {
		fs := vfs.NewCrashableMem()
		opts := pebble.Options{FS: fs, NoSync: true}
		db, err := pebble.Open("db", &opts)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for i := range 20 {
			commit(t, db, true, pair(fmt.Sprint(i)))
		}
		// Whatever survives is a consistent prefix: both keys or none.
		got := reopen(t, fs, opts)
		if len(got) != 0 && (len(got) != 2 || got[0][len("p/a="):] != got[1][len("p/b="):]) {
			t.Fatalf("after crash with NoSync: %v, want an intact pair or nothing", got)
		}
		if err := db.Sync(); err != nil {
			t.Fatal(err)
		}
		if got, want := reopen(t, fs, opts), []string{"p/a=19", "p/b=19"}; !slices.Equal(got, want) {
			t.Fatalf("after Sync and crash: %v, want %v", got, want)
		}
	})
}

// TestReadOnly opens a database read-only: it reads what was written,
// refuses commits, and leaves the directory as it was (but for the lock
// file, which taking the lock may touch); a directory
// without a database is refused with ErrNoDatabase and left untouched.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	d, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := d.NewBatch()
	if err := b.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	listing := func(dir string) []string {
		t.Helper()
		var out []string
		err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := e.Info()
			if err != nil {
				return err
			}
			if e.Name() == "LOCK" { // taking the lock may touch it
				out = append(out, path)
				return nil
			}
			out = append(out, fmt.Sprintf("%s %d %s", path, info.Size(), info.ModTime()))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := listing(dir)
	r, err := pebble.Open(dir, &pebble.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	v, c, err := r.Get([]byte("k"))
	if err != nil || string(v) != "v" {
		t.Fatalf("Get: %q, %v", v, err)
	}
	c.Close()
	b = r.NewBatch()
	if err := b.Set([]byte("k2"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(true); err == nil {
		t.Error("a commit to a read-only database succeeded")
	}
	b.Close()
	if _, err := pebble.Open(dir, nil); !errors.Is(err, pebble.ErrInUse) {
		t.Errorf("opening it for writing while it is open read-only: %v, want ErrInUse", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if after := listing(dir); !slices.Equal(before, after) {
		t.Errorf("the read-only open changed the directory:\nbefore %q\nafter  %q", before, after)
	}

	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = listing(empty)
	if _, err := pebble.Open(empty, &pebble.Options{ReadOnly: true}); !errors.Is(err, pebble.ErrNoDatabase) {
		t.Errorf("a read-only open of a directory without a database: %v, want ErrNoDatabase", err)
	}
	if _, err := pebble.Open(filepath.Join(empty, "absent"), &pebble.Options{ReadOnly: true}); !errors.Is(err, pebble.ErrNoDatabase) {
		t.Errorf("a read-only open of a missing directory: %v, want ErrNoDatabase", err)
	}
	if after := listing(empty); !slices.Equal(before, after) {
		t.Errorf("the refused open changed the directory:\nbefore %q\nafter  %q", before, after)
	}
}
