package engine

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/RoaringBitmap/roaring/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/zeebo/blake3"
)

// verInfo is what the engine keeps per MemTable version (indexed by the
// tier's dense version number, which is also the version's local doc id in
// the BM25 builder).
type verInfo struct {
	doc  *tier.Document            // shared with the tier; read-only
	meta map[string]contract.Value // decoded metadata
}

// hotIndex implements tier.LexicalIndexer: every new MemTable version is
// analysed and appended to an in-memory bm25.Builder (local id = version
// number), and its decoded metadata is kept for filtering. Searches take
// the builder's sealed Segment, which bm25 caches until the next Add, so it
// is re-serialised lazily, at most once per batch of writes between reads.
//
// Lock order: the tier calls Add under its MemTable write lock, and Add
// takes mu. Nothing holding mu ever calls into the tier.
type hotIndex struct {
	an *text.Analyzer

	mu    sync.Mutex
	b     *bm25.Builder
	infos []verInfo
	byDoc map[*tier.Document]uint32
	fi    *fieldIndex
	err   error // sticky: a version the builder could not take
}

func newHotIndex(an *text.Analyzer, fields map[string]FieldType) *hotIndex {
	return &hotIndex{an: an, b: bm25.NewBuilder(bm25.Options{}), byDoc: map[*tier.Document]uint32{},
		fi: newFieldIndex(fields)}
}

// filterBitmap compiles f over the indexed fields (see fieldIndex.compile).
func (h *hotIndex) filterBitmap(f *contract.Filter) (*roaring.Bitmap, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fi.compile(f, uint32(len(h.infos)))
}

// Add implements tier.LexicalIndexer.
func (h *hotIndex) Add(version uint32, doc *tier.Document) {
	toks := h.an.Analyze(doc.Content)
	meta, merr := decodeMeta(doc.Metadata)
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
	lid, err := h.b.Add(extID(doc.ID), toks)
	if err == nil && lid != version {
		err = fmt.Errorf("bm25 local id %d for version %d", lid, version)
	}
	if err != nil {
		h.err = fmt.Errorf("engine: lexical index: %w", err)
		return
	}
	h.infos = append(h.infos, verInfo{doc: doc, meta: meta})
	h.byDoc[doc] = version
	h.fi.add(version, meta)
}

// extID is the BM25 external id of a document: a 64-bit FNV-1a hash of
// its id. bm25 breaks score ties by external id, so the same documents tie
// in the same order whichever tier (and local id) holds them.
func extID(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
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

// encodeMeta turns contract metadata into the tier's string map: each
// value is stored as its JSON form, so every type round-trips exactly.
func encodeMeta(m map[string]contract.Value) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		b, err := v.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", k, err)
		}
		out[k] = string(b)
	}
	return out, nil
}

func decodeMeta(m map[string]string) (map[string]contract.Value, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]contract.Value, len(m))
	for k, s := range m {
		if strings.HasPrefix(k, reservedMetaPrefix) {
			continue // the engine's own (verify.go), never returned
		}
		if v, ok := decodeValueFast(s); ok {
			out[k] = v
			continue
		}
		var v contract.Value
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("metadata %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// decodeValueFast decodes the common stored forms without encoding/json
// (opening a warm segment decodes every row's metadata): a string with no
// escape, control character or invalid UTF-8, true / false, and a plain
// JSON number. ok is false for anything else (json.Unmarshal decides);
// whenever ok is true the result equals json.Unmarshal's
// (FuzzDecodeValueFast).
func decodeValueFast(s string) (contract.Value, bool) {
	switch {
	case s == "true":
		return contract.Bool(true), true
	case s == "false":
		return contract.Bool(false), true
	case len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"':
		body := s[1 : len(s)-1]
		for i := 0; i < len(body); i++ {
			if c := body[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return contract.Value{}, false
			}
		}
		return contract.String(body), true
	case len(s) > 0 && len(s) <= 32:
		// JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
		i := 0
		if s[i] == '-' {
			i++
		}
		digits := func() int {
			j := i
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			return i - j
		}
		start := i
		if n := digits(); n == 0 || (n > 1 && s[start] == '0') {
			return contract.Value{}, false
		}
		if i < len(s) && s[i] == '.' {
			i++
			if digits() == 0 {
				return contract.Value{}, false
			}
		}
		if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
			i++
			if i < len(s) && (s[i] == '+' || s[i] == '-') {
				i++
			}
			if digits() == 0 {
				return contract.Value{}, false
			}
		}
		if i != len(s) {
			return contract.Value{}, false
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return contract.Value{}, false
		}
		return contract.Number(f), true
	}
	return contract.Value{}, false
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
// form. An empty VersionHash becomes BLAKE3-256 of Content.
func toTier(d *contract.Document) (tier.Document, error) {
	meta, err := encodeMeta(d.Metadata)
	if err != nil {
		return tier.Document{}, err
	}
	td := tier.Document{
		ID:        d.ID,
		Content:   d.Content,
		SourceURI: d.SourceURI,
		Metadata:  meta,
		Namespace: d.Namespace,
		Trust:     trustToTier(d.Trust),
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
		td.VersionHash = blake3.Sum256([]byte(d.Content))
	} else if _, err := hex.Decode(td.VersionHash[:], []byte(d.VersionHash)); err != nil {
		return tier.Document{}, fmt.Errorf("version_hash: %w", err)
	}
	return td, nil
}

// fromTier converts a stored version back into a contract document.
func fromTier(td *tier.Document, meta map[string]contract.Value) contract.Document {
	d := contract.Document{
		ID:          td.ID,
		Content:     td.Content,
		SourceURI:   td.SourceURI,
		Metadata:    meta,
		Namespace:   td.Namespace,
		Trust:       trustFromTier(td.Trust),
		VersionHash: hex.EncodeToString(td.VersionHash[:]),
		Timestamp:   time.Unix(0, td.UpdatedUnixNano).UTC(),
	}
	if td.Vector != nil {
		d.Vector = append([]float32(nil), td.Vector...)
	}
	if td.ACL != nil {
		d.ACL = append([]string(nil), td.ACL...)
	}
	return d
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
