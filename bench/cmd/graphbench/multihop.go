package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
)

// Case is one multi-hop question: the entry function's doc sentence with
// its name removed, and the root cause, a function Depth direct CALLS
// below the entry (the shortest such path).
type Case struct {
	Query     string
	Entry     string // key
	Root      string // key
	RootDoc   string // chunk id
	Depth     int
	EntryPath []string
}

var sentenceEnd = regexp.MustCompile(`[.!?](\s|$)`)

// firstSentence returns the doc comment's first sentence without the
// declared name (and a leading "Deprecated:").
func firstSentence(doc, name string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	if loc := sentenceEnd.FindStringIndex(doc); loc != nil {
		doc = doc[:loc[0]]
	}
	short := name[strings.LastIndex(name, ".")+1:]
	var words []string
	for _, w := range strings.Fields(doc) {
		if strings.Trim(w, "(),.:;`'\"*") == short || strings.Trim(w, "(),.:;`'\"*") == name {
			continue
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// generate draws up to n cases from the direct-call graph g (seeded):
// entries with a doc sentence of at least 5 words, roots at CALLS
// distance 2 or 3 inside the indexed packages, not hubs, whose name
// does not occur in the query.
func generate(g *graph.Graph, docs map[string]string, indexed func(string) bool, n int, seed uint64) []Case {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b9))
	var entries []graph.NodeID
	for i := 0; i < g.N(); i++ {
		nd := g.Node(graph.NodeID(i))
		if nd.Kind == graph.Func && nd.DocID != "" && indexed(nd.File) && len(strings.Fields(firstSentence(docs[nd.Key], nd.Name))) >= 5 {
			entries = append(entries, graph.NodeID(i))
		}
	}
	rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	var out []Case
	for _, e := range entries {
		if len(out) >= n {
			break
		}
		// BFS over direct CALLS to depth 3.
		depth := map[graph.NodeID]int{e: 0}
		prev := map[graph.NodeID]graph.NodeID{}
		q := []graph.NodeID{e}
		for len(q) > 0 {
			u := q[0]
			q = q[1:]
			if depth[u] == 3 {
				continue
			}
			for _, ed := range g.Out(u) {
				if ed.Kind != graph.Calls {
					continue
				}
				if _, ok := depth[ed.To]; !ok {
					depth[ed.To] = depth[u] + 1
					prev[ed.To] = u
					q = append(q, ed.To)
				}
			}
		}
		query := firstSentence(docs[g.Node(e).Key], g.Node(e).Name)
		var cands []graph.NodeID
		for id, d := range depth {
			nd := g.Node(id)
			if d < 2 || nd.Kind != graph.Func || nd.DocID == "" || !indexed(nd.File) || nd.DocID == g.Node(e).DocID {
				continue
			}
			short := nd.Name[strings.LastIndex(nd.Name, ".")+1:]
			if strings.Contains(strings.ToLower(query), strings.ToLower(short)) {
				continue
			}
			if len(g.Out(id))+len(g.In(id)) > 64 {
				continue
			}
			cands = append(cands, id)
		}
		if len(cands) == 0 {
			continue
		}
		sort.Slice(cands, func(i, j int) bool { return cands[i] < cands[j] })
		r := cands[rng.IntN(len(cands))]
		var path []string
		for x := r; ; x = prev[x] {
			path = append([]string{g.Node(x).Name}, path...)
			if x == e {
				break
			}
		}
		out = append(out, Case{Query: query, Entry: g.Node(e).Key, Root: g.Node(r).Key, RootDoc: g.Node(r).DocID, Depth: depth[r], EntryPath: path})
	}
	return out
}

func runMultihop(args []string) error {
	fs := newFlags("multihop")
	pkgList := fs.String("pkgs", "encoding/json,encoding/xml,text/template,go/printer,go/parser,go/scanner,go/doc,net/url,bufio,compress/flate,archive/tar,archive/zip,image/png,mime/multipart,html/template", "std packages indexed and graphed")
	n := fs.Int("n", 200, "cases")
	seed := fs.Uint64("seed", 1, "generator seed")
	k0 := fs.Int("k0", 5, "seeds k₀ for BFS and PPR")
	dyn := fs.String("dynamic", "vta", "dynamic call edges in the expansion graph: none, cha, vta")
	show := fs.Int("show", 3, "print this many cases")
	reverse := fs.Float64("reverse", 0, "PPR backward-edge factor (0: the default)")
	eps := fs.Float64("eps", 0, "PPR ε (0: the default)")
	wref := fs.Float64("wref", 0, "PPR REFERENCES/READS weight override (0: the defaults)")
	embURL := fs.String("embedder", "", "embeddings server (tools/embed-server): flat, BFS and PPR seed with hybrid search (RRF k=60) instead of lexical")
	fs.Parse(args)
	ctx := context.Background()
	pkgs := strings.Split(*pkgList, ",")
	src := filepath.Join(goroot(), "src")
	indexed := func(file string) bool {
		for _, p := range pkgs {
			if filepath.Dir(file) == filepath.Join(src, p) {
				return true
			}
		}
		return false
	}
	tmp, err := os.MkdirTemp("", "graphbench-multihop-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var emb embed.Embedder
	mode := contract.Lexical
	if *embURL != "" {
		c, err := embed.NewClient(embed.Options{BaseURL: *embURL, Model: "use-lite-512"})
		if err != nil {
			return err
		}
		if _, err := c.Probe(ctx); err != nil {
			return err
		}
		emb, mode = c, contract.Hybrid
	}
	db, col, err := openCollectionWith(filepath.Join(tmp, "db"), emb)
	if err != nil {
		return err
	}
	defer db.Close()
	t0 := time.Now()
	chunks := 0
	for i, p := range pkgs {
		st, err := ingest.Index(ctx, col, filepath.Join(tmp, fmt.Sprintf("m%d.json", i)), filepath.Join(src, p), ingest.Options{Embedder: emb}, ingest.Progress{})
		if err != nil {
			return err
		}
		chunks += st.Chunks
	}
	fmt.Printf("indexed %d packages (tests included): %d chunks in %.1f s; seeds and flat ranking: %s search\n", len(pkgs), chunks, time.Since(t0).Seconds(), mode)
	t0 = time.Now()
	direct, err := codegraph.BuildGo(ctx, src, pkgs, codegraph.GoOptions{Dynamic: codegraph.DynamicNone})
	if err != nil {
		return err
	}
	full := direct
	if *dyn != "none" {
		if full, err = codegraph.BuildGo(ctx, src, pkgs, codegraph.GoOptions{Dynamic: codegraph.Dynamic(*dyn)}); err != nil {
			return err
		}
	}
	dg, fg := direct.Graph(), full.Graph()
	fmt.Printf("graphs built in %.1f s: direct %d edges; expansion graph (%s) %s\n", time.Since(t0).Seconds(), dg.NumEdges(), *dyn, fg.Stats())
	docs, err := docComments(dg)
	if err != nil {
		return err
	}
	cases := generate(dg, docs, indexed, *n, *seed)
	d2 := 0
	for _, c := range cases {
		if c.Depth == 2 {
			d2++
		}
	}
	fmt.Printf("generator (seed %d): %d cases, %d at depth 2, %d at depth 3\n", *seed, len(cases), d2, len(cases)-d2)
	for i := 0; i < *show && i < len(cases); i++ {
		fmt.Printf("  case %d: query %q; path %s\n", i, cases[i].Query, strings.Join(cases[i].EntryPath, " -> "))
	}
	sn, err := col.Snapshot()
	if err != nil {
		return err
	}
	defer sn.Close()
	tokCache := map[string]int{}
	tokens := func(doc string) (int, bool) {
		if t, ok := tokCache[doc]; ok {
			return t, t >= 0
		}
		d, err := sn.Get(ctx, doc)
		t := -1
		if err == nil {
			t = codegraph.TokensOf(d.Content, d.Metadata)
		}
		tokCache[doc] = t
		return t, t >= 0
	}
	v := graph.NewView(fg)
	budgets := []int{2000, 4000, 8000}
	type tally struct{ ok [3]int }
	var flat, ppr tally
	var bfsOK [4][3]int
	var bfsNeed [4][]int
	var bfsReach [4]int
	var lat []time.Duration
	var visited []int
	for _, c := range cases {
		q := contract.Query{Text: c.Query, Mode: mode}
		// Flat: top-k in rank order while the budget lasts.
		fq := q
		fq.TopK = 100
		res, err := ingest.Search(ctx, col, fq)
		if err != nil {
			return err
		}
		for bi, b := range budgets {
			used := 0
			for _, h := range res.Hits {
				t := codegraph.TokensOf(h.Content, h.Metadata)
				if used+t > b {
					continue
				}
				used += t
				if h.DocID == c.RootDoc {
					flat.ok[bi]++
					break
				}
			}
		}
		// BFS from the k₀ seeds over forward edges, depth 1..3: the
		// tokens the whole frontier needs, and success within each budget
		// (chunks taken in BFS order).
		var seeds []graph.NodeID
		for i := 0; i < len(res.Hits) && i < *k0; i++ {
			seeds = append(seeds, v.ByDoc(res.Hits[i].DocID)...)
		}
		for d := 1; d <= 3; d++ {
			order := bfs(v, seeds, d)
			need, reached := 0, false
			seen := map[string]bool{}
			used := [3]int{}
			got := [3]bool{}
			for _, id := range order {
				doc := v.Node(id).DocID
				if doc == "" || seen[doc] {
					continue
				}
				seen[doc] = true
				t, ok := tokens(doc)
				if !ok {
					continue
				}
				need += t
				for bi, b := range budgets {
					if used[bi]+t <= b {
						used[bi] += t
						if doc == c.RootDoc {
							got[bi] = true
						}
					}
				}
				if doc == c.RootDoc {
					reached = true
				}
			}
			bfsNeed[d] = append(bfsNeed[d], need)
			if reached {
				bfsReach[d]++
			}
			for bi := range budgets {
				if got[bi] {
					bfsOK[d][bi]++
				}
			}
		}
		// PPR.
		for bi, b := range budgets {
			t := time.Now()
			po := graph.PPROptions{Reverse: *reverse, Epsilon: *eps}
			if *wref != 0 {
				po.Weights = graph.DefaultWeights()
				po.Weights[graph.References], po.Weights[graph.Reads] = *wref, *wref
			}
			ex, err := codegraph.Expand(ctx, col, v, q, codegraph.ExpandOptions{SeedK: *k0, BudgetTokens: b, PPR: po})
			el := time.Since(t)
			if err == codegraph.ErrNoSeeds {
				continue
			}
			if err != nil {
				return err
			}
			if b == 4000 {
				lat = append(lat, el)
				visited = append(visited, ex.Visited)
			}
			for _, h := range ex.Hits {
				if h.DocID == c.RootDoc {
					ppr.ok[bi]++
					break
				}
			}
		}
	}
	N := float64(len(cases))
	fmt.Printf("success rate (root cause in the evidence), %d cases, k₀ = %d seeds for BFS and PPR:\n", len(cases), *k0)
	fmt.Printf("  %-22s %8s %8s %8s\n", "method", "2k", "4k", "8k")
	fmt.Printf("  %-22s %8.3f %8.3f %8.3f\n", "flat "+string(mode)+" top-k", float64(flat.ok[0])/N, float64(flat.ok[1])/N, float64(flat.ok[2])/N)
	for d := 1; d <= 3; d++ {
		fmt.Printf("  %-22s %8.3f %8.3f %8.3f   unbounded %.3f; tokens needed p50 %d, mean %d, max %d; overflow at 4k in %.0f%% of cases\n",
			fmt.Sprintf("BFS depth %d (truncated)", d), float64(bfsOK[d][0])/N, float64(bfsOK[d][1])/N, float64(bfsOK[d][2])/N,
			float64(bfsReach[d])/N, ipct(bfsNeed[d], 50), imean(bfsNeed[d]), ipct(bfsNeed[d], 100), 100*frac(bfsNeed[d], 4000))
	}
	fmt.Printf("  %-22s %8.3f %8.3f %8.3f\n", "PPR (α=0.85)", float64(ppr.ok[0])/N, float64(ppr.ok[1])/N, float64(ppr.ok[2])/N)
	fmt.Printf("expand latency at 4k (search + PPR + fetch): p50 %.2f ms, p99 %.2f ms; visited nodes p50 %d, max %d\n",
		ms(pct(lat, 50)), ms(pct(lat, 99)), ipct(visited, 50), ipct(visited, 100))
	return nil
}

// bfs returns the nodes within depth forward edges of the seeds (CALLS,
// REFERENCES, READS, MODIFIES, TYPED_AS), in BFS order, seeds first.
func bfs(v *graph.View, seeds []graph.NodeID, depth int) []graph.NodeID {
	d := map[graph.NodeID]int{}
	var order []graph.NodeID
	for _, s := range seeds {
		if _, ok := d[s]; !ok {
			d[s] = 0
			order = append(order, s)
		}
	}
	for i := 0; i < len(order); i++ {
		u := order[i]
		if d[u] == depth {
			continue
		}
		v.Out(u, func(e graph.Edge) bool {
			switch e.Kind {
			case graph.Calls, graph.References, graph.Reads, graph.Modifies, graph.TypedAs:
				if _, ok := d[e.To]; !ok {
					d[e.To] = d[u] + 1
					order = append(order, e.To)
				}
			}
			return true
		})
	}
	return order
}

// docComments reads each func node's doc comment (the lines above its
// declaration inside its chunk).
func docComments(g *graph.Graph) (map[string]string, error) {
	out := map[string]string{}
	cache := map[string][]string{}
	for i := 0; i < g.N(); i++ {
		n := g.Node(graph.NodeID(i))
		if n.Kind != graph.Func || n.Line < 2 {
			continue
		}
		lines, ok := cache[n.File]
		if !ok {
			b, err := os.ReadFile(n.File)
			if err != nil {
				return nil, err
			}
			lines = strings.Split(string(b), "\n")
			cache[n.File] = lines
		}
		var doc []string
		for l := n.Line - 2; l >= 0 && l < len(lines); l-- {
			s := strings.TrimSpace(lines[l])
			if !strings.HasPrefix(s, "//") {
				break
			}
			doc = append([]string{strings.TrimSpace(strings.TrimPrefix(s, "//"))}, doc...)
		}
		out[n.Key] = strings.Join(doc, " ")
	}
	return out, nil
}

func ipct(xs []int, p int) int {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	i := (p*len(s) + 99) / 100
	return s[max(1, min(i, len(s)))-1]
}

func imean(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	t := 0
	for _, x := range xs {
		t += x
	}
	return t / len(xs)
}

func frac(xs []int, above int) float64 {
	if len(xs) == 0 {
		return 0
	}
	n := 0
	for _, x := range xs {
		if x > above {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}
