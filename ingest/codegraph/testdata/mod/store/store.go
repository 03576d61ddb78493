// Package store is a tiny key-value store.
package store

// Limit caps the number of entries.
var Limit = 10

// Codec encodes values.
type Codec interface {
	Encode(v string) []byte
}

// Raw is the identity codec.
type Raw struct{}

// Encode returns v's bytes.
func (Raw) Encode(v string) []byte { return []byte(v) }

// Header is a record header.
type Header struct {
	Len  int
	Kind string
}

// Store holds encoded records.
type Store struct {
	codec Codec
	recs  [][]byte
	hdr   Header
}

// New returns a store using c.
func New(c Codec) *Store { return &Store{codec: c} }

// Put encodes and stores v.
func (s *Store) Put(v string) bool {
	if len(s.recs) >= Limit {
		return false
	}
	b := s.codec.Encode(v)
	s.hdr.Len = checkLen(b)
	s.recs = append(s.recs, b)
	return true
}

func checkLen(b []byte) int {
	return len(b)
}
