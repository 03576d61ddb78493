package ingest

import (
	"context"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// SearchOptions configures what Search adds to the engine's ranking. The
// zero value is: definitions first for identifier-shaped queries only,
// path priors on, no vocabulary bridging (set Bridge).
type SearchOptions struct {
	// Definitions selects the definitions-first lookup: DefsAuto (the
	// default, ""), DefsAlways or DefsOff.
	Definitions string
	// NoPriors turns the path priors off (Priors): hits keep the engine's
	// order and score.
	NoPriors bool
	// Bridge, when not nil, expands prose queries with associated
	// identifier terms (Bridge.Expand) in lexical and hybrid mode; nil =
	// no expansion.
	Bridge *Bridge
}

// Definitions-first modes (SearchOptions.Definitions).
const (
	// DefsAuto looks declarations up only when the whole query looks
	// like code (LooksLikeIdentifier).
	DefsAuto = ""
	// DefsAlways looks up every identifier-like word (SymbolNames), in
	// prose queries too.
	DefsAlways = "always"
	// DefsOff never looks declarations up.
	DefsOff = "off"
)

// LooksLikeIdentifier reports whether the query text is code, not prose:
// 1 to 3 words, each a (possibly qualified) identifier (identRE), each
// either code-shaped — an underscore ("read_full"), a qualifier
// ("strings.EqualFold"), or a lower-to-upper case change ("EqualFold",
// "parseHTTP") — or capitalised ("Grow" in "bytes.Buffer Grow"), and at
// least one code-shaped or the query a single capitalised word ("Copy").
// "returns the number of bytes", "Reader reads data" and "UTF-8 decoder"
// are prose.
func LooksLikeIdentifier(text string) bool {
	words := strings.Fields(text)
	if len(words) == 0 || len(words) > 3 {
		return false
	}
	shaped := false
	for _, w := range words {
		if !identRE.MatchString(w) {
			return false
		}
		cs := codeShaped(w)
		shaped = shaped || cs
		if !cs && !unicode.IsUpper(rune(w[0])) {
			return false
		}
	}
	return shaped || len(words) == 1
}

// codeShaped: an underscore, a dot, or a lower-case letter or digit
// followed by an upper-case letter.
func codeShaped(w string) bool {
	if strings.ContainsAny(w, "_.") {
		return true
	}
	for i := 1; i < len(w); i++ {
		p, c := w[i-1], w[i]
		if (p >= 'a' && p <= 'z' || p >= '0' && p <= '9') && c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

// Path prior factors (Prior). A hit's score is multiplied by the product
// of the factors its path and metadata match.
const (
	PriorGenerated = 0.75 // metadata generated = true (a "Code generated ... DO NOT EDIT." file)
	PriorTest      = 0.5  // a test file (isTestFile: _test.go, test_*.py, *.test.ts, …) or under a test/, tests/ or __tests__/ directory (not an example)
	PriorTestdata  = 0.4  // under a testdata/ directory
	PriorExample   = 0.6  // example_test.go, example_*.go, or under an example/ or examples/ directory
	PriorTxt       = 0.6  // a .txt file (test scripts, golden output)
	PriorCmd       = 0.75 // under a cmd/ directory (tools and their private copies of packages)
	PriorInternal  = 0.75 // under an internal/ directory (copies and helpers below the public API)
)

// PriorUnexported is the factor the path priors give a declaration that
// is not public API in its language (exportedSymbol: a lower-case Go
// name, a Python name with a leading underscore), on top of Prior's: a
// query describing what code does wants the public function, not the
// helpers behind it that share its words. A variable so that benchmarks
// can measure other values (strata-codebench -prior-unexported).
var PriorUnexported = 0.8

// Prior returns the path prior of a chunk: 1 for hand-written public
// implementation code, less for the classes of PriorGenerated..PriorInternal
// (their product when several apply). rel is the slash-separated path
// relative to the indexed root (metadata path).
func Prior(rel string, generated bool) float64 {
	f := 1.0
	if generated {
		f *= PriorGenerated
	}
	rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
	dirs := strings.Split(rel, "/")
	base := dirs[len(dirs)-1]
	dirs = dirs[:len(dirs)-1]
	has := func(names ...string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return slices.Contains(names, d) })
	}
	example := base == "example_test.go" || strings.HasPrefix(base, "example_") || has("example", "examples")
	switch {
	case example:
		f *= PriorExample
	case isTestFile(base) || has("test", "tests", "__tests__"):
		f *= PriorTest
	}
	if has("testdata") {
		f *= PriorTestdata
	}
	if strings.HasSuffix(base, ".txt") {
		f *= PriorTxt
	}
	if has("cmd") {
		f *= PriorCmd
	}
	if has("internal") {
		f *= PriorInternal
	}
	return f
}

// isTestFile reports whether a file name is a test by its language's
// convention: Go name_test.go; Python test_name.py, name_test.py and
// conftest.py; JavaScript and TypeScript name.test.js / name.spec.ts (and
// .jsx, .tsx, .mjs); Rust and C/C++ name_test.rs / name_test.cc.
func isTestFile(base string) bool {
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	switch ext {
	case ".go", ".rs", ".c", ".cc", ".cpp":
		return strings.HasSuffix(stem, "_test")
	case ".py":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || stem == "conftest"
	case ".js", ".jsx", ".mjs", ".ts", ".tsx":
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec")
	}
	return false
}

// hitPrior is Prior of an envelope (metadata path and generated; 1 when
// the path is absent) times PriorUnexported for a declaration (metadata
// symbol) that is not public API.
func hitPrior(h *contract.Envelope) float64 {
	p, ok := h.Metadata[MetaPath].Str()
	if !ok {
		return 1
	}
	g, _ := h.Metadata[MetaGenerated].Boolean()
	f := Prior(p, g)
	if sym, ok := h.Metadata[MetaSymbol].Str(); ok && !exportedSymbol(sym, p) {
		f *= PriorUnexported
	}
	return f
}

// exportedSymbol reports whether a declaration's symbol ("EqualFold",
// "Builder.WriteString", "Class.method") is public API in the language of
// its file rel: in Go, every part begins with an upper-case letter (an
// exported method of an unexported type is not reachable by name); in
// Python, no part begins with an underscore ("__init__"-style dunder
// names count as public); in other languages every symbol counts as
// public.
func exportedSymbol(sym, rel string) bool {
	switch Lang(rel) {
	case "go":
		for _, part := range strings.Split(sym, ".") {
			if part == "" || !unicode.IsUpper([]rune(part)[0]) {
				return false
			}
		}
	case "python":
		for _, part := range strings.Split(sym, ".") {
			if strings.HasPrefix(part, "_") && !(strings.HasPrefix(part, "__") && strings.HasSuffix(part, "__")) {
				return false
			}
		}
	}
	return true
}

// Search is SearchWith with the default options.
func Search(ctx context.Context, col *engine.Collection, q contract.Query) (contract.Result, error) {
	return SearchWith(ctx, col, q, SearchOptions{})
}

// SearchWith is code search over an Index-ed collection: col.Search with
// three additions.
//
// Vocabulary bridging (o.Bridge): the query's Expansion gets the
// down-weighted associated terms of Bridge.Expand (prose queries only;
// up to contract.MaxExpansionTerms in all); every hit's
// Explain.Expansion lists them.
//
// Definitions first: when the query looks like an identifier
// (LooksLikeIdentifier; with DefsAlways, when it has any identifier-like
// word, SymbolNames), the chunks declaring one of the names (metadata
// "names" contains it — an exact keyword filter the engine applies while
// generating BM25 candidates) are ranked first, followed by the other
// hits of the query, without duplicates, up to TopK. Among the
// declarations, those that match a qualified query word's qualifiers
// come first (qualifierMatch: "os.Remove" puts package os's Remove above
// syscall's, "xml.Encoder.Flush" Encoder.Flush above Writer.Flush in the
// same package). So "EqualFold" puts
// strings.EqualFold's and bytes.EqualFold's definitions above the tests
// and callers that mention the name more often. The declaration lookup is
// lexical in hybrid mode too; dense queries (and queries with a vector
// and no mode) and queries with a filter get no lookup.
//
// Path priors (unless o.NoPriors): each list (declarations, then the
// rest) is re-ranked by score × Prior, over the top max(3·TopK, 30)
// hits the engine returns, so a test, testdata file, example, .txt
// script, generated file or cmd/ or internal/ copy, and an unexported
// declaration (PriorUnexported), ranks below the public implementation of
// equal score. Envelope.Score is then score × prior
// and Explain.Prior the factor. Scores need not decrease down the list
// when declarations come first. Result.Epoch is the last search's.
//
// Verification (q.Verify, q.Freshness): when the result carries no
// cursor (priors on, or an expansion) and q has none, the searches run
// unverified and only the returned hits are checked (engine
// Collection.VerifyHits), in rank order: a stale hit goes to
// Result.Dropped and the next candidate takes its place. Otherwise the
// engine verifies each search's page. The declaration lookup runs
// concurrently with the query's own search.
func SearchWith(ctx context.Context, col *engine.Collection, q contract.Query, o SearchOptions) (contract.Result, error) {
	k := q.TopK
	if k == 0 {
		k = contract.DefaultTopK
	}
	lq := q
	if !o.NoPriors {
		lq.TopK = min(contract.MaxTopK, max(3*k, 30))
	}
	var expansion string
	if o.Bridge != nil && q.Mode != contract.Dense && !(q.Mode == "" && len(q.Vector) > 0) {
		if ex := o.Bridge.Expand(q.Text); len(ex) > 0 {
			ex = ex[:max(0, min(len(ex), contract.MaxExpansionTerms-len(q.Expansion)))]
			lq.Expansion = append(slices.Clone(q.Expansion), ex...)
			expansion = FormatExpansion(ex)
		}
	}
	var names []string
	switch o.Definitions {
	case DefsAuto:
		if LooksLikeIdentifier(q.Text) {
			names = SymbolNames(q.Text)
		}
	case DefsAlways:
		names = SymbolNames(q.Text)
	}
	if q.Mode == contract.Dense || (q.Mode == "" && len(q.Vector) > 0) || q.Filter != nil {
		names = nil
	}
	// When the engine's cursor is not passed on, the searches run without
	// verification and only the hits this list returns are verified
	// (col.VerifyHits), in order, the next candidate taking a stale one's
	// place: up to 2·max(3·TopK, 30) candidates are otherwise read and
	// hashed for TopK hits.
	late := (!o.NoPriors || expansion != "") && q.Cursor == "" && (q.Verify || q.Freshness > 0)
	if late {
		lq.Verify, lq.Freshness = false, 0
	}
	var lists []contract.Result
	var defs contract.Result
	var defsErr error
	var wg sync.WaitGroup
	if len(names) > 0 {
		vals := make([]contract.Value, len(names))
		for i, n := range names {
			vals[i] = contract.String(n)
		}
		fq := lq
		f := contract.In(MetaNames, vals...)
		fq.Filter = &f
		// A name is matched by its words, not its meaning.
		fq.Mode, fq.Vector, fq.Expansion = contract.Lexical, nil, q.Expansion
		// The two searches are independent: the declarations run beside
		// the query itself.
		wg.Go(func() { defs, defsErr = col.Search(ctx, fq) })
	}
	res, err := col.Search(ctx, lq)
	wg.Wait()
	if len(names) > 0 {
		if defsErr != nil {
			return contract.Result{}, defsErr
		}
		lists = append(lists, defs)
	}
	if err != nil {
		return contract.Result{}, err
	}
	lists = append(lists, res)
	seen := map[string]bool{}
	var cands []contract.Envelope
	var dropped []contract.Dropped
	for i, l := range lists {
		hits := l.Hits
		if !o.NoPriors {
			hits = rerank(hits)
		}
		if i == 0 && len(names) > 0 {
			hits = byQualifier(hits, q.Text)
		}
		for _, h := range hits {
			if (late || len(cands) < k) && !seen[h.DocID] {
				seen[h.DocID] = true
				cands = append(cands, h)
			}
		}
		dropped = append(dropped, l.Dropped...)
		if l.Partial {
			res.Partial = true
			if res.Reason == "" {
				res.Reason = l.Reason
			}
		}
	}
	out := cands
	if late {
		out = make([]contract.Envelope, 0, k)
		for len(cands) > 0 && len(out) < k {
			n := min(len(cands), k-len(out))
			kept, dr, err := col.VerifyHits(ctx, q, cands[:n])
			if err != nil {
				return contract.Result{}, err
			}
			out = append(out, kept...)
			dropped = append(dropped, dr...)
			cands = cands[n:]
		}
	}
	for i := range out {
		out[i].Explain.Expansion = expansion
	}
	res.Hits, res.Dropped = out, dropped
	if !o.NoPriors || expansion != "" {
		// The engine's cursor continues the engine's list, not this one.
		res.NextCursor = ""
	}
	return res, nil
}

// byQualifier orders declaration hits by qualifierMatch against the
// qualified words of text (stable: equal matches keep their order). hits
// is returned as is when text has no qualified word.
func byQualifier(hits []contract.Envelope, text string) []contract.Envelope {
	var words [][]string
	for _, w := range strings.Fields(text) {
		w = strings.Trim(w, "\"'`+-*()")
		if strings.Contains(w, ".") && identRE.MatchString(w) {
			words = append(words, strings.Split(w, "."))
		}
	}
	if len(words) == 0 {
		return hits
	}
	score := make(map[string]int, len(hits))
	for i := range hits {
		h := &hits[i]
		sym, _ := h.Metadata[MetaSymbol].Str()
		rel, _ := h.Metadata[MetaPath].Str()
		best := 0
		for _, parts := range words {
			best = max(best, qualifierMatch(parts, sym, rel))
		}
		score[h.DocID] = best
	}
	out := slices.Clone(hits)
	slices.SortStableFunc(out, func(a, b contract.Envelope) int { return score[b.DocID] - score[a.DocID] })
	return out
}

// qualifierMatch scores how well a declaration (symbol "Remove" or
// "Encoder.Flush", file rel relative to the indexed root) matches a
// qualified name split at its dots ("os", "Remove"; "xml", "Encoder",
// "Flush"): 0 when the symbol's last part is not the name; otherwise 2
// when the first qualifier is the file's package directory (its last
// element, or the one before a major-version element: math/rand/v2 is
// rand), plus 1 when the symbol is exactly the qualifiers left after the
// package and the name ("Encoder.Flush"; "Remove" for "os.Remove", so a
// function ranks above a same-named method); 1 in another package when
// the symbol is exactly the qualified name with or without its first
// qualifier (a type, or a package of another name: syscall's Remove for
// "os.Remove").
func qualifierMatch(parts []string, sym, rel string) int {
	name, quals := parts[len(parts)-1], parts[:len(parts)-1]
	if sym != name && !strings.HasSuffix(sym, "."+name) {
		return 0
	}
	exact := func(qs []string) bool { return sym == strings.Join(append(slices.Clone(qs), name), ".") }
	switch {
	case len(quals) > 0 && quals[0] == packageDir(rel):
		if exact(quals[1:]) {
			return 3
		}
		return 2
	case exact(quals) || len(quals) > 0 && exact(quals[1:]):
		return 1
	}
	return 0
}

// packageDir is the package name a Go file's directory implies: the last
// element of its directory, or the element before it when that is a
// major version ("v2").
func packageDir(rel string) string {
	dirs := strings.Split(path.Dir(rel), "/")
	d := dirs[len(dirs)-1]
	if len(dirs) > 1 && len(d) > 1 && d[0] == 'v' && strings.Trim(d[1:], "0123456789") == "" {
		d = dirs[len(dirs)-2]
	}
	return d
}

// rerank returns hits ordered by score × Prior (stable: equal products
// keep the engine's order), with Score and Explain.Prior set.
func rerank(hits []contract.Envelope) []contract.Envelope {
	out := slices.Clone(hits)
	for i := range out {
		p := hitPrior(&out[i])
		out[i].Score *= p
		out[i].Explain.Prior = p
	}
	slices.SortStableFunc(out, func(a, b contract.Envelope) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}
