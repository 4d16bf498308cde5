package tableio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
)

// MaxLineBytes bounds one record: a JSONL line or a CSV record longer than
// this is a RecordError. An entity holds at most 1 MiB of data, which JSON
// (escapes, base64) may grow several times.
const MaxLineBytes = 16 << 20

// Writer writes entities to a file. It buffers: call Flush at the end.
type Writer interface {
	Write(e *localtable.Entity) error // writes one entity
	Flush() error                     // writes out what is buffered
}

// JSONLWriter writes entities as JSON lines.
type JSONLWriter struct {
	w    *bufio.Writer
	opts *entityjson.Options
	buf  []byte
}

// NewJSONLWriter returns a writer of JSON lines to w. opts may be nil:
// keys and properties only.
func NewJSONLWriter(w io.Writer, opts *entityjson.Options) *JSONLWriter {
	return &JSONLWriter{w: bufio.NewWriterSize(w, 64<<10), opts: opts}
}

// Write writes one entity as a line.
func (j *JSONLWriter) Write(e *localtable.Entity) error {
	j.buf = entityjson.Append(j.buf[:0], e, j.opts)
	j.buf = append(j.buf, '\n')
	_, err := j.w.Write(j.buf)
	return err
}

// Flush writes what is buffered.
func (j *JSONLWriter) Flush() error { return j.w.Flush() }

// Reader reads entities from a file, one record at a time.
type Reader interface {
	// Next returns the next entity and the line its record starts on. At
	// the end it returns io.EOF. A record that is not an entity is a
	// *RecordError, and the next call reads on; other errors end reading.
	Next() (line int, e localtable.Entity, err error)
	// SkipThrough reads past every record that starts on a line up to
	// line, without decoding them, and returns how many it skipped.
	SkipThrough(line int) (int, error)
	// Offset returns the bytes of input read through the last record
	// Next returned or SkipThrough skipped (and the blank lines before
	// it; after SkipThrough, also the record after the last skipped, if
	// it read one): the input done, for a progress bar, exact to the
	// byte however far the reader buffers ahead.
	Offset() int64
}

// position counts the bytes a reader took from its input, less those its
// buffer holds still: the offset of what it has returned.
type position struct {
	in *countReader
	br *bufio.Reader
}

// Offset implements Reader.
func (p position) Offset() int64 { return p.in.n - int64(p.br.Buffered()) }

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// NewReader returns a reader of entities in format f from r. For CSV it
// reads the header now. A UTF-8 byte-order mark at the start of r (Excel
// writes one before a CSV file's header) is skipped.
func NewReader(r io.Reader, f Format) (Reader, error) {
	in := &countReader{r: r}
	br := bufio.NewReaderSize(in, 1<<20)
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	pos := position{in: in, br: br}
	if f == CSV {
		return newCSVReader(br, pos)
	}
	return &jsonlReader{br: br, position: pos}, nil
}

// utf8BOM is the byte-order mark U+FEFF in UTF-8.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

type jsonlReader struct {
	position
	br      *bufio.Reader
	line    int
	pending []byte // a line read by SkipThrough and not skipped
	pendErr error  // or the record error it met
	hasPend bool
	buf     []byte
}

// readLine returns the next non-blank line and its number. The slice is
// valid until the next call.
func (j *jsonlReader) readLine() (int, []byte, error) {
	if j.hasPend {
		j.hasPend = false
		return j.line, j.pending, j.pendErr
	}
	for {
		b, err := j.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			j.buf = append(j.buf[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) && len(j.buf) <= MaxLineBytes {
				b, err = j.br.ReadSlice('\n')
				j.buf = append(j.buf, b...)
			}
			b = j.buf
			if len(b) > MaxLineBytes {
				for errors.Is(err, bufio.ErrBufferFull) { // discard the rest of the line
					_, err = j.br.ReadSlice('\n')
				}
				j.line++
				if err != nil && err != io.EOF {
					return j.line, nil, err
				}
				return j.line, nil, &RecordError{Line: j.line, Err: fmt.Errorf("the line is longer than %d bytes", MaxLineBytes)}
			}
		}
		if err != nil && err != io.EOF {
			return j.line, nil, err
		}
		if len(b) == 0 && err == io.EOF {
			return j.line, nil, io.EOF
		}
		j.line++
		if t := bytes.TrimSpace(b); len(t) > 0 {
			return j.line, t, nil
		}
		if err == io.EOF {
			return j.line, nil, io.EOF
		}
	}
}

func (j *jsonlReader) Next() (int, localtable.Entity, error) {
	line, b, err := j.readLine()
	if err != nil {
		return line, localtable.Entity{}, err
	}
	e, err := entityjson.Decode(b, false)
	if err != nil {
		return line, e, &RecordError{Line: line, Err: err}
	}
	return line, e, nil
}

func (j *jsonlReader) SkipThrough(through int) (int, error) {
	n := 0
	for {
		line, b, err := j.readLine()
		var re *RecordError
		switch {
		case err == io.EOF:
			return n, nil
		case errors.As(err, &re):
			if line > through {
				j.pending, j.pendErr, j.hasPend = nil, err, true
				return n, nil
			}
			n++
			continue
		case err != nil:
			return n, err
		}
		if line > through {
			j.pending = append(j.pending[:0], b...)
			j.pendErr, j.hasPend = nil, true
			return n, nil
		}
		n++
	}
}
