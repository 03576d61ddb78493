package ingest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/vfs"
)

// Bridge is a vocabulary bridge: for a word of documentation prose, the
// identifier terms (whole names and their CamelCase / snake_case parts of
// 3 runes or more, as the code analyzer indexes them) of the declarations whose doc comments
// use the word, with a weight in (0, 1]. It is learned from the indexed
// corpus itself (BuildBridge) and expands prose queries (Expand), so
// "make every letter capital" also scores "upper".
//
// Association: over the declarations with a doc comment (N), c(w) counts
// those whose comment's first paragraph holds word w, c(p) those whose
// names hold term p, c(w,p) both; the weight is the normalised PMI
//
//	npmi(w,p) = log(N·c(w,p) / (c(w)·c(p))) / −log(c(w,p)/N)
//
// kept when c(w,p) ≥ BridgeMinSupport and npmi ≥ BridgeMinNPMI, the
// BridgeMaxAssoc best per word (npmi descending, then c(w,p), then term).
type Bridge struct {
	words map[string][]Assoc
	// Weight is the factor on an association's npmi in Expand; 0 means
	// ExpandWeight.
	Weight float64
}

// BridgeOptions configures BuildBridge; zero fields take the defaults
// BridgeMinSupport, BridgeMinNPMI and BridgeMaxAssoc.
type BridgeOptions struct {
	MinSupport int
	MinNPMI    float64
	MaxAssoc   int // 1..BridgeMaxAssoc
}

// Assoc is one association of a Bridge word.
type Assoc struct {
	Term   string
	Weight float64 // npmi in (0, 1], stored to 1/65535
}

// Bridge construction and size bounds.
const (
	BridgeMinSupport = 3       // c(w,p) at least
	BridgeMinNPMI    = 0.25    // npmi at least
	BridgeMaxAssoc   = 4       // associations kept per word
	BridgeMaxWords   = 1 << 17 // words kept (the most frequent)
	bridgeDocWords   = 40      // words read per doc comment (first paragraph)
)

// ExpandWeight is the factor on an association's weight in Expand: an
// expansion term counts at most 0.3 of a query word of the same IDF.
const ExpandWeight = 0.3

// ExpandMaxTerms bounds the terms Expand adds to one query.
const ExpandMaxTerms = 16

// Words returns the number of words of b.
func (b *Bridge) Words() int { return len(b.words) }

// Lookup returns w's associations, best first (nil if none).
func (b *Bridge) Lookup(w string) []Assoc { return b.words[w] }

// docAnalyzer tokenises doc comments and queries for the bridge: Unicode
// words, lower-cased, English stop-words removed, no stemming and no
// identifier splitting (a query word must equal a doc word).
var docAnalyzer = text.MustNew(text.Options{Mode: text.ModeUnicode, StopWords: "english", MaxTokenRunes: 32})

// codeAnalyzer is the engine's AnalyzerCode analyzer: identifier terms as
// BM25 indexes them.
var codeAnalyzer = text.MustNew(text.CodeOptions())

// bridgeWord reports whether a doc-comment token is a prose word worth
// associating: 3..32 runes, letters only.
func bridgeWord(t string) bool {
	if utf8.RuneCountInString(t) < 3 {
		return false
	}
	for _, r := range t {
		if !('a' <= r && r <= 'z') && r < 0x80 {
			return false
		}
	}
	return true
}

// docComment returns the first paragraph of the comment lines that open
// a chunk's source text (// and # line comments, /* */ and * lines), the
// comment markers removed.
func docComment(src string) string {
	var b strings.Builder
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		var body string
		switch {
		case strings.HasPrefix(l, "//"):
			body = strings.TrimLeft(l, "/!")
		case strings.HasPrefix(l, "/*"):
			body = strings.TrimPrefix(l, "/*")
		case strings.HasPrefix(l, "*") && !strings.HasPrefix(l, "*/"):
			body = strings.TrimPrefix(l, "*")
		case strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "#include") && !strings.HasPrefix(l, "#define"):
			body = strings.TrimPrefix(l, "#")
		default:
			return b.String()
		}
		body = strings.TrimSpace(strings.TrimSuffix(body, "*/"))
		if body == "" {
			if b.Len() > 0 {
				return b.String() // end of the first paragraph
			}
			continue
		}
		b.WriteString(body)
		b.WriteByte(' ')
	}
	return b.String()
}

// BridgeStats describes a BuildBridge run.
type BridgeStats struct {
	Chunks int // chunks read
	Decls  int // declarations with names and a doc comment (N)
	Words  int // words kept
	Assocs int // associations kept
}

// BuildBridge learns a Bridge from every chunk of col (an Index-ed
// collection): each chunk with metadata names whose source text opens
// with a comment is one declaration. It reads the collection at one
// listing pass (engine List and Get).
func BuildBridge(ctx context.Context, col *engine.Collection) (*Bridge, BridgeStats, error) {
	return BuildBridgeWith(ctx, col, BridgeOptions{})
}

// BuildBridgeWith is BuildBridge with options.
func BuildBridgeWith(ctx context.Context, col *engine.Collection, o BridgeOptions) (*Bridge, BridgeStats, error) {
	if o.MinSupport <= 0 {
		o.MinSupport = BridgeMinSupport
	}
	if o.MinNPMI == 0 {
		o.MinNPMI = BridgeMinNPMI
	}
	if o.MaxAssoc <= 0 || o.MaxAssoc > BridgeMaxAssoc {
		o.MaxAssoc = BridgeMaxAssoc
	}
	var st BridgeStats
	ids := map[string]uint32{} // word and term ids share one table
	var names []string
	intern := func(s string) uint32 {
		id, ok := ids[s]
		if !ok {
			id = uint32(len(names))
			ids[s] = id
			names = append(names, s)
		}
		return id
	}
	cw, cp := map[uint32]int{}, map[uint32]int{}
	pair := map[uint64]int32{}
	after := ""
	for {
		page, err := col.List(ctx, after, engine.MaxListLimit)
		if err != nil {
			return nil, st, fmt.Errorf("ingest: bridge: %w", err)
		}
		if len(page) == 0 {
			break
		}
		after = page[len(page)-1]
		for _, id := range page {
			d, err := col.Get(ctx, id)
			if errors.Is(err, engine.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, st, fmt.Errorf("ingest: bridge: %w", err)
			}
			st.Chunks++
			nv, ok := d.Metadata[MetaNames]
			if !ok {
				continue
			}
			ns, _ := nv.List()
			if len(ns) == 0 {
				continue
			}
			doc := docComment(Snippet(d.Content, d.Metadata))
			if doc == "" {
				continue
			}
			own := map[string]bool{}
			var terms []uint32
			for _, n := range ns {
				for _, t := range codeAnalyzer.Analyze(n) {
					if !own[t.Term] && utf8.RuneCountInString(t.Term) >= 3 {
						own[t.Term] = true
						terms = append(terms, intern(t.Term))
					}
				}
			}
			var words []uint32
			seen := map[string]bool{}
			for _, t := range docAnalyzer.Analyze(doc) {
				if len(seen) == bridgeDocWords {
					break
				}
				if seen[t.Term] || !bridgeWord(t.Term) {
					continue
				}
				seen[t.Term] = true
				if !own[t.Term] {
					words = append(words, intern(t.Term))
				}
			}
			if len(words) == 0 {
				continue
			}
			st.Decls++
			for _, w := range words {
				cw[w]++
			}
			for _, p := range terms {
				cp[p]++
				for _, w := range words {
					pair[uint64(w)<<32|uint64(p)]++
				}
			}
		}
		if len(page) < engine.MaxListLimit {
			break
		}
	}
	b := &Bridge{words: map[string][]Assoc{}}
	n := float64(st.Decls)
	byWord := map[uint32][]Assoc{}
	for k, c := range pair {
		if int(c) < o.MinSupport {
			continue
		}
		w, p := uint32(k>>32), uint32(k)
		pxy := float64(c) / n
		if pxy >= 1 {
			continue
		}
		npmi := math.Log(n*float64(c)/(float64(cw[w])*float64(cp[p]))) / -math.Log(pxy)
		if npmi < o.MinNPMI {
			continue
		}
		byWord[w] = append(byWord[w], Assoc{Term: names[p], Weight: math.Min(1, npmi)})
	}
	type ws struct {
		w  uint32
		as []Assoc
	}
	var all []ws
	for w, as := range byWord {
		slices.SortFunc(as, func(a, b Assoc) int {
			if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
				return c
			}
			return strings.Compare(a.Term, b.Term)
		})
		all = append(all, ws{w, as[:min(len(as), o.MaxAssoc)]})
	}
	// Bounded size: the most frequent words first.
	slices.SortFunc(all, func(a, b ws) int {
		if c := cmp.Compare(cw[b.w], cw[a.w]); c != 0 {
			return c
		}
		return strings.Compare(names[a.w], names[b.w])
	})
	all = all[:min(len(all), BridgeMaxWords)]
	for _, x := range all {
		for i := range x.as {
			x.as[i].Weight = quantWeight(x.as[i].Weight)
		}
		b.words[names[x.w]] = x.as
		st.Assocs += len(x.as)
	}
	st.Words = len(b.words)
	return b, st, nil
}

// quantWeight rounds w ∈ (0,1] to the stored 1/65535 grid (≥ 1/65535).
func quantWeight(w float64) float64 {
	return float64(max(1, uint16(math.Round(w*65535)))) / 65535
}

// Expand returns the expansion of a query text: for each distinct word of
// the text (docAnalyzer) that b knows, its associations, weight
// b.Weight (default ExpandWeight) × npmi, at most 1; terms the text already holds (as the code analyzer
// indexes it) are left out, a term reached from several words keeps its
// best weight, and the ExpandMaxTerms best are returned (weight
// descending, then term). A text that looks like an identifier
// (LooksLikeIdentifier) is not expanded, so exact-name search is
// unchanged.
func (b *Bridge) Expand(q string) []contract.WeightedTerm {
	if b == nil || len(b.words) == 0 || LooksLikeIdentifier(q) {
		return nil
	}
	have := map[string]bool{}
	for _, t := range codeAnalyzer.Analyze(q) {
		have[t.Term] = true
	}
	f := b.Weight
	if f <= 0 {
		f = ExpandWeight
	}
	best := map[string]float64{}
	for _, t := range docAnalyzer.Analyze(q) {
		for _, a := range b.words[t.Term] {
			if !have[a.Term] {
				best[a.Term] = math.Max(best[a.Term], math.Min(1, f*a.Weight))
			}
		}
	}
	out := make([]contract.WeightedTerm, 0, len(best))
	for t, w := range best {
		out = append(out, contract.WeightedTerm{Term: t, Weight: w})
	}
	slices.SortFunc(out, func(a, b contract.WeightedTerm) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return strings.Compare(a.Term, b.Term)
	})
	return out[:min(len(out), ExpandMaxTerms)]
}

// FormatExpansion renders an expansion as "term^weight" pairs separated by
// spaces (Explain.Expansion).
func FormatExpansion(ex []contract.WeightedTerm) string {
	var b strings.Builder
	for i, e := range ex {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e.Term)
		b.WriteByte('^')
		b.WriteString(strconv.FormatFloat(e.Weight, 'f', 3, 64))
	}
	return b.String()
}

// Bridge file format, version 1 (little-endian):
//
//	header (32 bytes): magic "STRBRIDG" | version u32 = 1 | reserved u32 = 0 |
//	                   words u32 | body bytes u64 | CRC-32C of the body u32
//	body: per word, in ascending byte order:
//	      uvarint len, word bytes | uvarint n (1..BridgeMaxAssoc) |
//	      n × (uvarint len, term bytes | weight u16, weight·65535, ≥ 1)
//
// Words and terms are 1..contract.MaxTermBytes bytes of UTF-8; words are
// unique; at most BridgeMaxWords words.
const (
	bridgeMagic      = "STRBRIDG"
	BridgeVersion    = 1
	bridgeHeaderSize = 32
	bridgeKind       = "bridge table"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes b in the bridge file format.
func (b *Bridge) MarshalBinary() ([]byte, error) {
	words := make([]string, 0, len(b.words))
	for w := range b.words {
		words = append(words, w)
	}
	slices.Sort(words)
	var body []byte
	for _, w := range words {
		as := b.words[w]
		body = binary.AppendUvarint(body, uint64(len(w)))
		body = append(body, w...)
		body = binary.AppendUvarint(body, uint64(len(as)))
		for _, a := range as {
			body = binary.AppendUvarint(body, uint64(len(a.Term)))
			body = append(body, a.Term...)
			body = binary.LittleEndian.AppendUint16(body, max(1, uint16(math.Round(a.Weight*65535))))
		}
	}
	h := make([]byte, 0, bridgeHeaderSize+len(body))
	h = append(h, bridgeMagic...)
	h = binary.LittleEndian.AppendUint32(h, BridgeVersion)
	h = binary.LittleEndian.AppendUint32(h, 0)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(words)))
	h = binary.LittleEndian.AppendUint64(h, uint64(len(body)))
	h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(body, castagnoli))
	return append(h, body...), nil
}

// DecodeBridge decodes the bridge file format; name is the file for
// errors. Every malformation is a *base.CorruptError (errors.Is
// base.ErrCorrupt) with the byte offset of the problem.
func DecodeBridge(data []byte, name string) (*Bridge, error) {
	bad := func(off int, format string, args ...any) error {
		return base.Corruptf(bridgeKind, name, int64(off), format, args...)
	}
	if len(data) < bridgeHeaderSize {
		return nil, bad(0, "%d bytes, shorter than the %d-byte header", len(data), bridgeHeaderSize)
	}
	if string(data[:8]) != bridgeMagic {
		return nil, bad(0, "bad magic %q", data[:8])
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != BridgeVersion {
		return nil, bad(8, "format version %d, want %d", v, BridgeVersion)
	}
	if r := binary.LittleEndian.Uint32(data[12:]); r != 0 {
		return nil, bad(12, "reserved field %d, want 0", r)
	}
	nw := binary.LittleEndian.Uint32(data[16:])
	if nw > BridgeMaxWords {
		return nil, bad(16, "%d words, more than %d", nw, BridgeMaxWords)
	}
	bl := binary.LittleEndian.Uint64(data[20:])
	if bl != uint64(len(data)-bridgeHeaderSize) {
		return nil, bad(20, "body length %d, file holds %d bytes after the header", bl, len(data)-bridgeHeaderSize)
	}
	body := data[bridgeHeaderSize:]
	if c := crc32.Checksum(body, castagnoli); c != binary.LittleEndian.Uint32(data[28:]) {
		return nil, bad(28, "body checksum %08x, header says %08x", c, binary.LittleEndian.Uint32(data[28:]))
	}
	off := bridgeHeaderSize
	str := func(what string) (string, error) {
		n, k := binary.Uvarint(data[off:])
		if k <= 0 {
			return "", bad(off, "truncated %s length", what)
		}
		if n == 0 || n > contract.MaxTermBytes {
			return "", bad(off, "%s length %d, want 1..%d", what, n, contract.MaxTermBytes)
		}
		if uint64(len(data)-off-k) < n {
			return "", bad(off, "%s of %d bytes past the end", what, n)
		}
		s := data[off+k : off+k+int(n)]
		if !utf8.Valid(s) {
			return "", bad(off+k, "%s is not UTF-8", what)
		}
		off += k + int(n)
		return string(s), nil
	}
	b := &Bridge{words: make(map[string][]Assoc, nw)}
	prev := ""
	for i := range nw {
		at := off
		w, err := str("word")
		if err != nil {
			return nil, err
		}
		if i > 0 && w <= prev {
			return nil, bad(at, "word %q not after %q (words ascend, unique)", w, prev)
		}
		prev = w
		n, k := binary.Uvarint(data[off:])
		if k <= 0 || n == 0 || n > BridgeMaxAssoc {
			return nil, bad(off, "association count of %q: want 1..%d", w, BridgeMaxAssoc)
		}
		off += k
		as := make([]Assoc, 0, n)
		for range n {
			t, err := str("term")
			if err != nil {
				return nil, err
			}
			if len(data)-off < 2 {
				return nil, bad(off, "truncated weight")
			}
			q := binary.LittleEndian.Uint16(data[off:])
			if q == 0 {
				return nil, bad(off, "weight 0 (want 1..65535)")
			}
			off += 2
			as = append(as, Assoc{Term: t, Weight: float64(q) / 65535})
		}
		b.words[w] = as
	}
	if off != len(data) {
		return nil, bad(off, "%d trailing bytes after %d words", len(data)-off, nw)
	}
	return b, nil
}

// SaveBridge writes b to path atomically (vfs.WriteFileAtomic).
func SaveBridge(path string, b *Bridge) error {
	data, err := b.MarshalBinary()
	if err != nil {
		return fmt.Errorf("ingest: bridge: %w", err)
	}
	if err := vfs.WriteFileAtomic(vfs.Default, path, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	}); err != nil {
		return fmt.Errorf("ingest: bridge: %w", err)
	}
	return nil
}

// LoadBridge reads the bridge file at path; a missing file is (nil, nil).
// A malformed one is a *base.CorruptError naming path and the offset.
func LoadBridge(path string) (*Bridge, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: bridge: %w", err)
	}
	return DecodeBridge(data, path)
}

// crcOf is the body checksum of the bridge format.
func crcOf(body []byte) uint32 { return crc32.Checksum(body, castagnoli) }
