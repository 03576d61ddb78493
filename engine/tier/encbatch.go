package tier

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// EncodedBatch is a Batch built in its payload form (doc.go "Batch
// payload") one op at a time, for a writer that should not hold every
// op's decoded form at once: each Upsert copies the document into the
// payload, and the caller may drop or reuse it as soon as Upsert returns.
// The payload is kept in chunks (no op spans two), so that it grows
// without being copied; Store.ApplyEncoded writes it as one WAL record.
// Documents whose UpdatedUnixNano is 0 are stamped with the time
// NewEncodedBatch was called. An EncodedBatch is not safe for concurrent
// use.
type EncodedBatch struct {
	chunks [][]byte
	ops    int
	floats int // vector float32s over every op
	size   int // payload bytes in chunks
	stamp  int64
	// applied is the decoded batch ApplyEncoded applied.
	applied *Batch
}

// Encoded-batch chunk sizes: a new chunk holds at least encChunkMin bytes
// and a quarter of the payload so far (so that the unused tail of the
// last chunk is at most about a fifth of the payload), at most
// encChunkMax, and always the op being added.
const (
	encChunkMin = 4 << 10
	encChunkMax = 8 << 20
)

// NewEncodedBatch returns an empty batch.
func NewEncodedBatch() *EncodedBatch { return &EncodedBatch{stamp: nowNano()} }

// Len returns the number of operations.
func (e *EncodedBatch) Len() int { return e.ops }

// Bytes returns the payload size so far (without the leading version
// byte and op count).
func (e *EncodedBatch) Bytes() int { return e.size }

// room returns the chunk an op of at most need bytes is appended to.
func (e *EncodedBatch) room(need int) []byte {
	if n := len(e.chunks); n > 0 {
		if c := e.chunks[n-1]; cap(c)-len(c) >= need {
			return c
		}
	}
	size := min(max(encChunkMin, e.size/4), encChunkMax)
	c := make([]byte, 0, max(size, need))
	e.chunks = append(e.chunks, c)
	return c
}

func (e *EncodedBatch) put(before int, c []byte) {
	e.chunks[len(e.chunks)-1] = c
	e.size += len(c) - before
	e.ops++
}

// Upsert adds an upsert of d. The batch copies what it needs of d.
func (e *EncodedBatch) Upsert(d *Document) {
	c := e.room(opSizeBound(OpUpsert, d))
	before := len(c)
	c = append(c, byte(OpUpsert))
	c = putStr(c, d.ID)
	c = appendDocBody(c, d, e.stamp)
	e.floats += len(d.Vector)
	e.put(before, c)
}

// Delete adds a delete of id.
func (e *EncodedBatch) Delete(id string) {
	c := e.room(1 + binary.MaxVarintLen64 + len(id))
	before := len(c)
	c = append(c, byte(OpDelete))
	c = putStr(c, id)
	e.put(before, c)
}

// pieces returns the payload as the pieces that, concatenated, are the
// encoded batch: the version byte and op count, then the chunks.
func (e *EncodedBatch) pieces() [][]byte {
	hdr := binary.AppendUvarint([]byte{batchFormatVersion}, uint64(e.ops))
	return append([][]byte{hdr}, e.chunks...)
}

// decodeBatchPieces is decodeBatchSlab over a payload given as pieces
// whose concatenation is the encoded batch, where no op spans two pieces
// (EncodedBatch.pieces). With alias (and more than one piece) the
// batch's strings share the pieces' memory (decodeBatchAlias; an
// EncodedBatch never rewrites a byte it has appended): see sharePayload
// for when that is worth it.
func decodeBatchPieces(pieces [][]byte, vecFloats int, alias bool) (*Batch, error) {
	if len(pieces) == 1 {
		return decodeBatchAlias(pieces[0], vecFloats, alias)
	}
	if len(pieces) == 0 {
		return nil, fmt.Errorf("%w: empty payload", errBatch)
	}
	total := 0
	for _, p := range pieces {
		total += len(p)
	}
	d := &decoder{b: pieces[0], carve: vecFloats > 0, alias: alias}
	var slab []float32
	if vecFloats > 0 {
		slab = make([]float32, vecFloats)
		d.slab = slab
	}
	if v := d.byte1("version"); d.err == nil && v != batchFormatVersion {
		return nil, fmt.Errorf("%w: unknown batch format version %d", errBatch, v)
	}
	n64 := d.uvarint("ops")
	if d.err == nil && n64 > uint64(total/2) {
		d.fail("ops count exceeds input")
	}
	n := int(n64)
	next := 1
	b := &Batch{Ops: make([]Op, 0, n)}
	for i := 0; i < n && d.err == nil; i++ {
		for len(d.b) == 0 && next < len(pieces) {
			d.b, next = pieces[next], next+1
		}
		var op Op
		op.Kind = OpKind(d.byte1("op kind"))
		op.Doc.ID = d.str("id")
		switch op.Kind {
		case OpDelete:
		case OpUpsert:
			d.docBody(&op.Doc)
		default:
			d.fail(fmt.Sprintf("unknown op kind %d", op.Kind))
		}
		b.Ops = append(b.Ops, op)
	}
	for d.err == nil && len(d.b) == 0 && next < len(pieces) {
		d.b, next = pieces[next], next+1
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Sprintf("%d trailing bytes", len(d.b)))
	}
	if d.err != nil {
		return nil, d.err
	}
	if d.carve && len(d.slab) == 0 {
		b.slab = slab
	}
	return b, nil
}

// sharePayloadMinBytes is the smallest payload whose decoded strings
// share its memory (sharePayload).
const sharePayloadMinBytes = 64 << 10

// sharePayload reports whether a batch's decoded strings should share its
// payload (size bytes written into chunks of capacity bytes in all)
// instead of being copied: only a large batch without vectors whose
// chunks are at least two thirds full (EncodedBatch grows by chunks of a
// quarter of the payload so far). The kept versions hold the payload alive,
// so a small batch would pin a mostly unused chunk (a 4 KiB chunk for a
// 200-byte upsert), and a batch with vectors would keep the payload's copy
// of every vector beside the decoded one. A large batch of documents (an
// ingest pass) saves a copy of all its text.
func sharePayload(size, capacity, vecFloats int) bool {
	return vecFloats == 0 && size >= sharePayloadMinBytes && 2*capacity <= 3*size
}

// ApplyEncoded is Apply for a batch built in its payload form: it checks
// the batch by decoding it (the decoded copy is what the MemTable
// applies), writes the payload as one WAL record and applies it as one
// epoch. e must not be modified while ApplyEncoded runs.
func (s *Store) ApplyEncoded(e *EncodedBatch) (uint64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	if e == nil || e.ops == 0 {
		return 0, errors.New("tier: empty batch")
	}
	if err := s.manifest.Err(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	if err := s.throttle(); err != nil {
		return 0, err
	}
	pieces := e.pieces()
	capacity := 0
	for _, c := range e.chunks {
		capacity += cap(c)
	}
	db, err := decodeBatchPieces(pieces, e.floats, sharePayload(e.size, capacity, e.floats))
	if err != nil {
		return 0, fmt.Errorf("tier: batch does not decode: %w", err)
	}
	if err := s.validateBatch(db); err != nil {
		return 0, err
	}
	seq, err := s.applyDecoded(pieces, db)
	if err == nil {
		e.applied = db
	}
	return seq, err
}

// Applied returns the ops as ApplyEncoded applied them (timestamps
// stamped), after it succeeded; nil before. The documents are the stored
// versions themselves: read them, never modify them.
func (e *EncodedBatch) Applied() []Op {
	if e.applied == nil {
		return nil
	}
	return e.applied.Ops
}
