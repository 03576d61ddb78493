package engine

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/catalog"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/engine/verify"
	"github.com/stratasearch/strata/internal/base"
)

// verInfo is what the engine keeps per row (catalog.Row); a MemTable
// version's is indexed by the tier's dense version number, which is also
// the version's local doc id in the BM25 builder.
type verInfo = catalog.Row

// hotIndex implements tier.LexicalIndexer: every new MemTable version is
// analysed and appended to an in-memory bm25.Builder (local id = version
// number); its metadata stays in the stored form, decoded field by field
// when a filter or an envelope reads it (catalog.Row.Value). Searches take
// the builder's sealed Segment, which bm25 caches until the next Add, so it
// is re-serialised lazily, at most once per batch of writes between reads.
//
// Lock order: the tier calls Add under its MemTable write lock, and Add
// takes mu. Nothing holding mu ever calls into the tier.
type hotIndex struct {
	an *text.Analyzer

	// toks is Add's token buffer, reused from version to version (the
	// builder keeps no token slice); amu guards it. Adds come one at a
	// time (under the MemTable's write lock), so amu is uncontended.
	amu  sync.Mutex
	toks []text.Token
	// bufs are AddBatch's token buffers (amu guards them).
	bufs [][]text.Token

	mu    sync.Mutex
	b     *bm25.Builder
	infos []verInfo
	byDoc map[*tier.Document]uint32
	fi    *catalog.FieldIndex
	err   error // sticky: a version the builder could not take
	// list is the MemTable's ordered id listing (every version, even one
	// the builder could not take); it has its own lock.
	list *catalog.Listing
}

func newHotIndex(an *text.Analyzer, fields map[string]FieldType) *hotIndex {
	// The flushed section stores no external ids: the warm catalog
	// derives them from the segment's document ids when it opens it.
	return &hotIndex{an: an, b: bm25.NewBuilder(bm25.Options{OmitExtIDs: true}), byDoc: map[*tier.Document]uint32{},
		fi: catalog.NewFieldIndex(fields), list: catalog.NewListing()}
}

// filterBitmap compiles f over the indexed fields (catalog.FieldIndex.Compile).
func (h *hotIndex) filterBitmap(f *contract.Filter) (*roaring.Bitmap, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fi.Compile(f, uint32(len(h.infos)))
}

// Add implements tier.LexicalIndexer.
func (h *hotIndex) Add(version uint32, doc *tier.Document) {
	h.list.Add(doc)
	h.amu.Lock()
	defer h.amu.Unlock()
	toks := h.an.AppendTokens(h.toks[:0], doc.Content)
	h.toks = toks[:0]
	h.addAnalysed(version, doc, toks, catalog.CheckMeta(doc.Metadata))
}

// parallelAnalyseMin is the least number of documents AddBatch analyses
// on several goroutines (fewer: one at a time, as Add).
const parallelAnalyseMin = 64

// tokenBytesEstimate is the content bytes per token AddBatch sizes a
// chunk's token buffer by (prose and code both average more).
const tokenBytesEstimate = 5

// analyseChunk is the most consecutive documents an AddBatch worker
// takes at a time; analyseChunkBytes bounds a chunk's content bytes
// (a chunk always holds at least one document), so the 2·workers token
// buffers in flight stay small next to the batch whatever its
// documents' sizes.
const (
	analyseChunk      = 32
	analyseChunkBytes = 64 << 10
)

// AddBatch implements tier.LexicalBatchIndexer: the documents are
// analysed (and their metadata checked) on up to GOMAXPROCS goroutines,
// analyseChunk consecutive documents at a time, while this goroutine adds
// the analysed chunks to the builder in document order, exactly as Add
// would one by one. At most 2·workers chunks are analysed ahead of the
// adding, each into a token buffer reused from batch to batch.
func (h *hotIndex) AddBatch(versions []uint32, docs []*tier.Document) {
	h.grow(len(docs))
	workers := min(runtime.GOMAXPROCS(0), (len(docs)+analyseChunk-1)/analyseChunk)
	if len(docs) < parallelAnalyseMin || workers < 2 {
		for i, d := range docs {
			h.Add(versions[i], d)
		}
		return
	}
	h.list.AddBatch(docs)
	h.amu.Lock()
	defer h.amu.Unlock()
	type chunk struct {
		lo, hi int           // the documents docs[lo:hi]
		bytes  int           // their content bytes
		buf    int           // index into h.bufs
		ends   []int32       // per document: end of its tokens in the buffer
		merrs  []error       // per document: its metadata check
		done   chan struct{} // closed when analysed
	}
	ahead := 2 * workers
	for len(h.bufs) < ahead {
		h.bufs = append(h.bufs, nil)
	}
	free := make(chan int, ahead) // buffer indices not in use
	for b := range ahead {
		free <- b
	}
	slots := make(chan struct{}, ahead) // chunks analysed but not yet added
	chunks := make([]chunk, 0, (len(docs)+analyseChunk-1)/analyseChunk)
	for lo := 0; lo < len(docs); {
		hi, n := lo, 0
		for hi < len(docs) && hi-lo < analyseChunk && (hi == lo || n+len(docs[hi].Content) <= analyseChunkBytes) {
			n += len(docs[hi].Content)
			hi++
		}
		chunks = append(chunks, chunk{lo: lo, hi: hi, bytes: n, done: make(chan struct{})})
		lo = hi
	}
	var next atomic.Int64
	for range workers {
		go func() {
			for {
				slots <- struct{}{}
				c := int(next.Add(1)) - 1
				if c >= len(chunks) {
					<-slots
					return
				}
				ch := &chunks[c]
				ch.buf = <-free
				toks := h.bufs[ch.buf][:0]
				if want := ch.bytes/tokenBytesEstimate + 16; cap(toks) < want {
					// Sized once for the chunk, not grown by doubling.
					toks = make([]text.Token, 0, want)
				}
				lo, hi := ch.lo, ch.hi
				ch.ends, ch.merrs = make([]int32, hi-lo), make([]error, hi-lo)
				func() {
					k := 0
					defer func() {
						// A panic here would end the process (no caller
						// to recover it): it becomes the index's error.
						if r := recover(); r != nil {
							for ; k < hi-lo; k++ {
								ch.ends[k], ch.merrs[k] = int32(len(toks)), fmt.Errorf("analysis panicked: %v", r)
							}
						}
						h.bufs[ch.buf] = toks
						close(ch.done)
					}()
					for ; k < hi-lo; k++ {
						if testAnalyseHook != nil {
							testAnalyseHook(docs[lo+k])
						}
						toks = h.an.AppendTokens(toks, docs[lo+k].Content)
						ch.ends[k] = int32(len(toks))
						ch.merrs[k] = catalog.CheckMeta(docs[lo+k].Metadata)
					}
				}()
			}
		}()
	}
	for c := range chunks {
		ch := &chunks[c]
		<-ch.done
		toks := h.bufs[ch.buf]
		start := int32(0)
		for k, end := range ch.ends {
			i := ch.lo + k
			h.addAnalysed(versions[i], docs[i], toks[start:end:end], ch.merrs[k])
			start = end
		}
		if cap(toks) > maxKeptChunkTokens {
			h.bufs[ch.buf] = nil
		}
		free <- ch.buf
		<-slots
	}
	// Between batches the index keeps only small buffers: a collection at
	// rest should not hold the analysis of its last large batch.
	for b, toks := range h.bufs {
		if cap(toks) > maxKeptBatchTokens {
			h.bufs[b] = nil
		}
	}
}

// grow makes room for n more versions in the builder, the version
// infos and byDoc (grown once for a batch, not insert by insert).
func (h *hotIndex) grow(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.b.Grow(n)
	if cap(h.infos)-len(h.infos) < n {
		h.infos = slices.Grow(h.infos, max(n, len(h.infos)))
	}
	h.byDoc = base.GrowMap(h.byDoc, n)
}

// maxKeptBatchTokens caps each token buffer AddBatch keeps from one
// batch to the next (8Ki tokens, 320 KiB; 2·GOMAXPROCS buffers).
const maxKeptBatchTokens = 1 << 13

// testAnalyseHook, when set (tests only), runs on AddBatch's worker
// before each document's analysis.
var testAnalyseHook func(*tier.Document)

// maxKeptChunkTokens caps the token buffer AddBatch keeps between chunks
// (12 MiB of tokens; chunks of generated tables can exceed it).
const maxKeptChunkTokens = 1 << 18

// addAnalysed adds one analysed version to the builder; merr is its
// metadata check. The caller holds amu.
func (h *hotIndex) addAnalysed(version uint32, doc *tier.Document, toks []text.Token, merr error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return
	}
	if merr != nil {
		h.err = fmt.Errorf("engine: version %d (id %q): %w", version, doc.ID, merr)
		return
	}
	if int(version) != len(h.infos) {
		h.err = fmt.Errorf("engine: lexical index out of step: got version %d, want %d", version, len(h.infos))
		return
	}
	lid, err := h.b.Add(catalog.ExtID(doc.ID), toks)
	if err == nil && lid != version {
		err = fmt.Errorf("bm25 local id %d for version %d", lid, version)
	}
	if err != nil {
		h.err = fmt.Errorf("engine: lexical index: %w", err)
		return
	}
	h.infos = append(h.infos, verInfo{Doc: doc})
	h.byDoc[doc] = version
	h.fi.AddFunc(version, h.infos[len(h.infos)-1].Value)
}

// versionOf returns the version number of a stored document.
func (h *hotIndex) versionOf(doc *tier.Document) (uint32, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.byDoc[doc]
	return v, ok
}

// view returns the sealed segment and the version infos it covers
// (len(infos) == seg.NumDocs()).
func (h *hotIndex) view() (*bm25.Segment, []verInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil, nil, h.err
	}
	seg, err := h.b.Segment()
	if err != nil {
		return nil, nil, fmt.Errorf("engine: seal lexical index: %w", err)
	}
	return seg, h.infos[:len(h.infos):len(h.infos)], nil
}

func trustToTier(t contract.Trust) tier.Trust {
	switch t {
	case contract.Authoritative:
		return tier.TrustAuthoritative
	case contract.Derived:
		return tier.TrustDerived
	case contract.ExternalUnverified:
		return tier.TrustExternalUnverified
	}
	return tier.TrustUnset
}

func trustFromTier(t tier.Trust) contract.Trust {
	switch t {
	case tier.TrustAuthoritative:
		return contract.Authoritative
	case tier.TrustDerived:
		return contract.Derived
	case tier.TrustExternalUnverified:
		return contract.ExternalUnverified
	}
	return ""
}

// toTier converts a validated contract document into the tier's storage
// form, with the VerifiableSources mark when verifiable. An empty
// VersionHash becomes BLAKE3-256 of Content. The metadata goes straight
// into its payload form (tier.Document.EncodedMetadata, each value as
// catalog.EncodeMeta stores it), not through a map of stored values.
func toTier(d *contract.Document, verifiable bool) (tier.Document, error) {
	meta, err := encodeMeta(d.Metadata, verifiable)
	if err != nil {
		return tier.Document{}, err
	}
	td := tier.Document{
		ID:              d.ID,
		Content:         d.Content,
		SourceURI:       d.SourceURI,
		EncodedMetadata: meta,
		Namespace:       d.Namespace,
		Trust:           trustToTier(d.Trust),
	}
	// No copies: the tier reads the batch's slices only until Apply
	// returns (it applies its own decoded copy of the WAL record), and the
	// caller's slices are not modified during Upsert.
	if len(d.Vector) > 0 {
		td.Vector = d.Vector
	}
	if len(d.ACL) > 0 {
		td.ACL = d.ACL
	}
	if d.VersionHash == "" {
		td.VersionHash = verify.SumString(d.Content)
	} else if _, err := hex.Decode(td.VersionHash[:], []byte(d.VersionHash)); err != nil {
		return tier.Document{}, fmt.Errorf("version_hash: %w", err)
	}
	return td, nil
}

// encodeMeta returns m, plus the VerifiableSources mark when verifiable,
// in the tier's payload form (tier.Document.EncodedMetadata): keys
// sorted, each value its JSON form; nil when there is none. Allocations:
// the key list and the output, sized exactly by a first pass that
// encodes each value into a scratch buffer.
func encodeMeta(m map[string]contract.Value, verifiable bool) ([]byte, error) {
	n := len(m)
	if verifiable {
		n++
	}
	if n == 0 {
		return nil, nil
	}
	keys := make([]string, 0, n)
	var val []byte
	size := len(tier.AppendMetadataCount(nil, n))
	entry := func(k string, vlen int) int {
		return uvarintLen(len(k)) + len(k) + uvarintLen(vlen) + vlen
	}
	for k, v := range m {
		keys = append(keys, k)
		var err error
		if val, err = v.AppendJSON(val[:0]); err != nil {
			return nil, fmt.Errorf("metadata %q: %w", k, err)
		}
		size += entry(k, len(val))
	}
	if verifiable {
		keys = append(keys, metaVerifiable)
		size += entry(metaVerifiable, len("true"))
	}
	slices.Sort(keys)
	out := tier.AppendMetadataCount(make([]byte, 0, size), n)
	for _, k := range keys {
		if verifiable && k == metaVerifiable {
			out = tier.AppendMetadataEntry(out, k, "true")
			continue
		}
		val, _ = m[k].AppendJSON(val[:0]) // encoded above
		out = tier.AppendMetadataEntry(out, k, val)
	}
	return out, nil
}

// uvarintLen is the length of n as a uvarint.
func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// fromTier converts a stored version back into a contract document.
// Errors: loading the content (tier.Document.Text).
func fromTier(td *tier.Document, meta map[string]contract.Value) (contract.Document, error) {
	text, err := td.Text()
	if err != nil {
		return contract.Document{}, fmt.Errorf("engine: document %q: %w", td.ID, err)
	}
	hash, err := td.Hash()
	if err != nil {
		return contract.Document{}, fmt.Errorf("engine: document %q: %w", td.ID, err)
	}
	d := contract.Document{
		ID:          td.ID,
		Content:     text,
		SourceURI:   td.SourceURI,
		Metadata:    meta,
		Namespace:   td.Namespace,
		Trust:       trustFromTier(td.Trust),
		VersionHash: hex.EncodeToString(hash[:]),
		Timestamp:   time.Unix(0, td.UpdatedUnixNano).UTC(),
	}
	if td.Vector != nil {
		d.Vector = append([]float32(nil), td.Vector...)
	}
	if td.ACL != nil {
		d.ACL = append([]string(nil), td.ACL...)
	}
	return d, nil
}

// sortedKeys returns m's keys sorted (deterministic error order).
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// FlushLexical implements tier.LexicalFlusher: the MemTable's sealed BM25
// segment with every version not in versions (ascending) dropped, so the
// flushed segment's row r is versions[r]. No re-analysis.
func (h *hotIndex) FlushLexical(versions []uint32) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil, h.err
	}
	n := uint32(h.b.NumDocs())
	if allVersions(versions, n) {
		// Nothing to drop: the builder's own serialisation is the
		// section (what Merge would rewrite it into, byte for byte).
		data, err := h.b.AppendTo(nil)
		if err != nil {
			return nil, fmt.Errorf("engine: flush lexical: %w", err)
		}
		return data, nil
	}
	seg, err := h.b.Segment()
	if err != nil {
		return nil, fmt.Errorf("engine: seal lexical index: %w", err)
	}
	del := roaring.New()
	del.AddRange(0, uint64(n))
	prev := int64(-1)
	for _, v := range versions {
		if int64(v) <= prev || v >= n {
			return nil, fmt.Errorf("engine: flush lexical: version %d out of order or beyond %d", v, n)
		}
		prev = int64(v)
		del.Remove(v)
	}
	var buf bytes.Buffer
	if _, err := bm25.MergeWith(&buf, []*bm25.Segment{seg}, []*roaring.Bitmap{del}, bm25.MergeOptions{OmitExtIDs: true}); err != nil {
		return nil, fmt.Errorf("engine: flush lexical: %w", err)
	}
	return buf.Bytes(), nil
}

// allVersions reports whether versions is exactly 0, 1, …, n-1.
func allVersions(versions []uint32, n uint32) bool {
	if uint32(len(versions)) != n {
		return false
	}
	for i, v := range versions {
		if v != uint32(i) {
			return false
		}
	}
	return true
}

var (
	_ tier.LexicalFlusher      = (*hotIndex)(nil)
	_ tier.LexicalBatchIndexer = (*hotIndex)(nil)
)
