package tableio

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/internal/edmfmt"
)

// Column is a CSV column: a property name and its Edm type.
type Column struct {
	Name string          // the property name
	Kind localtable.Kind // its Edm type
}

// Header returns the column's header text: "Name" for an Edm.String (and
// for the keys), "Name@Edm.Type" otherwise.
func (c Column) Header() string {
	if c.Kind == localtable.KindString {
		return c.Name
	}
	return c.Name + "@" + c.Kind.String()
}

// ParseColumn reads a header field, "Name" or "Name@Edm.Type".
func ParseColumn(h string) (Column, error) {
	name, typ, ok := strings.Cut(strings.TrimSpace(h), "@")
	if name == "" {
		return Column{}, fmt.Errorf("column %q has no name", h)
	}
	if !ok {
		return Column{Name: name, Kind: localtable.KindString}, nil
	}
	k, valid := localtable.ParseKind(typ)
	if !valid || k == localtable.KindNull {
		return Column{}, fmt.Errorf("column %q: %q is not an Edm type (Edm.String, Edm.Int32, Edm.Int64, Edm.Double, Edm.Boolean, Edm.DateTime, Edm.Guid, Edm.Binary)", h, typ)
	}
	return Column{Name: name, Kind: k}, nil
}

// ColumnSet collects the columns that entities need.
type ColumnSet struct {
	seen map[Column]bool
}

// Add records the columns of e's properties.
func (s *ColumnSet) Add(e *localtable.Entity) {
	if s.seen == nil {
		s.seen = make(map[Column]bool)
	}
	for name, v := range e.Properties {
		if !v.IsNull() {
			s.seen[Column{name, v.Kind()}] = true
		}
	}
}

// Columns returns PartitionKey, RowKey, then the columns seen, sorted by
// name and then by type.
func (s *ColumnSet) Columns() []Column {
	cols := make([]Column, 0, len(s.seen)+2)
	for c := range s.seen {
		cols = append(cols, c)
	}
	slices.SortFunc(cols, func(a, b Column) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind))
	})
	return append([]Column{{localtable.PartitionKeyName, localtable.KindString}, {localtable.RowKeyName, localtable.KindString}}, cols...)
}

// CSVWriter writes entities as CSV records under a typed header.
type CSVWriter struct {
	w    *bufio.Writer
	cols []Column
	buf  []byte
}

// NewCSVWriter writes the header of cols to w and returns a writer of
// records in those columns. A property of an entity that has no column
// (by name and type) is not written. A Timestamp column
// ("Timestamp@Edm.DateTime") writes the entity's Timestamp.
func NewCSVWriter(w io.Writer, cols []Column) (*CSVWriter, error) {
	c := &CSVWriter{w: bufio.NewWriterSize(w, 64<<10), cols: cols}
	for i, col := range cols {
		if i > 0 {
			c.buf = append(c.buf, ',')
		}
		c.buf = appendField(c.buf, col.Header(), false)
	}
	c.buf = append(c.buf, '\r', '\n')
	_, err := c.w.Write(c.buf)
	return c, err
}

// Write writes one entity as a record.
func (c *CSVWriter) Write(e *localtable.Entity) error {
	b := c.buf[:0]
	for i, col := range c.cols {
		if i > 0 {
			b = append(b, ',')
		}
		switch col.Name {
		case localtable.PartitionKeyName:
			b = appendField(b, e.PartitionKey, true)
			continue
		case localtable.RowKeyName:
			b = appendField(b, e.RowKey, true)
			continue
		case localtable.TimestampName:
			if !e.Timestamp.IsZero() {
				b = appendField(b, edmfmt.DateTime7(e.Timestamp), false)
			}
			continue
		}
		if v, ok := e.Properties[col.Name]; ok && v.Kind() == col.Kind {
			b = appendField(b, entityjson.FormatValueText(v), true)
		}
	}
	b = append(b, '\r', '\n')
	c.buf = b
	_, err := c.w.Write(b)
	return err
}

// Flush writes what is buffered.
func (c *CSVWriter) Flush() error { return c.w.Flush() }

// appendField appends s as a CSV field, quoted when it must be, or when
// it is empty and present (an empty unquoted field is an absent value).
func appendField(b []byte, s string, present bool) []byte {
	if !(s == "" && present) && !strings.ContainsAny(s, ",\"\r\n") && !strings.HasPrefix(s, " ") && !strings.HasSuffix(s, " ") {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// field is one CSV field as read: its text and whether it was quoted.
type field struct {
	text   string
	quoted bool
}

type csvReader struct {
	position
	br      *bufio.Reader
	line    int // lines read so far
	cols    []Column
	pending *pendingRecord
	sb      strings.Builder
}

type pendingRecord struct {
	line   int
	fields []field
	err    error
}

func newCSVReader(br *bufio.Reader, pos position) (*csvReader, error) {
	c := &csvReader{br: br, position: pos}
	line, fields, err := c.record()
	if err == io.EOF {
		return nil, errors.New("the CSV file is empty: it needs a header")
	}
	if err != nil {
		return nil, err
	}
	seen := map[Column]bool{}
	var pk, rk bool
	for _, f := range fields {
		col, err := ParseColumn(f.text)
		if err != nil {
			return nil, &RecordError{Line: line, Err: err}
		}
		if seen[col] {
			return nil, &RecordError{Line: line, Err: fmt.Errorf("column %q appears twice", f.text)}
		}
		seen[col] = true
		switch col.Name {
		case localtable.PartitionKeyName, localtable.RowKeyName:
			if col.Kind != localtable.KindString {
				return nil, &RecordError{Line: line, Err: fmt.Errorf("column %q: the keys are Edm.String", f.text)}
			}
			pk = pk || col.Name == localtable.PartitionKeyName
			rk = rk || col.Name == localtable.RowKeyName
		}
		c.cols = append(c.cols, col)
	}
	if !pk || !rk {
		return nil, &RecordError{Line: line, Err: errors.New("the header needs PartitionKey and RowKey columns")}
	}
	return c, nil
}

// Columns returns the columns the header named.
func (c *csvReader) Columns() []Column { return c.cols }

// record reads one record, skipping blank lines, and returns the line it
// starts on.
func (c *csvReader) record() (int, []field, error) {
	if p := c.pending; p != nil {
		c.pending = nil
		return p.line, p.fields, p.err
	}
	for {
		start := c.line + 1
		fields, err := c.fields()
		if err != nil {
			return start, nil, err
		}
		if len(fields) == 1 && fields[0].text == "" && !fields[0].quoted {
			continue // a blank line
		}
		return start, fields, nil
	}
}

// fields reads the fields of one record (RFC 4180, with CRLF or LF line
// ends and quoted fields spanning lines).
func (c *csvReader) fields() ([]field, error) {
	var out []field
	size := 0
	for {
		b, err := c.br.ReadByte()
		if err == io.EOF && len(out) == 0 {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		c.sb.Reset()
		f := field{}
		if err == nil && b == '"' {
			f.quoted = true
			for {
				b, err = c.br.ReadByte()
				if err == io.EOF {
					c.line++
					return nil, &RecordError{Line: c.line, Err: errors.New("a quoted field is not closed before the end of the file")}
				}
				if err != nil {
					return nil, err
				}
				if b == '"' {
					nb, err2 := c.br.ReadByte()
					if err2 == nil && nb == '"' {
						c.sb.WriteByte('"')
						continue
					}
					if err2 == nil {
						c.br.UnreadByte()
					}
					b, err = c.br.ReadByte() // the delimiter after the closing quote
					break
				}
				if b == '\n' {
					c.line++
				}
				c.sb.WriteByte(b)
				if size += 1; size > MaxLineBytes {
					return nil, c.discardLine(errors.New("the record is too long"))
				}
			}
			if err == nil && b == '\r' {
				if nb, err2 := c.br.ReadByte(); err2 == nil && nb != '\n' {
					c.br.UnreadByte()
				} else if err2 == nil {
					b = '\n'
				}
			}
			if err == nil && b != ',' && b != '\n' {
				return nil, c.discardLine(fmt.Errorf("%q after a closing quote: a field with quotes must be quoted whole", b))
			}
		} else {
			for err == nil && b != ',' && b != '\n' {
				c.sb.WriteByte(b)
				if size += 1; size > MaxLineBytes {
					return nil, c.discardLine(errors.New("the record is too long"))
				}
				b, err = c.br.ReadByte()
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
		}
		f.text = c.sb.String()
		if !f.quoted && b == '\n' {
			f.text = strings.TrimSuffix(f.text, "\r")
		}
		out = append(out, f)
		if err == io.EOF || b == '\n' {
			c.line++
			return out, nil
		}
	}
}

// discardLine reads to the end of the line and returns why the record
// failed, as a RecordError.
func (c *csvReader) discardLine(why error) error {
	for {
		b, err := c.br.ReadByte()
		if err != nil || b == '\n' {
			break
		}
	}
	c.line++
	return &RecordError{Line: c.line, Err: why}
}

func (c *csvReader) Next() (int, localtable.Entity, error) {
	line, fields, err := c.record()
	if err != nil {
		return line, localtable.Entity{}, err
	}
	e, err := c.entity(fields)
	if err != nil {
		return line, e, &RecordError{Line: line, Err: err}
	}
	return line, e, nil
}

func (c *csvReader) entity(fields []field) (localtable.Entity, error) {
	var e localtable.Entity
	if len(fields) != len(c.cols) {
		return e, fmt.Errorf("%d fields, but the header has %d columns", len(fields), len(c.cols))
	}
	for i, col := range c.cols {
		f := fields[i]
		switch col.Name {
		case localtable.PartitionKeyName:
			e.PartitionKey = f.text
			continue
		case localtable.RowKeyName:
			e.RowKey = f.text
			continue
		case localtable.TimestampName:
			continue // set by the store
		}
		if f.text == "" && !f.quoted {
			continue
		}
		v, err := entityjson.ParseValueText(col.Name, f.text, col.Kind)
		if err != nil {
			return e, fmt.Errorf("column %s: %w", col.Header(), err)
		}
		if _, dup := e.Properties[col.Name]; dup {
			return e, fmt.Errorf("property %s has values in two columns", col.Name)
		}
		e.Set(col.Name, v)
	}
	return e, nil
}

func (c *csvReader) SkipThrough(through int) (int, error) {
	n := 0
	for {
		line, fields, err := c.record()
		var re *RecordError
		switch {
		case err == io.EOF:
			return n, nil
		case err != nil && !errors.As(err, &re):
			return n, err
		}
		if line > through {
			c.pending = &pendingRecord{line, fields, err}
			return n, nil
		}
		n++
	}
}
