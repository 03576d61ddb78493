package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier/wal"
)

// ErrBatchTooLarge is returned (wrapped, with the sizes) by Upsert for a
// batch whose WAL record would exceed MaxBatchBytes. The batch is one
// record and one epoch, so it is refused whole, before any embedding or
// write; split it into several Upsert calls.
var ErrBatchTooLarge = errors.New("engine: write batch too large")

// MaxBatchBytes is the largest encoded write batch: one WAL record
// (wal.MaxPayloadBytes, 64 MiB).
const MaxBatchBytes = wal.MaxPayloadBytes

// uvarintMax bounds the bytes of one length prefix.
const uvarintMax = 10

// batchBytes returns an upper bound of the encoded size of upserting docs
// (tier batch payload: doc.go "Batch payload"), counting embedDim float32s
// for each document the live embedder will give a vector (embedDim 0: no
// embedding). Metadata values are counted as Value.MarshalJSON writes them
// (shortest numbers, strings escaped at most as the bound below), without
// encoding them.
func batchBytes(docs []contract.Document, embedDim int) int64 {
	n := int64(1 + uvarintMax)
	for i := range docs {
		n += docBytes(&docs[i], embedDim)
	}
	return n
}

// docBytes is batchBytes' bound for one document.
func docBytes(d *contract.Document, embedDim int) int64 {
	str := func(s string) int64 { return int64(len(s)) + uvarintMax }
	n := 1 + str(d.ID) + str(d.Content) + str(d.SourceURI) + str(d.Namespace) + 1
	n += uvarintMax
	for _, a := range d.ACL {
		n += str(a)
	}
	n += uvarintMax
	for k, v := range d.Metadata {
		n += str(k) + uvarintMax + valueBytes(v)
	}
	nv := len(d.Vector)
	if nv == 0 && embedDim > 0 && strings.TrimSpace(d.Content) != "" {
		nv = embedDim
	}
	n += uvarintMax + 4*int64(nv) + 32 + uvarintMax
	n += int64(len(metaVerifiable)) + 2*uvarintMax + 8 // VerifiableSources' mark
	return n
}

// valueBytes bounds the length of v's stored JSON form.
func valueBytes(v contract.Value) int64 {
	switch v.Kind() {
	case contract.KindString:
		s, _ := v.Str()
		return jsonStringBytes(s)
	case contract.KindNumber:
		return 32 // AppendNumber writes at most 24 bytes
	case contract.KindBool:
		return 5
	case contract.KindStrings:
		ss, _ := v.List()
		n := int64(2)
		for _, s := range ss {
			n += jsonStringBytes(s) + 1
		}
		return n
	}
	return 0
}

// jsonStringBytes bounds the JSON string form of s without HTML
// escaping: quotes, '"' and '\\' doubled, control bytes as \u00XX, and
// U+2028/U+2029 (3 bytes, lead byte 0xE2) as 6-byte escapes.
func jsonStringBytes(s string) int64 {
	n := int64(2 + len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			n++
		case c < 0x20:
			n += 5
		case c == 0xE2:
			n += 3
		}
	}
	return n
}

// checkBatchSize refuses docs when their WAL record could exceed
// MaxBatchBytes.
func (c *Collection) checkBatchSize(docs []contract.Document) error {
	dim := 0
	if c.Embedder() != nil {
		dim = c.o.Dim
	}
	if n := batchBytes(docs, dim); n > MaxBatchBytes {
		return tooLarge(len(docs), n)
	}
	return nil
}

// tooLarge is the ErrBatchTooLarge of n documents bounded at size bytes.
func tooLarge(n int, size int64) error {
	return fmt.Errorf("%w: %d documents encode to up to %d bytes, over the limit of %d bytes per batch (one WAL record); split the batch",
		ErrBatchTooLarge, n, size, MaxBatchBytes)
}
