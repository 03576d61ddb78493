package tier

import (
	"container/heap"
	"context"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"math"
	"sync"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/internal/cancel"
)

// Metric is the vector distance the store ranks by (base.Metric, shared
// by every package; its numeric value is the byte written into a warm
// segment's meta section). Hits carry a distance where smaller is better:
// L2 → squared Euclidean distance, IP → −⟨q,x⟩, Cosine → 1 − cos(q,x)
// (vectors are normalised at insert and query).
type Metric = base.Metric

// The metrics.
const (
	L2     = base.L2
	IP     = base.IP
	Cosine = base.Cosine
)

// epochLive is e_death of a version nobody has ended yet.
const epochLive = math.MaxUint64

// version is one stored chunk version, live in [birth, death).
type version struct {
	doc   *Document
	birth uint64
	death uint64
	prev  int32 // older version of the same id, or -1
	row   int32 // vector row in vecs, or -1
}

func (v *version) visibleAt(e uint64) bool { return v.birth <= e && e < v.death }

// LexicalIndexer is the hook for the MemTable's lexical (BM25) side (the
// engine's implementation feeds an engine/bm25 Builder). Add is called under the
// MemTable's write lock for every new version, with its version number
// (dense, from 0); a lexical search must keep only the version numbers for
// which Snapshot.Visible reports true, during candidate generation.
type LexicalIndexer interface {
	Add(version uint32, doc *Document)
}

// LexicalBatchIndexer is optionally implemented by a LexicalIndexer: the
// MemTable then calls AddBatch once per applied batch, under its write
// lock, with the batch's new versions (ascending) and their documents,
// instead of Add for each. The effect must be that of those Add calls in
// order; an implementation may analyse the documents concurrently.
type LexicalBatchIndexer interface {
	LexicalIndexer
	AddBatch(versions []uint32, docs []*Document)
}

// LexicalSegmentBuilder builds the BM25 section of a warm segment (the
// hook's side of warm lexical search; Options.LexicalSegments). The tier
// calls BuildLexical at every flush and compaction with the segment's
// documents in row order; the returned bytes (engine/bm25 WriteTo output
// over those rows, local doc id = row) are stored as the segment's BM25
// section, and handed back mapped by Snapshot.WarmSegments. It may be
// called concurrently (compaction runs beside writes) and must not call
// into the Store.
type LexicalSegmentBuilder interface {
	BuildLexical(docs []*Document) ([]byte, error)
}

// LexicalFlusher is optionally implemented by a MemTable's LexicalIndexer
// (with Options.LexicalSegments set): at flush the tier calls FlushLexical
// with the flushed versions' numbers, ascending (row r = versions[r]),
// instead of LexicalSegmentBuilder.BuildLexical, so the section is derived
// from the index already built (e.g. bm25.Merge dropping the dead
// versions) rather than by re-analysing every document while writes wait.
type LexicalFlusher interface {
	FlushLexical(versions []uint32) ([]byte, error)
}

// LexicalMerger is optionally implemented by Options.LexicalSegments: at
// compaction the tier calls MergeLexical with each input segment's BM25
// section (their file paths, for error messages) and the rows each drops;
// the output's rows are the inputs' kept rows in order (input 0 first),
// the compacted segment's row order. Without it, or when an input has no
// section, compaction calls BuildLexical.
type LexicalMerger interface {
	MergeLexical(sections [][]byte, paths []string, deleted []*roaring.Bitmap) ([]byte, error)
}

// memTable is the hot tier: every version of every document applied since
// the last flush, exact float32 vectors in one row-major arena searched by
// brute force. Versions are never removed while the MemTable lives; a
// flush replaces the whole MemTable.
type memTable struct {
	dim    int
	metric Metric

	mu       sync.RWMutex
	versions []version
	// The vector rows, in row order: the kept chunks, then vecs. A batch
	// decoded into one slab (Batch.slab) of at least keepSlabBytes, in a
	// collection that stores vectors as given (not Cosine), becomes a
	// chunk as it is, its documents' vectors views of it; other rows are
	// copied into vecs.
	chunks   []vecChunk
	vecs     []float32 // rows × dim after the chunks
	vecsRow0 int       // the row of vecs[0]
	rowVer   []int32   // row → version index
	latest   map[string]int32
	lexical  LexicalIndexer
	bytes    int64

	skipTombstone bool // mutation-check hook (Options.TestingSkipTombstone)
	// live caches the versions visible at the last epoch asked (liveRows).
	live liveCache
}

func newMemTable(dim int, metric Metric, lex LexicalIndexer) *memTable {
	return &memTable{dim: dim, metric: metric, latest: map[string]int32{}, lexical: lex}
}

// vecChunk is rows row0.. of the MemTable's vectors, row-major.
type vecChunk struct {
	vecs []float32
	row0 int
}

// keepSlabBytes is the least size of a batch's vector slab that the
// MemTable keeps as a chunk rather than copying.
const keepSlabBytes = 64 << 10

// apply applies b at epoch e. The caller guarantees epochs are applied in
// increasing order and e is not yet visible to readers. b becomes the
// MemTable's (a batch decoded for it, modified by no one after): its
// documents are the stored versions, its vector slab may become rows.
func (m *memTable) apply(b *Batch, e uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	nv := 0
	for i := range b.Ops {
		nv += len(b.Ops[i].Doc.Vector)
	}
	keep := m.metric != Cosine && nv > 0 && len(b.slab) == nv && 4*nv >= keepSlabBytes
	if keep {
		// The rows so far end the open slab; the batch's slab follows.
		if len(m.vecs) > 0 {
			m.chunks = append(m.chunks, vecChunk{vecs: m.vecs, row0: m.vecsRow0})
			m.vecs = nil
		}
		m.chunks = append(m.chunks, vecChunk{vecs: b.slab, row0: len(m.rowVer)})
		m.vecsRow0 = len(m.rowVer) + nv/m.dim
	} else if free := cap(m.vecs) - len(m.vecs); nv > free {
		// The open slab becomes a chunk and a new one, at least as large,
		// takes this batch: nothing is copied (growing one slab would
		// copy every row so far, and fault in and clear twice its size).
		if len(m.vecs) > 0 {
			m.chunks = append(m.chunks, vecChunk{vecs: m.vecs, row0: m.vecsRow0})
		}
		m.vecs = make([]float32, 0, max(nv, len(m.vecs)))
		m.vecsRow0 = len(m.rowVer)
	}
	// The same for the version list (at least doubling, as append does).
	if free := cap(m.versions) - len(m.versions); len(b.Ops) > free {
		m.versions = slices.Grow(m.versions, max(len(b.Ops), len(m.versions)))
	}
	// And the id map, made once at its new size for a large batch.
	m.latest = base.GrowMap(m.latest, len(b.Ops))
	// A batch-capable lexical index takes the batch's new versions in
	// one call, after the loop (same effect as Add per version, in order).
	bl, _ := m.lexical.(LexicalBatchIndexer)
	var bvers []uint32
	var bdocs []*Document
	if bl != nil {
		bvers, bdocs = make([]uint32, 0, len(b.Ops)), make([]*Document, 0, len(b.Ops))
	}
	for i := range b.Ops {
		op := &b.Ops[i]
		id := op.Doc.ID
		prev, had := m.latest[id]
		if had && m.versions[prev].death == epochLive && !m.skipTombstone {
			// The tombstone: the old version ends in the same step the
			// new one starts (or, for a delete, just ends).
			m.versions[prev].death = e
		}
		if op.Kind != OpUpsert {
			continue
		}
		// The version keeps the batch's own document (the batch is the
		// MemTable's: see apply), not a copy of it.
		doc := &op.Doc
		v := version{doc: doc, birth: e, death: epochLive, prev: -1, row: -1}
		if had {
			v.prev = prev
		}
		if doc.Vector != nil {
			v.row = int32(len(m.rowVer))
			if !keep { // the slab has room for the batch's vectors (above)
				n := len(m.vecs)
				m.vecs = m.vecs[:n+len(doc.Vector)]
				if m.metric == Cosine {
					base.UnitVector(m.vecs[n:], doc.Vector)
				} else {
					copy(m.vecs[n:], doc.Vector)
				}
			}
			m.rowVer = append(m.rowVer, int32(len(m.versions)))
		}
		idx := int32(len(m.versions))
		m.versions = append(m.versions, v)
		m.latest[id] = idx
		m.bytes += int64(len(doc.Content) + len(doc.ID) + 4*len(doc.Vector) + 64)
		if bl != nil {
			bvers, bdocs = append(bvers, uint32(idx)), append(bdocs, doc)
		} else if m.lexical != nil {
			m.lexical.Add(uint32(idx), doc)
		}
	}
	if len(bdocs) > 0 {
		bl.AddBatch(bvers, bdocs)
	}
}

// get returns the version of id visible at e.
func (m *memTable) get(id string, e uint64) (*version, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	idx, ok := m.latest[id]
	for ok && idx >= 0 {
		v := &m.versions[idx]
		if v.visibleAt(e) {
			vv := *v
			return &vv, true
		}
		idx = v.prev
	}
	return nil, false
}

// Hit is one search result.
type Hit struct {
	Doc *Document // shared, read-only
	// Epoch is the version's e_birth.
	Epoch uint64
	// Distance: smaller is better (see Metric).
	Distance float32
}

type hitHeap []Hit // max-heap on Distance: the worst kept hit on top

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return h[i].Distance > h[j].Distance }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any          { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

const scanBlockRows = 512

// search returns the k nearest versions visible at e that pass filter
// (nil: all), nearest first. Visibility and the filter are checked for
// every row before it can enter the top-k heap, so stale or filtered rows
// never displace live ones. q must have len dim. The scan looks at ctx
// before every block of scanBlockRows rows; when it finds ctx done it
// returns the k nearest of the rows scanned so far and ctx.Err().
func (m *memTable) search(ctx context.Context, q []float32, k int, e uint64, filter func(*Document) bool) ([]Hit, error) {
	if k <= 0 {
		return nil, nil
	}
	done := ctx.Done()
	var cerr error
	if m.metric == Cosine {
		q = base.UnitVector(nil, q)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]float32, scanBlockRows)
	h := make(hitHeap, 0, k+1)
	chunks := m.chunks
	if len(m.vecs) > 0 {
		chunks = append(chunks[:len(chunks):len(chunks)], vecChunk{vecs: m.vecs, row0: m.vecsRow0})
	}
scan:
	for _, c := range chunks {
		rows := len(c.vecs) / m.dim
		for r0 := 0; r0 < rows; r0 += scanBlockRows {
			if cancel.Done(done) {
				cerr = ctx.Err()
				break scan
			}
			n := min(scanBlockRows, rows-r0)
			m.scanBlock(q, c.vecs[r0*m.dim:(r0+n)*m.dim], out[:n], c.row0+r0, k, e, filter, &h)
		}
	}
	res := make([]Hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		res[i] = heap.Pop(&h).(Hit)
	}
	return res, cerr
}

// scanBlock ranks the rows row0.. held in block (len(out) rows) into h,
// the k nearest so far, keeping only versions visible at e that pass
// filter.
func (m *memTable) scanBlock(q, block, out []float32, row0, k int, e uint64, filter func(*Document) bool, h *hitHeap) {
	if m.metric == L2 {
		asm.L2SqBatch(q, block, out)
	} else {
		asm.DotBatch(q, block, out)
	}
	for i := range out {
		v := &m.versions[m.rowVer[row0+i]]
		if !v.visibleAt(e) {
			continue
		}
		d := out[i]
		switch m.metric {
		case IP:
			d = -d
		case Cosine:
			d = 1 - d
		}
		if len(*h) == k && d >= (*h)[0].Distance {
			continue
		}
		if filter != nil && !filter(v.doc) {
			continue
		}
		heap.Push(h, Hit{Doc: v.doc, Epoch: v.birth, Distance: d})
		if len(*h) > k {
			heap.Pop(h)
		}
	}
}

// ctxErr reports whether err is ctx's own error: the search was cut short
// by ctx, it did not fail.
func ctxErr(ctx context.Context, err error) bool {
	return err != nil && err == ctx.Err()
}

// visible reports whether version number idx is live at e.
func (m *memTable) visible(idx uint32, e uint64) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return int(idx) < len(m.versions) && m.versions[idx].visibleAt(e)
}

// liveCount returns the number of ids with a version visible at e.
func (m *memTable) liveIDs(e uint64) []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var ids []string
	for id, idx := range m.latest {
		for i := idx; i >= 0; i = m.versions[i].prev {
			if m.versions[i].visibleAt(e) {
				ids = append(ids, id)
				break
			}
		}
	}
	return ids
}

// liveDocs returns the versions visible at e, one per id (unordered).
func (m *memTable) liveDocs(e uint64) []*Document {
	m.mu.RLock()
	defer m.mu.RUnlock()
	docs := make([]*Document, 0, len(m.latest))
	for _, idx := range m.latest {
		for i := idx; i >= 0; i = m.versions[i].prev {
			if m.versions[i].visibleAt(e) {
				docs = append(docs, m.versions[i].doc)
				break
			}
		}
	}
	return docs
}

// versionCount returns the number of versions (live or dead).
func (m *memTable) versionCount() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.versions)
}

// kill ends id's newest version at e if it is live, and reports whether
// it was (the tombstone step for a frozen MemTable; see applyLocked).
func (m *memTable) kill(id string, e uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	idx, ok := m.latest[id]
	if !ok || m.versions[idx].death != epochLive {
		return false
	}
	m.versions[idx].death = e
	return true
}

// deathOf returns version idx's e_death (epochLive while live).
func (m *memTable) deathOf(idx int32) uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.versions[idx].death
}
