package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/stratasearch/strata/engine/catalog"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/fusion"
	"github.com/stratasearch/strata/vfs/objstore"
)

// ShardMap is the root manifest of a sharded collection set (DESIGN.md
// "Scale-out"): shard i holds the documents whose ShardOf(id, n) is i and
// is an ordinary published database under Prefixes[i]; Epochs is the
// global epoch vector, the manifest version of each shard the root was
// written for.
type ShardMap struct {
	FormatVersion int      `json:"format_version"`
	Version       uint64   `json:"version"`
	Hash          string   `json:"hash"` // "fnv1a64-mod"
	Prefixes      []string `json:"prefixes"`
	Epochs        []uint64 `json:"epochs"`
}

// ShardOf is the shard of document id among n: FNV-1a 64 of the id
// modulo n.
func ShardOf(id string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(id))
	return int(h.Sum64() % uint64(n))
}

// PublishShardMap writes m as root/<version>.json with If-None-Match: *
// (objstore.ErrConflict when that version exists).
func PublishShardMap(ctx context.Context, st *objstore.Store, m ShardMap) error {
	m.FormatVersion, m.Hash = FormatVersion, "fnv1a64-mod"
	if len(m.Epochs) != len(m.Prefixes) || len(m.Prefixes) == 0 {
		return fmt.Errorf("remote: shard map with %d prefixes and %d epochs", len(m.Prefixes), len(m.Epochs))
	}
	b, _ := json.Marshal(&m)
	_, err := st.PutIfAbsent(ctx, fmt.Sprintf("root/%020d.json", m.Version), b)
	return err
}

// MergeLexicalTopK merges per-shard lexical hit lists (each sorted best
// first, scored with the global Query.LexicalStats) into the best k as
// one collection's BM25 search orders them: raw BM25 score
// (Explain.LexicalScore), higher first, ties by the document's external
// id (catalog.ExtID, FNV-1a-64 of the id), ascending.
func MergeLexicalTopK(lists [][]contract.Envelope, k int) []contract.Envelope {
	var all []contract.Envelope
	for _, l := range lists {
		all = append(all, l...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if a, b := all[i].Explain.LexicalScore, all[j].Explain.LexicalScore; a != b {
			return a > b
		}
		return catalog.ExtID(all[i].DocID) < catalog.ExtID(all[j].DocID)
	})
	if len(all) > k {
		all = all[:k]
	}
	return all
}

// MergeTopK merges per-shard hit lists (each sorted best first) into the
// best k: by score, higher first, ties by document id, as one
// collection orders dense hits (lexical ones: MergeLexicalTopK). Shards are disjoint by id, so no hit repeats.
func MergeTopK(lists [][]contract.Envelope, k int) []contract.Envelope {
	var all []contract.Envelope
	for _, l := range lists {
		all = append(all, l...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Score != all[j].Score {
			return all[i].Score > all[j].Score
		}
		return all[i].DocID < all[j].DocID
	})
	if len(all) > k {
		all = all[:k]
	}
	return all
}

// HybridRRFDepth is how deep one collection's hybrid RRF search reads
// each retriever's list for q: Fusion.Window, else max(100, TopK), and
// never less than TopK. A fan-out asks every shard for this many lexical
// and dense hits before MergeHybridRRF.
func HybridRRFDepth(q contract.Query) int {
	q.EnsureDefaults()
	d := q.Fusion.Window
	if d == 0 {
		d = max(100, q.TopK)
	}
	return max(d, q.TopK)
}

// MergeHybridRRF fuses the shards' lexical and dense hit lists as one
// collection's hybrid search under RRF (q.Fusion.Method "rrf") does, so
// that the result is exact: each kind is merged to its depth
// (MergeLexicalTopK and MergeTopK, depth HybridRRFDepth(q)), and the two lists are fused by
// weighted RRF (fusion.Fuse with q's k, weights and window) into the top
// q.TopK, ties by document id. lexical[s] and dense[s] are shard s's own
// Lexical and Dense results at that depth, the lexical ones scored with
// the global Query.LexicalStats (sum of the shards' Collection.LexicalStats).
// Each hit's Score is contract.HybridScore of its fused score; Explain
// holds its ranks in the merged lists, raw scores and the fused score.
// A fusion of scores rather than ranks (minmax, zscore, maxnorm, and the
// rerank-maxnorm hybrid default) normalises by each list's extremes and is
// not reproduced here.
func MergeHybridRRF(q contract.Query, lexical, dense [][]contract.Envelope) ([]contract.Envelope, error) {
	q.EnsureDefaults()
	if m, err := fusion.ParseMethod(q.Fusion.Method); err != nil || m != fusion.RRF {
		return nil, fmt.Errorf("remote: MergeHybridRRF needs fusion method rrf, got %q", q.Fusion.Method)
	}
	k := q.Fusion.K
	if k == 0 {
		k = fusion.DefaultK
	}
	depth := HybridRRFDepth(q)
	byID := map[string]contract.Envelope{}
	raws := map[string]map[string]float64{"lexical": {}, "dense": {}}
	var lists []fusion.List[string]
	var weights []float64
	for _, in := range []struct {
		name  string
		lists [][]contract.Envelope
	}{{"lexical", lexical}, {"dense", dense}} {
		w := q.Fusion.Weight(in.name)
		if w == 0 {
			continue
		}
		weights = append(weights, w)
		merged := MergeTopK(in.lists, depth)
		if in.name == "lexical" {
			merged = MergeLexicalTopK(in.lists, depth)
		}
		l := fusion.List[string]{Name: in.name, Weight: w}
		for _, e := range merged {
			l.Hits = append(l.Hits, fusion.Hit[string]{Key: e.DocID, Score: e.Score})
			if in.name == "lexical" {
				raws[in.name][e.DocID] = e.Explain.LexicalScore
			} else {
				raws[in.name][e.DocID] = e.Explain.DenseScore
			}
			if _, ok := byID[e.DocID]; !ok {
				byID[e.DocID] = e
			}
		}
		lists = append(lists, l)
	}
	if len(lists) == 0 {
		return nil, nil
	}
	fused, err := fusion.Fuse(lists, fusion.Options{Method: fusion.RRF, K: k, TopK: q.TopK, Window: q.Fusion.Window})
	if err != nil {
		return nil, fmt.Errorf("remote: fuse: %w", err)
	}
	out := make([]contract.Envelope, 0, len(fused))
	for _, f := range fused {
		e := byID[f.Key]
		e.Explain = contract.Explain{FusedScore: f.Score}
		e.Score = contract.HybridScore(f.Score, k, weights...)
		for _, ct := range f.Explain {
			switch {
			case ct.Rank == 0:
			case ct.List == "lexical":
				e.Explain.LexicalRank, e.Explain.LexicalScore = ct.Rank, raws["lexical"][f.Key]
			case ct.List == "dense":
				e.Explain.DenseRank, e.Explain.DenseScore = ct.Rank, raws["dense"][f.Key]
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// MergeHybridRerank merges the shards' results of a hybrid query under
// the rerank-maxnorm strategy (engine.FusionRerankMaxNorm, the default
// hybrid) as one collection computes it, so that the result is exact:
// the global lexical top N (window N and α as a shard's
// engine.Collection.RerankParams(q.Fusion) gives them) is
// fused with the candidates' exact dense scores by fusion.MaxNorm
// (weights 1−α and α, window N), and while fewer than q.TopK hits result,
// the merged dense list back-fills. heads[s] is shard s's result of q with
// TopK = N and the global Query.LexicalStats (its lexical top N, each hit
// with its raw BM25 and dense scores in Explain); dense[s] is shard s's
// Dense result at q.TopK. metric is the collection's ("l2", "cosine",
// "ip"). q.TopK must not exceed N: beyond the head, one collection lists
// the lexical tail, which the heads do not carry.
func MergeHybridRerank(q contract.Query, metric string, window int, alpha float64, heads, dense [][]contract.Envelope) ([]contract.Envelope, error) {
	q.EnsureDefaults()
	if q.TopK > window {
		return nil, fmt.Errorf("remote: MergeHybridRerank: top_k %d beyond the rerank window %d", q.TopK, window)
	}
	wLex, wDen := 1-alpha, alpha
	wsum := wLex + wDen
	prev := 1.0
	capped := func(s float64) float64 {
		s = min(max(s, 0), prev)
		prev = s
		return s
	}
	lex := make([][]contract.Envelope, len(heads))
	for s, h := range heads {
		for _, e := range h {
			if e.Explain.LexicalRank > 0 {
				lex[s] = append(lex[s], e)
			}
		}
	}
	head := MergeLexicalTopK(lex, window)
	var out []contract.Envelope
	seen := map[string]bool{}
	if len(head) > 0 {
		byID := make(map[string]contract.Envelope, len(head))
		ll := fusion.List[string]{Name: "lexical", Weight: wLex}
		dl := fusion.List[string]{Name: "dense", Weight: wDen}
		for _, e := range head {
			byID[e.DocID] = e
			ll.Hits = append(ll.Hits, fusion.Hit[string]{Key: e.DocID, Score: e.Explain.LexicalScore})
			if e.Explain.DenseRank > 0 {
				fs := e.Explain.DenseScore // similarity; 1/(1+d²) for l2
				if metric == "l2" {
					fs = 1 / (1 + fs)
				}
				dl.Hits = append(dl.Hits, fusion.Hit[string]{Key: e.DocID, Score: fs})
			}
		}
		sort.SliceStable(dl.Hits, func(i, j int) bool {
			if dl.Hits[i].Score != dl.Hits[j].Score {
				return dl.Hits[i].Score > dl.Hits[j].Score
			}
			return dl.Hits[i].Key < dl.Hits[j].Key
		})
		fused, err := fusion.Fuse([]fusion.List[string]{ll, dl}, fusion.Options{Method: fusion.MaxNorm, Window: len(head)})
		if err != nil {
			return nil, fmt.Errorf("remote: fuse: %w", err)
		}
		for _, f := range fused {
			if len(out) == q.TopK {
				break
			}
			e := byID[f.Key]
			src := e.Explain
			e.Score = capped(f.Score / wsum)
			e.Explain = contract.Explain{FusedScore: f.Score}
			for _, ct := range f.Explain {
				switch {
				case ct.Rank == 0:
				case ct.List == "lexical":
					e.Explain.LexicalRank, e.Explain.LexicalScore = ct.Rank, src.LexicalScore
				case ct.List == "dense":
					e.Explain.DenseRank, e.Explain.DenseScore = ct.Rank, src.DenseScore
				}
			}
			seen[f.Key] = true
			out = append(out, e)
		}
	}
	if len(out) < q.TopK {
		for i, e := range MergeTopK(dense, q.TopK) {
			if len(out) >= q.TopK {
				break
			}
			if seen[e.DocID] {
				continue
			}
			raw := e.Explain.DenseScore
			fs := wDen * contract.DenseScore(metric, float32(raw))
			e.Score = capped(fs / wsum)
			e.Explain = contract.Explain{DenseRank: i + 1, DenseScore: raw, FusedScore: fs}
			seen[e.DocID] = true
			out = append(out, e)
		}
	}
	return out, nil
}
