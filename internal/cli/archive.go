package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/localtable/localtable/storage"
)

// A backup archive is one account's whole store, read from one engine
// snapshot, so it is consistent across tables: every key and value the
// store holds (the table catalog with access policies, every entity record
// with its Timestamp and so its ETag, the clock's high-water mark). Both
// engines hold the same keys and values, so an archive of either restores
// into either, exactly.
//
// The file is gzip-compressed:
//
//	"localtable-backup\n"
//	one line of JSON: the archiveHeader
//	records: uvarint(len(key)) key uvarint(len(value)) value
//	uvarint(0) (keys are never empty)
//	uvarint(record count), then the SHA-256 of the record bytes
//
// Readers check the count and the digest before reporting success.
const archiveMagic = "localtable-backup\n"

// archiveFormat is the version of the layout above.
const archiveFormat = 1

// archiveHeader describes a backup.
type archiveHeader struct {
	Format  int    `json:"format"`
	Account string `json:"account"`
	Created string `json:"created"` // RFC 3339
	Source  string `json:"source"`  // the engine it was taken from: memory or pebble
	Records int    `json:"-"`       // from the trailer, on reading
}

// errOtherAccount is a backup of another account than the one restored.
var errOtherAccount = errors.New("the backup is of another account")

// writeArchive writes every key of a snapshot of eng to w, and returns
// how many records it wrote.
func writeArchive(w io.Writer, eng storage.Engine, account, source string) (int, error) {
	snap, err := eng.NewSnapshot()
	if err != nil {
		return 0, err
	}
	defer snap.Close()
	it, err := snap.NewIter(nil)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(zw, 256<<10)
	h := archiveHeader{Format: archiveFormat, Account: account, Created: time.Now().UTC().Format(time.RFC3339), Source: source}
	hj, _ := json.Marshal(h)
	bw.WriteString(archiveMagic)
	bw.Write(hj)
	bw.WriteByte('\n')
	sum := sha256.New()
	out := io.MultiWriter(bw, sum)
	var lb [binary.MaxVarintLen64]byte
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		k, v := it.Key(), it.Value()
		out.Write(lb[:binary.PutUvarint(lb[:], uint64(len(k)))])
		out.Write(k)
		out.Write(lb[:binary.PutUvarint(lb[:], uint64(len(v)))])
		if _, err := out.Write(v); err != nil {
			return n, err
		}
		n++
	}
	if err := it.Error(); err != nil {
		return n, err
	}
	bw.WriteByte(0)
	bw.Write(lb[:binary.PutUvarint(lb[:], uint64(n))])
	bw.Write(sum.Sum(nil))
	if err := bw.Flush(); err != nil {
		return n, err
	}
	return n, zw.Close()
}

// readArchive reads an archive, calling fn for each record (key and value
// are valid only during the call), and checks its trailer.
func readArchive(r io.Reader, fn func(key, value []byte) error) (archiveHeader, error) {
	var h archiveHeader
	br, err := readArchiveHeader(r, &h)
	if err != nil {
		return h, err
	}
	sum := sha256.New()
	var lb [binary.MaxVarintLen64]byte
	var key, val []byte
	n := 0
	truncated := func(err error) error {
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("the backup is truncated after %d records", n)
		}
		return err
	}
	readLen := func() (int, error) {
		l, err := binary.ReadUvarint(br)
		if err != nil {
			return 0, truncated(err)
		}
		if l > 64<<20 {
			return 0, fmt.Errorf("the backup is corrupt: a record of %d bytes", l)
		}
		if l > 0 {
			sum.Write(lb[:binary.PutUvarint(lb[:], l)])
		}
		return int(l), nil
	}
	for {
		kl, err := readLen()
		if err != nil {
			return h, err
		}
		if kl == 0 {
			break
		}
		key = append(key[:0], make([]byte, kl)...)
		if _, err := io.ReadFull(br, key); err != nil {
			return h, truncated(err)
		}
		sum.Write(key)
		vl, err := binary.ReadUvarint(br)
		if err != nil {
			return h, truncated(err)
		}
		if vl > 64<<20 {
			return h, fmt.Errorf("the backup is corrupt: a value of %d bytes", vl)
		}
		sum.Write(lb[:binary.PutUvarint(lb[:], vl)])
		val = append(val[:0], make([]byte, vl)...)
		if _, err := io.ReadFull(br, val); err != nil {
			return h, truncated(err)
		}
		sum.Write(val)
		n++
		if err := fn(key, val); err != nil {
			return h, err
		}
	}
	count, err := binary.ReadUvarint(br)
	if err != nil {
		return h, truncated(err)
	}
	digest := make([]byte, sha256.Size)
	if _, err := io.ReadFull(br, digest); err != nil {
		return h, truncated(err)
	}
	if int(count) != n {
		return h, fmt.Errorf("the backup is corrupt: %d records, its trailer says %d", n, count)
	}
	if !bytes.Equal(digest, sum.Sum(nil)) {
		return h, errors.New("the backup is corrupt: its checksum does not match")
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return h, errors.New("the backup is corrupt: data after its trailer")
	}
	h.Records = n
	return h, nil
}

// restoreInto writes an archive's records into eng, which should be
// empty, in batches, and syncs it when it can. On error, eng holds part
// of the archive: the caller discards it.
func restoreInto(r io.Reader, eng storage.Engine, account string) (archiveHeader, error) {
	b := eng.NewBatch()
	size := 0
	h, err := readArchive(r, func(k, v []byte) error {
		if err := b.Set(k, v); err != nil {
			return err
		}
		if size += len(k) + len(v); size >= 4<<20 {
			if err := b.Commit(false); err != nil {
				return err
			}
			b.Close()
			b, size = eng.NewBatch(), 0
		}
		return nil
	})
	if err == nil && account != "" && h.Account != account {
		err = fmt.Errorf("%w (%s, not %s)", errOtherAccount, h.Account, account)
	}
	if err != nil {
		b.Close()
		return h, err
	}
	if err := b.Commit(true); err != nil {
		return h, err
	}
	b.Close()
	if s, ok := eng.(storage.Syncer); ok {
		return h, s.Sync()
	}
	return h, nil
}

// restoreFileInto restores the archive in path into eng, if it is a
// backup of account (errOtherAccount if not).
func restoreFileInto(path string, eng storage.Engine, account string) (archiveHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return archiveHeader{}, err
	}
	defer f.Close()
	// Read the header first: a backup of another account is skipped
	// before anything is written.
	var h archiveHeader
	if _, err := readArchiveHeader(f, &h); err != nil {
		return h, err
	}
	if h.Account != account {
		return h, errOtherAccount
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return h, err
	}
	return restoreInto(f, eng, account)
}

// readArchiveHeader reads an archive's magic and header into h, and
// returns the reader positioned after them.
func readArchiveHeader(r io.Reader, h *archiveHeader) (*bufio.Reader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a localtable backup: %v", err)
	}
	br := bufio.NewReaderSize(zr, 256<<10)
	magic := make([]byte, len(archiveMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != archiveMagic {
		return nil, errors.New("not a localtable backup (no header)")
	}
	line, err := br.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("backup header: %v", err)
	}
	if err := json.Unmarshal(bytes.TrimSpace(line), h); err != nil {
		return nil, fmt.Errorf("backup header: %v", err)
	}
	if h.Format != archiveFormat {
		return nil, fmt.Errorf("backup format %d: this localtable reads format %d", h.Format, archiveFormat)
	}
	return br, nil
}
