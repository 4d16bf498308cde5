package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// atomicFile is a file the command writes (an export, an import
// checkpoint, a backup) that appears at its path whole or not at all: it
// is written to a temporary file in the same directory, which Commit
// syncs, renames over the path and makes durable by syncing the
// directory. It is created with the mode the umask leaves of 0666, as
// any file a command creates, not os.CreateTemp's 0600.
type atomicFile struct {
	*os.File
	path string
	done bool
}

// createAtomic starts the atomic write of path.
func createAtomic(path string) (*atomicFile, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	for range 100 {
		var r [6]byte
		rand.Read(r[:])
		tmp := filepath.Join(dir, "."+base+"."+hex.EncodeToString(r[:])+".tmp")
		// O_EXCL: never an existing file; 0666 less the umask.
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &atomicFile{File: f, path: path}, nil
	}
	return nil, errors.New("cannot create a temporary file next to " + path)
}

// Commit syncs the file, closes it, renames it to its path and syncs the
// directory, so that after a crash the path holds the old file or the
// whole new one.
func (a *atomicFile) Commit() error {
	if err := a.Sync(); err != nil {
		return err
	}
	if err := a.Close(); err != nil {
		return err
	}
	if err := os.Rename(a.Name(), a.path); err != nil {
		return err
	}
	a.done = true
	return syncDir(filepath.Dir(a.path))
}

// Abort removes the temporary file unless Commit renamed it; it may be
// deferred unconditionally.
func (a *atomicFile) Abort() {
	if a.done {
		return
	}
	a.Close()
	os.Remove(a.Name())
}

// writeFileAtomic writes data to path as an atomicFile.
func writeFileAtomic(path string, data []byte) error {
	f, err := createAtomic(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// syncDir makes a rename in dir durable. Windows cannot sync a directory
// (nor needs to: NTFS journals the rename).
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
