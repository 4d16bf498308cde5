// Command log-data shows the log data anti-pattern: log lines stored as
// entities and read back by time range fit a table badly, whichever keys
// are chosen; append-only files per period (blobs, on Azure) fit better.
//
// The problem: 20 servers log 3 hours of lines; the usual question is
// "the errors of 10:00–11:00". Two key designs, both flawed:
//   - PartitionKey = the server, RowKey = the time: writes spread over the
//     servers' partitions, but a time range names no partition, so it scans
//     the whole table;
//   - PartitionKey = the hour: the time range is one partition, but every
//     write of the hour goes to that one partition (the prepend/append
//     anti-pattern), bounding the logging rate by one partition's.
//
// The alternative the design guide recommends: write each hour's lines to
// a file of its own (a blob), appended sequentially; a time range reads
// the files of its hours, and nothing else. The trade-off: no query by
// other fields without reading the files, and a line is found by reading,
// not by key.
//
// What the program proves, with the numbers: the server-keyed table scans
// all lines for one hour's question, the hour-keyed table puts every
// write of an hour into one partition, and the hourly files answer the
// question by reading one file of a third of the lines, in fewer bytes
// than the entities take.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/examples/internal/show"
	"github.com/localtable/localtable/filter"
)

func main() {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer acct.Close()
	dir, err := os.MkdirTemp("", "log-data")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := run(ctx, acct, dir, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

const (
	servers = 20
	lines   = 3600 // over 3 hours
)

var start = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// line i: its time, server, level and message.
type line struct {
	At      time.Time
	Server  string
	Level   string
	Message string
}

func logLine(i int) line {
	level := "info"
	switch {
	case i%17 == 0:
		level = "error"
	case i%5 == 0:
		level = "warn"
	}
	return line{
		At:      start.Add(time.Duration(i) * 3 * time.Second),
		Server:  fmt.Sprintf("web%02d", i%servers),
		Level:   level,
		Message: fmt.Sprintf("GET /api/orders/%d took %d ms", i*31%1000, 5+i%200),
	}
}

func (l line) props() localtable.Properties {
	return localtable.Properties{"Level": localtable.StringValue(l.Level), "Message": localtable.StringValue(l.Message),
		"At": localtable.DateTimeValue(l.At)}
}

func (l line) text() string {
	return l.At.Format(time.RFC3339) + " " + l.Server + " " + l.Level + " " + l.Message + "\n"
}

func run(ctx context.Context, acct *localtable.Account, dir string, w io.Writer) error {
	byServer, err := acct.CreateTable(ctx, "LogByServer")
	if err != nil {
		return err
	}
	byHour, err := acct.CreateTable(ctx, "LogByHour")
	if err != nil {
		return err
	}
	files := map[string]*os.File{}
	entityBytes := 0
	hourWrites := map[string]map[string]int{} // hour → partition → writes
	for i := 0; i < lines; i++ {
		l := logLine(i)
		hour := l.At.Format("2006010215")
		seq := fmt.Sprintf("%06d", i)
		e1 := localtable.Entity{PartitionKey: l.Server, RowKey: l.At.Format("20060102T150405Z") + "_" + seq, Properties: l.props()}
		e2 := localtable.Entity{PartitionKey: hour, RowKey: l.Server + "_" + seq, Properties: l.props()}
		if _, err := byServer.Insert(ctx, e1); err != nil {
			return err
		}
		if _, err := byHour.Insert(ctx, e2); err != nil {
			return err
		}
		entityBytes += localtable.EntitySize(&e1)
		if hourWrites[hour] == nil {
			hourWrites[hour] = map[string]int{}
		}
		hourWrites[hour][e1.PartitionKey+"|server"]++
		hourWrites[hour][e2.PartitionKey+"|hour"]++

		f := files[hour]
		if f == nil {
			if f, err = os.OpenFile(filepath.Join(dir, hour+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
				return err
			}
			files[hour] = f
		}
		if _, err := f.WriteString(l.text()); err != nil {
			return err
		}
	}
	fileBytes := int64(0)
	for _, f := range files {
		info, err := f.Stat()
		if err != nil {
			return err
		}
		fileBytes += info.Size()
		if err := f.Close(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d log lines from %d servers over 3 hours, stored three ways\n\n", lines, servers)

	// Where the writes of one hour went.
	hot := func(suffix string) (parts, top int) {
		for k, n := range hourWrites["2026112410"] {
			if strings.HasSuffix(k, suffix) {
				parts++
				top = max(top, n)
			}
		}
		return
	}
	p1, t1 := hot("|server")
	p2, t2 := hot("|hour")
	fmt.Fprintf(w, "writes of 10:00-11:00: PK=server spread over %d partitions (at most %d each); PK=hour all %d into %d partition\n\n", p1, t1, t2, p2)

	// The question: the errors of 10:00–11:00.
	from, to := start.Add(time.Hour), start.Add(2*time.Hour)
	q1 := filter.And(filter.Prop("At").Ge(from), filter.Prop("At").Lt(to), filter.Prop("Level").Eq("error"))
	r1, err := show.Filter(ctx, w, "errors 10:00-11:00, PK=server", byServer, q1)
	if err != nil {
		return err
	}
	q2 := filter.And(filter.PartitionKey().Eq("2026112410"), filter.Prop("Level").Eq("error"))
	r2, err := show.Filter(ctx, w, "errors 10:00-11:00, PK=hour", byHour, q2)
	if err != nil {
		return err
	}
	read, errs, err := grepFile(filepath.Join(dir, "2026112410.log"), " error ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-46s read %6d lines, matched %5d  (1 file)\n", "errors 10:00-11:00, hourly files:", read, errs)
	if len(r1.Entities) != errs || len(r2.Entities) != errs {
		return fmt.Errorf("the designs disagree: %d, %d, %d errors", len(r1.Entities), len(r2.Entities), errs)
	}
	fmt.Fprintf(w, "\nstorage: %d bytes as entities (EntitySize), %d bytes as log files\n", entityBytes, fileBytes)
	return nil
}

// grepFile reads a log file and counts its lines and those holding s.
func grepFile(path, s string) (read, matched int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		read++
		if strings.Contains(sc.Text(), s) {
			matched++
		}
	}
	return read, matched, sc.Err()
}
