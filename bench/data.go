package main

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/localtable/localtable"
)

// The data set: parts partitions of rows entities each, entity i being
// row i%rows of partition i/rows. Every entity has ten properties, one or
// more of every Edm type: localtable stores it in a record of about 250
// bytes, and it is about 520 bytes of JSON on the wire. Age and Score vary so
// that the residual filters select known shares: "Age gt 50" keeps 49% of
// a partition, "Score lt 1.0" 1% of the table.

// shape is the size of a data set.
type shape struct {
	Parts int `json:"partitions"`
	Rows  int `json:"rows_per_partition"`
}

// n is the number of entities.
func (s shape) n() int { return s.Parts * s.Rows }

// pk is the PartitionKey of partition p.
func pk(p int) string { return "p" + pad(p, 3) }

// rk is the RowKey of row r.
func rk(r int) string { return "r" + pad(r, 6) }

// pad formats n in decimal with at least width digits.
func pad(n, width int) string {
	var buf [20]byte
	b := strconv.AppendInt(buf[:0], int64(n), 10)
	for len(b) < width {
		b = append([]byte{'0'}, b...)
	}
	return string(b)
}

// keys returns the keys of entity i.
func (s shape) keys(i int) (string, string) { return pk(i / s.Rows), rk(i % s.Rows) }

// row is an entity as a typed Go value: what an application holds, and
// what the SQLite and bbolt peers store.
type row struct {
	PartitionKey string    `json:"PartitionKey"`
	RowKey       string    `json:"RowKey"`
	Name         string    `json:"Name"`
	Email        string    `json:"Email"`
	Notes        string    `json:"Notes"`
	Age          int32     `json:"Age"`
	Visits       int64     `json:"Visits"`
	Score        float64   `json:"Score"`
	Active       bool      `json:"Active"`
	Joined       time.Time `json:"Joined"`
	ID           guid      `json:"ID"`
	Payload      []byte    `json:"Payload"`
}

// age and score are the filtered properties of entity i.
func age(i int) int32     { return int32(i * 37 % 100) }
func score(i int) float64 { return float64(uint32(i)*2654435761%100000) / 1000 }

// makeRow returns entity i of the data set s.
func (s shape) makeRow(i int) row {
	p, r := s.keys(i)
	var id [16]byte
	binary.BigEndian.PutUint64(id[:8], uint64(i)*0x9E3779B97F4A7C15)
	binary.BigEndian.PutUint64(id[8:], uint64(i))
	return row{
		PartitionKey: p,
		RowKey:       r,
		Name:         "Jonathan Smithson",
		Email:        "jonathan.smithson@contoso.com",
		Notes:        "prefers email; renewal due in the spring quarter",
		Age:          age(i),
		Visits:       int64(i) * 1_000_003,
		Score:        score(i),
		Active:       i%3 != 0,
		Joined:       time.Date(2020, 5, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),
		ID:           guid(id),
		Payload:      payload,
	}
}

// payload is every entity's Edm.Binary value.
var payload = []byte("0123456789abcdef0123456789abcdef")

// templateRow is the entity every write workload writes, under new keys.
func templateRow(pk, rk string) row {
	r := shape{Parts: 1, Rows: 1}.makeRow(0)
	r.PartitionKey, r.RowKey = pk, rk
	r.Age, r.Score = 7, 50 // matches neither residual filter
	return r
}

// props returns r's properties as localtable values.
func (r *row) props() localtable.Properties {
	return localtable.Properties{
		"Name":    localtable.StringValue(r.Name),
		"Email":   localtable.StringValue(r.Email),
		"Notes":   localtable.StringValue(r.Notes),
		"Age":     localtable.Int32Value(r.Age),
		"Visits":  localtable.Int64Value(r.Visits),
		"Score":   localtable.DoubleValue(r.Score),
		"Active":  localtable.BoolValue(r.Active),
		"Joined":  localtable.DateTimeValue(r.Joined),
		"ID":      localtable.GUIDValue(localtable.GUID(r.ID)),
		"Payload": localtable.BinaryValue(r.Payload),
	}
}

// entity returns r as a localtable entity.
func (r *row) entity() localtable.Entity {
	return localtable.Entity{PartitionKey: r.PartitionKey, RowKey: r.RowKey, Properties: r.props()}
}

// matches counts the entities of s that the residual filters select:
// "Age gt 50" in partition p, and "Score lt 1.0" in the table.
func (s shape) ageMatches(p int) int {
	n := 0
	for r := range s.Rows {
		if age(p*s.Rows+r) > 50 {
			n++
		}
	}
	return n
}

func (s shape) scoreMatches() int {
	n := 0
	for i := range s.n() {
		if score(i) < 1.0 {
			n++
		}
	}
	return n
}

// shuffled returns 0..n-1 in a random order fixed by seed.
func shuffled(n int, seed uint64) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

// pick returns n random integers in [0, max), fixed by seed.
func pick(n, max int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x9e37))
	out := make([]int, n)
	for i := range out {
		out[i] = rng.IntN(max)
	}
	return out
}

// guid is a GUID that JSON writes as text, as uuid packages do.
type guid [16]byte

// MarshalText writes g in the 8-4-4-4-12 hex form.
func (g guid) MarshalText() ([]byte, error) { return []byte(localtable.GUID(g).String()), nil }

// UnmarshalText reads the 8-4-4-4-12 hex form.
func (g *guid) UnmarshalText(b []byte) error {
	v, err := localtable.ParseGUID(string(b))
	*g = guid(v)
	return err
}
