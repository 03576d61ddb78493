package tier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zeebo/blake3"
)

// Trust is a document's provenance class (DESIGN.md "Data model").
type Trust uint8

const (
	TrustUnset Trust = iota
	TrustAuthoritative
	TrustDerived
	TrustExternalUnverified
)

// Document is one chunk version as the tier stores it.
//
// It is a deliberately simple storage form: engine/contract owns the
// public Document and the engine converts at its boundary. Simplifications:
// Metadata values are strings (the contract allows string | number | bool
// | string list; the engine stores each value's JSON form), VersionHash is
// supplied by the caller (BLAKE3-256 of the source bytes, computed at
// ingest).
type Document struct {
	ID        string
	Content   string
	SourceURI string
	// Vector is nil or exactly Options.Dim float32s.
	Vector   []float32
	Metadata map[string]string
	// EncodedMetadata, when not nil, stands for Metadata in a Batch: the
	// metadata already in the batch payload's form (AppendMetadataCount,
	// then AppendMetadataEntry per key, keys sorted and distinct), written
	// as is, so that a writer need not build the map only for it to be
	// encoded. Apply checks it (it decodes the payload before writing it);
	// stored documents never have it (their Metadata is decoded from the
	// payload).
	EncodedMetadata []byte
	Namespace       string
	Trust           Trust
	ACL             []string
	VersionHash     [32]byte
	// UpdatedUnixNano is the caller's timestamp for this version
	// (nanoseconds since the Unix epoch); 0 means "stamp at Apply".
	UpdatedUnixNano int64

	// lazy, for a row of a segment opened with a RangeFetcher, is the
	// text block holding the content (row lazyRow of it); see Text.
	lazy    *textBlock
	lazyRow int32
	// derived, for a row of a format version 5 segment that does not
	// store its version hash (it is BLAKE3-256 of the content), is where
	// Hash keeps the hash once computed; VersionHash is then zero.
	derived *atomic.Pointer[[32]byte]
}

// Hash returns the document's version hash. For most documents that is
// VersionHash. A row of a segment that does not store it (doc.go
// "Warm segment file", format version 5: the hash is BLAKE3-256 of the
// content) has it computed from Text on the first call and kept; the
// error is then Text's. Readers of stored documents use Hash, never
// VersionHash.
func (d *Document) Hash() ([32]byte, error) {
	p := d.derived
	if p == nil {
		return d.VersionHash, nil
	}
	if h := p.Load(); h != nil {
		return *h, nil
	}
	text, err := d.Text()
	if err != nil {
		return [32]byte{}, err
	}
	h := contentHash(text)
	p.CompareAndSwap(nil, &h)
	return h, nil
}

// HashDerived reports whether d's version hash is BLAKE3-256 of its
// content by construction (a row that does not store it), without
// computing anything.
func (d *Document) HashDerived() bool { return d.derived != nil }

// contentHash is BLAKE3-256 of s.
func contentHash(s string) [32]byte {
	return blake3.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// OpKind is the kind of one batch operation.
type OpKind uint8

const (
	OpUpsert OpKind = 1
	OpDelete OpKind = 2
)

// Op is one operation of a batch.
type Op struct {
	Kind OpKind
	Doc  Document // for OpDelete only Doc.ID is used
}

// Batch is a set of operations applied atomically under one epoch: one
// batch = one WAL record = one epoch. Operations apply in order, so a later
// op on the same id within the batch wins.
type Batch struct {
	Ops []Op
	// slab, set by decodeBatchSlab, holds every vector of Ops, in op
	// order, each Doc.Vector a view of it: the MemTable may keep it as
	// its rows instead of copying them.
	slab []float32
}

// Upsert adds an upsert of doc (the Batch keeps doc's slices and map; do
// not modify them until Apply returns).
func (b *Batch) Upsert(doc Document) { b.Ops = append(b.Ops, Op{Kind: OpUpsert, Doc: doc}) }

// Delete adds a delete of id.
func (b *Batch) Delete(id string) { b.Ops = append(b.Ops, Op{Kind: OpDelete, Doc: Document{ID: id}}) }

// Len returns the number of operations.
func (b *Batch) Len() int { return len(b.Ops) }

// batchFormatVersion is the version byte leading every encoded batch.
const batchFormatVersion = 1

var errBatch = errors.New("tier: malformed batch encoding")

func putStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// encodeBatch serialises b (see doc.go "Batch payload").
func encodeBatch(b *Batch, stamp int64) []byte {
	dst := make([]byte, 0, batchSizeBound(b))
	dst = append(dst, batchFormatVersion)
	dst = binary.AppendUvarint(dst, uint64(len(b.Ops)))
	for i := range b.Ops {
		op := &b.Ops[i]
		dst = append(dst, byte(op.Kind))
		d := &op.Doc
		dst = putStr(dst, d.ID)
		if op.Kind != OpUpsert {
			continue
		}
		dst = appendDocBody(dst, d, stamp)
	}
	return dst
}

// batchSizeBound is an upper bound of encodeBatch's output, so that it
// allocates once.
func batchSizeBound(b *Batch) int {
	n := 1 + binary.MaxVarintLen64
	for i := range b.Ops {
		n += opSizeBound(b.Ops[i].Kind, &b.Ops[i].Doc)
	}
	return n
}

// opSizeBound is an upper bound of one op's encoded size.
func opSizeBound(kind OpKind, d *Document) int {
	const uv = binary.MaxVarintLen64
	n := 1 + uv + len(d.ID)
	if kind != OpUpsert {
		return n
	}
	n += 3*uv + len(d.Content) + len(d.SourceURI) + len(d.Namespace) + 1 + uv
	for _, a := range d.ACL {
		n += uv + len(a)
	}
	n += uv + len(d.EncodedMetadata)
	for k, v := range d.Metadata {
		n += 2*uv + len(k) + len(v)
	}
	n += uv + 4*len(d.Vector) + len(d.VersionHash) + uv
	return n
}

// appendDocBody appends the upsert body of d (doc.go "Batch payload"),
// stamping a zero timestamp with stamp.
func appendDocBody(dst []byte, d *Document, stamp int64) []byte {
	dst = putStr(dst, d.Content)
	dst = appendDocFields(dst, d)
	dst = append(dst, d.VersionHash[:]...)
	ts := d.UpdatedUnixNano
	if ts == 0 {
		ts = stamp
	}
	dst = binary.AppendVarint(dst, ts)
	return dst
}

// appendDocFields appends the part of an upsert body between the content
// and the version hash: source uri, namespace, trust, acl, metadata,
// vector.
func appendDocFields(dst []byte, d *Document) []byte {
	dst = putStr(dst, d.SourceURI)
	dst = putStr(dst, d.Namespace)
	dst = append(dst, byte(d.Trust))
	dst = binary.AppendUvarint(dst, uint64(len(d.ACL)))
	for _, a := range d.ACL {
		dst = putStr(dst, a)
	}
	if d.EncodedMetadata != nil {
		dst = append(dst, d.EncodedMetadata...)
	} else {
		dst = AppendMetadataCount(dst, len(d.Metadata))
		for _, k := range sortedKeys(d.Metadata) {
			dst = AppendMetadataEntry(dst, k, d.Metadata[k])
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(d.Vector)))
	for _, v := range d.Vector {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
	}
	return dst
}

// docFieldsSize is the number of bytes appendDocFields appends for d.
func docFieldsSize(d *Document) int {
	n := strSize(d.SourceURI) + strSize(d.Namespace) + 1 + uvarintSize(uint64(len(d.ACL)))
	for _, a := range d.ACL {
		n += strSize(a)
	}
	if d.EncodedMetadata != nil {
		n += len(d.EncodedMetadata)
	} else {
		n += uvarintSize(uint64(len(d.Metadata)))
		for k, v := range d.Metadata {
			n += strSize(k) + strSize(v)
		}
	}
	return n + uvarintSize(uint64(len(d.Vector))) + 4*len(d.Vector)
}

// strSize is the number of bytes putStr appends for s.
func strSize(s string) int { return uvarintSize(uint64(len(s))) + len(s) }

// uvarintSize is the length of v's uvarint encoding.
func uvarintSize(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// AppendMetadataCount appends the metadata count n of an upsert body
// (Document.EncodedMetadata starts with it).
func AppendMetadataCount(dst []byte, n int) []byte { return binary.AppendUvarint(dst, uint64(n)) }

// AppendMetadataEntry appends one metadata entry of an upsert body: key
// and value (the value's stored form, as in Document.Metadata). Entries go
// in ascending key order.
func AppendMetadataEntry[V string | []byte](dst []byte, key string, value V) []byte {
	dst = putStr(dst, key)
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return append(dst, value...)
}

type decoder struct {
	b   []byte
	err error
	// slab is the unused part of the float32s the vectors are decoded
	// into (decodeBatchSlab); a vector that does not fit gets its own.
	slab  []float32
	carve bool // every vector so far came from slab
	// alias makes str return strings that share b's memory instead of
	// copies. Only for buffers nobody writes to again (a segment's decoded
	// doc store, a batch's payload once encoded): the strings keep the
	// buffer alive.
	alias bool
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errBatch, what)
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail(what)
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) str(what string) string {
	b := d.bytes(d.uvarint(what), what)
	if d.alias && len(b) > 0 {
		return unsafe.String(&b[0], len(b))
	}
	return string(b)
}

func (d *decoder) byte1(what string) byte {
	b := d.bytes(1, what)
	if b == nil {
		return 0
	}
	return b[0]
}

// count reads a length and bounds it by the bytes left (each element
// takes at least minBytes), so hostile input cannot force huge allocations.
func (d *decoder) count(minBytes int, what string) int {
	n := d.uvarint(what)
	if d.err == nil && n > uint64(len(d.b)/minBytes) {
		d.fail(what + " count exceeds input")
		return 0
	}
	return int(n)
}

// docBody reads an upsert body (the inverse of appendDocBody) into doc.
func (d *decoder) docBody(doc *Document) {
	doc.Content = d.str("content")
	d.docFields(doc)
	copy(doc.VersionHash[:], d.bytes(32, "version hash"))
	doc.UpdatedUnixNano = d.varint("timestamp")
}

// docFields reads what appendDocFields wrote into doc.
func (d *decoder) docFields(doc *Document) {
	doc.SourceURI = d.str("source uri")
	doc.Namespace = d.str("namespace")
	doc.Trust = Trust(d.byte1("trust"))
	if na := d.count(1, "acl"); na > 0 {
		doc.ACL = make([]string, na)
		for j := range doc.ACL {
			doc.ACL[j] = d.str("acl")
		}
	}
	if nm := d.count(2, "metadata"); nm > 0 {
		doc.Metadata = make(map[string]string, nm)
		for j := 0; j < nm; j++ {
			k := d.str("metadata key")
			doc.Metadata[k] = d.str("metadata value")
		}
	}
	if nv := d.count(4, "vector"); nv > 0 {
		raw := d.bytes(uint64(nv)*4, "vector")
		if raw != nil {
			if nv <= len(d.slab) {
				doc.Vector, d.slab = d.slab[:nv:nv], d.slab[nv:]
			} else {
				doc.Vector, d.carve = make([]float32, nv), false
			}
			for j := range doc.Vector {
				doc.Vector[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
			}
		}
	}
}

// decodeBatch parses an encoded batch. Errors wrap errBatch.
func decodeBatch(p []byte) (*Batch, error) { return decodeBatchSlab(p, 0) }

// decodeBatchSlab is decodeBatch with the vectors decoded into one slab
// of vecFloats float32s (the batch's total, known to the writer; a hint
// that bounds the allocation, not a trusted count): when they fill it
// exactly, the batch carries it (Batch.slab).
func decodeBatchSlab(p []byte, vecFloats int) (*Batch, error) {
	return decodeBatchAlias(p, vecFloats, false)
}

// decodeBatchAlias is decodeBatchSlab whose strings, with alias set,
// share p's memory: only for a payload nobody writes to again (a batch
// encoded for Apply), and the documents then keep all of p alive.
func decodeBatchAlias(p []byte, vecFloats int, alias bool) (*Batch, error) {
	d := &decoder{b: p, carve: vecFloats > 0, alias: alias}
	var slab []float32
	if vecFloats > 0 {
		slab = make([]float32, vecFloats)
		d.slab = slab
	}
	if v := d.byte1("version"); d.err == nil && v != batchFormatVersion {
		return nil, fmt.Errorf("%w: unknown batch format version %d", errBatch, v)
	}
	n := d.count(2, "ops")
	b := &Batch{Ops: make([]Op, 0, n)}
	for i := 0; i < n && d.err == nil; i++ {
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

func nowNano() int64 { return time.Now().UnixNano() }
