package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

// The staleness suite measures E_stale, the number of search hits that
// show a version older than one acknowledged before the query began
// (DESIGN.md: a query at epoch e_q sees exactly the versions with
// e_birth ≤ e_q < e_death, so E_stale = 0 by construction), under
// concurrent edits:
//
//   - api: writers upsert new versions of a fixed set of documents through
//     engine.Collection.Upsert while readers search. Before each query a
//     reader reads, per document, the newest version whose Upsert had
//     returned (acknowledged); a hit is stale if its version is older. A
//     read overlaps a write if some Upsert was in flight at any moment of
//     the query.
//   - watch: a temp tree is kept indexed by ingest.Watch (the code
//     of `searchd index --watch`); one file is rewritten with a new marker
//     word and the old marker is searched at once. With contract.Query.Verify
//     (the engine re-hashes each hit's source span) a hit for the old
//     marker is stale and must not occur; without Verify it can, until the
//     fsnotify tombstone lands (Watch's documented window), and is counted
//     for information. The lag until the new marker is found is reported.
//
// The suite fails (an error, after the results are recorded) if E_stale > 0.

const stalenessSuiteName = "staleness"

// StalenessRun is one staleness measurement.
type StalenessRun struct {
	Mode    string  `json:"mode"` // "api" or "watch"
	Seconds float64 `json:"seconds"`
	Docs    int     `json:"docs"`
	Writers int     `json:"writers"`
	Readers int     `json:"readers"`
	// Writes acknowledged (api: Upserts; watch: file edits).
	Writes int64 `json:"writes"`
	// Queries run, hits checked, and the stale hits among them (E_stale).
	Queries int64 `json:"queries"`
	Hits    int64 `json:"hits"`
	EStale  int64 `json:"e_stale"`
	// Overlapping: queries during which some write was in flight (api).
	Overlapping int64 `json:"overlapping_reads"`
	// Missing: api queries that did not return every document (each
	// document matches; TopK = Docs). Information, not staleness.
	Missing int64 `json:"missing_docs,omitempty"`
	// Watch only: hits for the replaced text in unverified searches right
	// after the edit (before the tombstone), and the lag from the write to
	// the new text being found (verified search), p50 and max.
	UnverifiedStale int64   `json:"unverified_stale,omitempty"`
	LagP50Ms        float64 `json:"fresh_lag_p50_ms,omitempty"`
	LagMaxMs        float64 `json:"fresh_lag_max_ms,omitempty"`
	Note            string  `json:"note"`
}

type stalenessSuite struct{}

func init() { Register(stalenessSuite{}) }

func (stalenessSuite) Name() string { return stalenessSuiteName }

// StalenessParams sizes a staleness run.
type StalenessParams struct {
	Docs, Writers, Readers int
	Duration               time.Duration // api mode
	Edits                  int           // watch mode
}

// stalenessParams: quick 2 s / 15 edits, full 10 s / 100 edits.
func stalenessParams(cfg Config) StalenessParams {
	if cfg.Staleness != nil {
		return *cfg.Staleness
	}
	p := StalenessParams{Docs: 64, Writers: 2, Readers: 2, Duration: 10 * time.Second, Edits: 100}
	if cfg.Quick {
		p.Duration, p.Edits = 2*time.Second, 15
	}
	return p
}

func (stalenessSuite) Run(ctx context.Context, cfg Config, res *Results) error {
	p := stalenessParams(cfg)
	work := filepath.Join(cfg.WorkDir, "staleness")
	if err := os.RemoveAll(work); err != nil {
		return fmt.Errorf("bench: staleness: %w", err)
	}
	api, err := StalenessAPI(ctx, filepath.Join(work, "api"), p)
	if err != nil {
		return err
	}
	cfg.logf("staleness api: %d writes, %d queries (%d overlapping a write), %d hits, E_stale %d", api.Writes, api.Queries, api.Overlapping, api.Hits, api.EStale)
	res.Staleness = append(res.Staleness, *api)
	w, err := StalenessWatch(ctx, filepath.Join(work, "watch"), p)
	if err != nil {
		return err
	}
	cfg.logf("staleness watch: %d edits, E_stale %d (verified), %d unverified stale hits, fresh lag p50 %.1f ms max %.1f ms", w.Writes, w.EStale, w.UnverifiedStale, w.LagP50Ms, w.LagMaxMs)
	res.Staleness = append(res.Staleness, *w)
	if api.EStale > 0 || w.EStale > 0 {
		return fmt.Errorf("bench: staleness: E_stale = %d (api) + %d (watch), want 0", api.EStale, w.EStale)
	}
	return nil
}

// staleDoc is the content of version v of document i: every document
// matches the word "stalecheck".
func staleDoc(i int, v int64) string {
	return fmt.Sprintf("stalecheck doc%d ver%d payload words for the lexical index", i, v)
}

func parseStaleDoc(s string) (int, int64, error) {
	f := strings.Fields(s)
	if len(f) < 3 || !strings.HasPrefix(f[1], "doc") || !strings.HasPrefix(f[2], "ver") {
		return 0, 0, fmt.Errorf("bench: staleness: unexpected content %q", s)
	}
	i, err1 := strconv.Atoi(f[1][3:])
	v, err2 := strconv.ParseInt(f[2][3:], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("bench: staleness: unexpected content %q", s)
	}
	return i, v, nil
}

// StalenessAPI runs the api mode in a new store under dir.
func StalenessAPI(ctx context.Context, dir string, p StalenessParams) (*StalenessRun, error) {
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		return nil, fmt.Errorf("bench: staleness: %w", err)
	}
	defer db.Close()
	// Sync "none": acknowledgement order, not durability, is under test.
	col, err := db.CreateCollection("stale", engine.CollectionOptions{Dim: 8, Sync: "none"})
	if err != nil {
		return nil, fmt.Errorf("bench: staleness: %w", err)
	}
	docs := make([]contract.Document, p.Docs)
	for i := range docs {
		docs[i] = contract.Document{ID: fmt.Sprintf("d%03d", i), Content: staleDoc(i, 0), Trust: contract.Authoritative}
	}
	if _, err := col.Upsert(ctx, docs); err != nil {
		return nil, fmt.Errorf("bench: staleness: %w", err)
	}
	acked := make([]atomic.Int64, p.Docs)
	var started, completed atomic.Int64
	run := &StalenessRun{Mode: "api", Docs: p.Docs, Writers: p.Writers, Readers: p.Readers,
		Note: "engine API: Upsert one document per call (sync none) vs Search TopK = docs; stale = a hit's version older than the newest acknowledged before the query; content hash checked against the envelope's version hash"}
	ctx, cancel := context.WithTimeout(ctx, p.Duration)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, p.Writers+p.Readers)
	t0 := time.Now()
	for w := 0; w < p.Writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			next := make([]int64, p.Docs)
			// Writer w owns documents i ≡ w (mod Writers): one writer per
			// document, so its acknowledged versions only grow.
			var mine []int
			for i := w; i < p.Docs; i += p.Writers {
				mine = append(mine, i)
			}
			for n := 0; ctx.Err() == nil; n++ {
				i := mine[n%len(mine)]
				next[i]++
				started.Add(1)
				_, err := col.Upsert(context.Background(), []contract.Document{{ID: fmt.Sprintf("d%03d", i), Content: staleDoc(i, next[i]), Trust: contract.Authoritative}})
				completed.Add(1)
				if err != nil {
					errc <- fmt.Errorf("bench: staleness: upsert: %w", err)
					return
				}
				acked[i].Store(next[i])
			}
		}(w)
	}
	var queries, hits, stale, overlap, missing atomic.Int64
	for r := 0; r < p.Readers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap := make([]int64, p.Docs)
			for ctx.Err() == nil {
				c0 := completed.Load()
				for i := range snap {
					snap[i] = acked[i].Load()
				}
				res, err := col.Search(context.Background(), contract.Query{Text: "stalecheck", TopK: p.Docs, Mode: contract.Lexical})
				s1 := started.Load()
				if err != nil {
					errc <- fmt.Errorf("bench: staleness: search: %w", err)
					return
				}
				queries.Add(1)
				if s1 > c0 {
					overlap.Add(1)
				}
				if len(res.Hits) != p.Docs {
					missing.Add(1)
				}
				for _, h := range res.Hits {
					i, v, err := parseStaleDoc(h.Content)
					if err != nil {
						errc <- err
						return
					}
					if h.VersionHash != engine.VersionHash([]byte(h.Content)) {
						errc <- fmt.Errorf("bench: staleness: %s: version hash %s does not match its content %q", h.DocID, h.VersionHash, h.Content)
						return
					}
					hits.Add(1)
					if i < 0 || i >= p.Docs || v < snap[i] {
						stale.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	run.Seconds = time.Since(t0).Seconds()
	run.Writes, run.Queries, run.Hits, run.EStale, run.Overlapping, run.Missing =
		completed.Load(), queries.Load(), hits.Load(), stale.Load(), overlap.Load(), missing.Load()
	if run.Writes == 0 || run.Queries == 0 {
		return nil, fmt.Errorf("bench: staleness: api run did nothing (%d writes, %d queries)", run.Writes, run.Queries)
	}
	return run, nil
}

// StalenessWatch runs the watch mode in dir (tree and store).
func StalenessWatch(ctx context.Context, dir string, p StalenessParams) (*StalenessRun, error) {
	root := filepath.Join(dir, "tree")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("bench: staleness: %w", err)
	}
	src := func(i int) string {
		return fmt.Sprintf("package w\n\n// Word returns marker%dx.\nfunc Word() string { return \"marker%dx\" }\n", i, i)
	}
	path := filepath.Join(root, "w.go")
	files := map[string]string{"w.go": src(0), "other.go": "package w\n\nfunc Other() {}\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			return nil, fmt.Errorf("bench: staleness: %w", err)
		}
	}
	db, col, err := newCodeCollection(filepath.Join(dir, "data"), 0)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ix, err := ingest.NewIndexer(col, filepath.Join(dir, "manifest.json"), ingest.Options{})
	if err != nil {
		return nil, fmt.Errorf("bench: staleness: %w", err)
	}
	if _, err := ix.Index(ctx, root, ingest.Progress{}); err != nil {
		return nil, fmt.Errorf("bench: staleness: %w", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var passes atomic.Int64
	var werr atomic.Value
	done := make(chan error, 1)
	go func() {
		done <- ingest.Watch(wctx, ix, root, 10*time.Millisecond, func(e ingest.WatchEvent) {
			if e.Err != nil {
				werr.Store(e.Err)
			}
			if e.Stats != nil {
				passes.Add(1)
			}
		})
	}()
	sentinel := filepath.Join(root, "sentinel.txt")
	for deadline := time.Now().Add(10 * time.Second); passes.Load() == 0; {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("bench: staleness: the watcher saw no event within 10 s")
		}
		if err := os.WriteFile(sentinel, []byte(time.Now().String()), 0o644); err != nil {
			return nil, fmt.Errorf("bench: staleness: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	run := &StalenessRun{Mode: "watch", Docs: len(files) + 1, Writers: 1, Readers: 1,
		Note: "ingest.Watch (searchd index --watch), debounce 10 ms: rewrite one file, search its replaced marker at once; E_stale counts verified (Query.Verify) hits for the replaced text, unverified_stale the same search without Verify (before the tombstone lands: Watch's documented window)"}
	var searchErr error
	found := func(word string, verify bool) int64 {
		res, err := col.Search(ctx, contract.Query{Text: word, TopK: 5, Verify: verify, Mode: contract.Lexical})
		if err != nil {
			searchErr = err
			return 0
		}
		run.Queries++
		n := int64(0)
		for _, h := range res.Hits {
			run.Hits++
			if strings.Contains(h.Content, word) {
				n++
			}
		}
		return n
	}
	t0 := time.Now()
	var lags []float64
	for i := 1; i <= p.Edits; i++ {
		w0 := time.Now()
		if err := os.WriteFile(path, []byte(src(i)), 0o644); err != nil {
			return nil, fmt.Errorf("bench: staleness: %w", err)
		}
		old := fmt.Sprintf("marker%dx", i-1)
		run.UnverifiedStale += found(old, false)
		run.EStale += found(old, true)
		run.Writes++
		deadline := time.Now().Add(10 * time.Second)
		for found(fmt.Sprintf("marker%dx", i), true) == 0 {
			if searchErr != nil {
				return nil, fmt.Errorf("bench: staleness: search: %w", searchErr)
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("bench: staleness: edit %d not indexed within 10 s", i)
			}
			time.Sleep(2 * time.Millisecond)
		}
		lags = append(lags, float64(time.Since(w0).Microseconds())/1000)
	}
	if searchErr != nil {
		return nil, fmt.Errorf("bench: staleness: search: %w", searchErr)
	}
	run.Seconds = time.Since(t0).Seconds()
	slices.Sort(lags)
	if len(lags) > 0 {
		run.LagP50Ms, run.LagMaxMs = lags[len(lags)/2], lags[len(lags)-1]
	}
	cancel()
	if err := <-done; err != nil {
		return nil, fmt.Errorf("bench: staleness: watch: %w", err)
	}
	if e, ok := werr.Load().(error); ok && e != nil {
		return nil, fmt.Errorf("bench: staleness: watch: %w", e)
	}
	return run, nil
}
