package lexical

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
)

// needPeers skips the test when the peer libraries are missing, unless
// CI=true, where a missing peer is a failure.
func needPeers(t *testing.T) {
	t.Helper()
	if err := PeersAvailable(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func buildDrivers(t *testing.T) (*Drivers, string) {
	t.Helper()
	needPeers(t)
	root, err := datasets.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d, err := BuildDrivers(context.Background(), root, dir)
	if err != nil {
		t.Fatal(err)
	}
	return d, dir
}

// tinyCorpus is a seeded hand-sized corpus: 40 documents of 8–12 words
// from a 16-word vocabulary, so every document length is at least half
// the average (Xapian's min_normlen 0.5 never applies).
func tinyCorpus() []string {
	r := rand.New(rand.NewPCG(7, 7))
	vocab := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi")
	docs := make([]string, 40)
	for i := range docs {
		n := 8 + r.IntN(5)
		w := make([]string, n)
		for j := range w {
			// Skewed draws so document frequencies differ.
			w[j] = vocab[int(math.Sqrt(float64(r.IntN(len(vocab)*len(vocab)))))]
		}
		docs[i] = strings.Join(w, " ")
	}
	return docs
}

// TestTopKAgreesWithXapian checks that Strata's oracle configuration and
// Xapian unstemmed (pre-tokenised and TermGenerator input) return the same
// top-10 lists, in the same order, where the BM25 variants must agree:
// single-word queries (IDF is a per-query constant, so only tf and |D|
// order documents, with the same k1, b) and two-word queries whose words
// have the same document frequency (equal IDF under any IDF formula).
// Ties go to the lower document id in both engines. FTS5 must return the
// same matching sets.
func TestTopKAgreesWithXapian(t *testing.T) {
	dr, dir := buildDrivers(t)
	ctx := context.Background()
	docs := tinyCorpus()
	a := text.MustNew(text.OracleOptions())
	b := bm25.NewBuilder(bm25.Options{})
	for i, d := range docs {
		if _, err := b.Add(uint64(i), a.Analyze(d)); err != nil {
			t.Fatal(err)
		}
	}
	seg, err := b.Segment()
	if err != nil {
		t.Fatal(err)
	}
	var queries [][]string
	for i := 0; i < seg.NumTerms(); i++ {
		queries = append(queries, []string{seg.Term(i)})
	}
	for i := 0; i < seg.NumTerms(); i++ {
		for j := i + 1; j < seg.NumTerms(); j++ {
			if seg.DocFreq(seg.Term(i)) == seg.DocFreq(seg.Term(j)) {
				queries = append(queries, []string{seg.Term(i), seg.Term(j)})
			}
		}
	}
	if len(queries) < seg.NumTerms()+3 {
		t.Fatalf("only %d queries (%d terms): corpus has too few equal-df pairs", len(queries), seg.NumTerms())
	}
	t.Logf("%d terms, %d queries (%d equal-df pairs)", seg.NumTerms(), len(queries), len(queries)-seg.NumTerms())
	corpus, qfile := filepath.Join(dir, "c.txt"), filepath.Join(dir, "q.txt")
	qlines := make([]string, len(queries))
	for i, q := range queries {
		qlines[i] = strings.Join(q, " ")
	}
	if err := writeLines(corpus, docs); err != nil {
		t.Fatal(err)
	}
	if err := writeLines(qfile, qlines); err != nil {
		t.Fatal(err)
	}
	views := []bm25.View{{Seg: seg}}
	for _, op := range []string{"or", "and", "phrase"} {
		want := make([][]int64, len(queries))
		all := make([][]int64, len(queries))
		for i, q := range queries {
			query := bm25.Query{Should: q}
			switch op {
			case "and":
				query = bm25.Query{Must: q}
			case "phrase":
				query = phraseQuery(q)
			}
			p := bm25.DefaultSearchParams()
			for _, k := range []int{10, 100} {
				p.K = k
				hits, err := bm25.Search(views, query, p, nil)
				if err != nil {
					t.Fatal(err)
				}
				ids := []int64{}
				for _, h := range hits {
					ids = append(ids, int64(h.ExtID))
				}
				if k == 10 {
					want[i] = ids
				} else {
					all[i] = ids
				}
			}
		}
		for _, mode := range []bool{true, false} {
			xp := peerConfig{engine: PeerXapian, bin: dr.Xapian, index: filepath.Join(dir, fmt.Sprintf("x-%v", mode)), analysis: "none", pretok: mode}
			ir, err := xp.buildIndex(ctx, corpus)
			if err != nil {
				t.Fatal(err)
			}
			if ir.Docs != len(docs) || ir.IndexBytes <= 0 || ir.Version == "" {
				t.Fatalf("xapian index report %+v", ir)
			}
			r, err := xp.query(ctx, qfile, op, 10, 2, len(queries))
			if err != nil {
				t.Fatal(err)
			}
			checkReport(t, r, len(queries))
			if op == "phrase" {
				// Phrase weights differ (Xapian: the sum of the slot
				// weights, no phrase frequency); compare match sets.
				r, err = xp.query(ctx, qfile, op, 100, 1, len(queries))
				if err != nil {
					t.Fatal(err)
				}
				sameSets(t, "xapian "+op, qlines, r.Results, all)
				continue
			}
			for i := range queries {
				if !slices.Equal(r.Results[i], want[i]) {
					t.Errorf("%s pretok=%v query %q: xapian %v, strata %v", op, mode, qlines[i], r.Results[i], want[i])
				}
			}
		}
		// FTS5 and Bleve use other BM25 variants (Bleve: avgdl from the
		// vocabulary size); they must return the same matching sets.
		for _, p := range []peerConfig{
			{engine: PeerFTS5, bin: dr.FTS5, index: filepath.Join(dir, "f.db"), analysis: "unicode61"},
			{engine: PeerBleve, bin: dr.Bleve, index: filepath.Join(dir, "b-pretok"), analysis: "none", pretok: true},
			{engine: PeerBleve, bin: dr.Bleve, index: filepath.Join(dir, "b-raw"), analysis: "none"},
		} {
			ir, err := p.buildIndex(ctx, corpus)
			if err != nil {
				t.Fatal(err)
			}
			if ir.Docs != len(docs) || ir.IndexBytes <= 0 || ir.Version == "" {
				t.Fatalf("%s index report %+v", p.engine, ir)
			}
			r, err := p.query(ctx, qfile, op, 100, 1, len(queries))
			if err != nil {
				t.Fatal(err)
			}
			checkReport(t, r, len(queries))
			sameSets(t, p.engine+" "+p.mode()+" "+op, qlines, r.Results, all)
		}
	}
}

func sameSets(t *testing.T, what string, qlines []string, got, want [][]int64) {
	t.Helper()
	for i := range qlines {
		g := slices.Sorted(slices.Values(got[i]))
		w := slices.Sorted(slices.Values(want[i]))
		if !slices.Equal(g, w) {
			t.Errorf("%s query %q: matches %v, strata %v", what, qlines[i], g, w)
		}
	}
}

func checkReport(t *testing.T, r *QueryReport, nq int) {
	t.Helper()
	if r.Version == "" || len(r.Results) != nq || r.WallS <= 0 || r.CPUS < 0 || len(r.WallSAll) != r.Passes || len(r.CPUSAll) != r.Passes {
		t.Fatalf("bad %s report: version %q, %d results, wall %v, cpu %v, passes %d/%d/%d", r.Engine, r.Version, len(r.Results), r.WallS, r.CPUS, r.Passes, len(r.WallSAll), len(r.CPUSAll))
	}
	hits := 0
	for _, x := range r.Results {
		hits += len(x)
	}
	if hits != r.Hits {
		t.Fatalf("%s: hits %d, results hold %d", r.Engine, r.Hits, hits)
	}
}

// TestRunSchema runs the whole suite on a tiny speed corpus (and, when not
// -short and the data sets exist, the real quality part) and checks the
// JSON result: required keys, every ratio computed from real runs, equal
// hit counts, and in the quality part every peer within 0.005 of
// REFERENCE.md and Strata's oracle within 0.003.
func TestRunSchema(t *testing.T) {
	needPeers(t)
	src := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("func return error nil string int byte map chan select go defer if else for range struct type var const package import interface")
	for i := 0; i < 60; i++ {
		var b strings.Builder
		for j := 0; j < 50+r.IntN(200); j++ {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(4) == 0 {
				fmt.Fprintf(&b, "%d", r.IntN(1000))
			}
			b.WriteString([]string{" ", "(", ".", "\n", "_"}[r.IntN(5)])
		}
		sub := filepath.Join(src, fmt.Sprintf("p%d", i%5))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.go", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{GoSrc: src, Queries: 50, Rounds: 2, Passes: 2, WorkDir: t.TempDir(), SkipQuality: true}
	quality := false
	if !testing.Short() {
		if d, err := datasets.Dir(); err == nil {
			o.SkipQuality, o.DatasetsDir, quality = false, d, true
		} else if os.Getenv("CI") == "true" {
			t.Fatalf("real datasets required in CI: %v", err)
		}
	}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "started", "finished", "peers", "corpus", "speed", "ratios", "go_version"} {
		if _, ok := m[k]; !ok {
			t.Errorf("results JSON lacks %q", k)
		}
	}
	if m["schema"] != SchemaVersion {
		t.Errorf("schema %v", m["schema"])
	}
	if len(res.Peers) != 3 || res.Peers[0].Version == "" || res.Peers[1].Version == "" || res.Peers[2].Version == "" {
		t.Errorf("peers %+v", res.Peers)
	}
	if res.Corpus.Files != 60 || res.Corpus.Queries != 50 || res.Corpus.Phrases != 50 {
		t.Errorf("corpus %+v", res.Corpus)
	}
	if len(res.Speed) != 4 {
		t.Fatalf("%d speed rows", len(res.Speed))
	}
	byEngine := map[string]SpeedRow{}
	for _, s := range res.Speed {
		byEngine[s.Engine] = s
		if s.IndexBytes <= 0 || s.IndexWallS <= 0 || s.OR.QPSWall <= 0 || s.AND.QPSWall <= 0 || s.Phrase.QPSWall <= 0 || len(s.OR.PassWallS) != 4 {
			t.Errorf("speed row %s incomplete: %+v", s.Engine, s)
		}
		// Same tokens, same queries: the engines must agree on how many
		// documents match (each OR query returns min(10, matches)).
		if s.OR.Hits != res.Speed[0].OR.Hits || s.AND.Hits != res.Speed[0].AND.Hits || s.Phrase.Hits != res.Speed[0].Phrase.Hits {
			t.Errorf("%s hits OR %d AND %d phrase %d, strata %d %d %d", s.Engine, s.OR.Hits, s.AND.Hits, s.Phrase.Hits, res.Speed[0].OR.Hits, res.Speed[0].AND.Hits, res.Speed[0].Phrase.Hits)
		}
	}
	if len(byEngine["strata"].ORByWords) == 0 || len(byEngine[PeerXapian].ORByWords) != len(byEngine["strata"].ORByWords) {
		t.Errorf("by-words split: strata %+v, xapian %+v", byEngine["strata"].ORByWords, byEngine[PeerXapian].ORByWords)
	}
	nr := 0
	for _, x := range res.Ratios {
		if !strings.HasPrefix(x.Metric, "ndcg10") {
			nr++
			p, ok := byEngine[x.Peer]
			if !ok || x.PeerV <= 0 || x.Strata <= 0 || math.Abs(x.Value-x.Strata/x.PeerV) > 1e-12 {
				t.Errorf("ratio %+v not from a real peer run", x)
			}
			if x.Metric == "or_qps_wall" && x.PeerV != p.OR.QPSWall {
				t.Errorf("ratio %+v, peer OR QPS %v", x, p.OR.QPSWall)
			}
		}
	}
	if nr != 27 {
		t.Errorf("%d speed ratios, want 27 (9 per peer)", nr)
	}
	if md := res.Markdown(); !strings.Contains(md, "or_qps_wall") || !strings.Contains(md, "xapian") {
		t.Errorf("markdown lacks the ratio table:\n%s", md)
	}
	if !quality {
		return
	}
	for _, q := range res.Quality {
		t.Logf("%s %s %s: nDCG@10 %.4f MAP %.4f R@100 %.4f", q.Collection, q.Engine, q.Config, q.NDCG10, q.MAP, q.R100)
		tol := 0.005
		if q.Engine == "strata" {
			tol = 0.003
		}
		if q.Reference > 0 && math.Abs(q.NDCG10-q.Reference) > tol {
			t.Errorf("%s %s %s: nDCG@10 %.4f, REFERENCE.md %.4f ± %.3f", q.Collection, q.Engine, q.Config, q.NDCG10, q.Reference, tol)
		}
	}
	if len(res.Quality) != 18 {
		t.Errorf("%d quality rows, want 18", len(res.Quality))
	}
}

func TestOptionsValidate(t *testing.T) {
	err := Options{Rounds: -1, Passes: -1, Queries: -1, Phrases: -1, MaxFiles: -1, SkipQuality: true, SkipSpeed: true}.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"Rounds", "Passes", "Queries", "Phrases", "MaxFiles", "nothing to run"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	if err := (Options{}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestOverlap(t *testing.T) {
	a := [][]int64{{1, 2, 3}, {}, {4}}
	b := [][]int64{{3, 2, 9}, {}, {5}}
	if got := overlap(a, b); math.Abs(got-(2.0/3+1+0)/3) > 1e-12 {
		t.Errorf("overlap %v", got)
	}
}

// TestReferenceMarkdown: a full run's peers are compared with REFERENCE.md
// and a figure beyond 2× is flagged; quick and subsampled runs are not
// compared.
func TestReferenceMarkdown(t *testing.T) {
	r := &Result{Corpus: &CorpusInfo{}, Speed: []SpeedRow{
		{Engine: "strata", OR: OpResult{QPSCPU: 40000}},
		{Engine: "xapian", OR: OpResult{QPSCPU: 19000}, AND: OpResult{QPSCPU: 90000}, IndexBytes: 64 << 20},
		{Engine: "fts5", OR: OpResult{QPSCPU: 800}, IndexBytes: 23 << 20},
	}}
	md := r.referenceMarkdown()
	for _, want := range []string{"| xapian | OR QPS (native C++) | 19000.0 | 13500.0 | 1.41× | ok |",
		"| xapian | AND QPS (native C++) | 90000.0 | 28500.0 | 3.16× | **check the harness** |",
		"| fts5 | index MiB | 23.0 | 22.9 | 1.00× | ok |"} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "| strata |") {
		t.Error("Strata compared with a peer reference")
	}
	r.Quick = true
	if r.referenceMarkdown() != "" {
		t.Error("quick run compared")
	}
	r.Quick, r.Corpus.Subset = false, "first 500 files"
	if r.referenceMarkdown() != "" {
		t.Error("subsampled corpus compared")
	}
}
