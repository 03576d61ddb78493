package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
)

// copyPackages copies the non-test Go files of GOROOT/src/<pkg> for each
// pkg into root/<pkg> under a go.mod, and returns the copied files per
// package.
func copyPackages(root string, pkgs []string) (map[string][]string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module benchupd\n\ngo 1.22\n"), 0o644); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range pkgs {
		src := filepath.Join(goroot(), "src", p)
		dst := filepath.Join(root, p)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return nil, err
		}
		ents, err := os.ReadDir(src)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			n := e.Name()
			if !e.Type().IsRegular() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, n))
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dst, n), b, 0o644); err != nil {
				return nil, err
			}
			out[p] = append(out[p], filepath.Join(dst, n))
		}
		sort.Strings(out[p])
	}
	return out, nil
}

func openCollection(dir string) (*engine.DB, *engine.Collection, error) {
	return openCollectionWith(dir, nil)
}

// openCollectionWith opens a collection; with emb, one of its dimension
// recording its model (dense and hybrid queries embed through it).
func openCollectionWith(dir string, emb embed.Embedder) (*engine.DB, *engine.Collection, error) {
	return openCollectionSync(dir, emb, "none")
}

// openCollectionSync is openCollectionWith with a WAL sync policy.
func openCollectionSync(dir string, emb embed.Embedder, sync string) (*engine.DB, *engine.Collection, error) {
	var eo engine.Options
	co := engine.CollectionOptions{Dim: 8, Sync: engine.SyncPolicy(sync),
		IndexedFields: map[string]engine.FieldType{ingest.MetaNames: engine.FieldKeyword, ingest.MetaLang: engine.FieldKeyword}}
	if emb != nil {
		eo.Embedders = map[string]embed.Embedder{emb.Model(): emb}
		co.Dim, co.Metric = emb.Dim(), "cosine"
		co.Embedding = &engine.EmbeddingConfig{Model: emb.Model(), Dim: emb.Dim()}
		co.HybridDefault = engine.HybridRRF
	}
	db, err := engine.Open(dir, eo)
	if err != nil {
		return nil, nil, err
	}
	col, err := db.CreateCollection("code", co)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, col, nil
}

func runUpdate(args []string) error {
	fs := newFlags("update")
	rounds := fs.Int("rounds", 20, "edit rounds")
	pkgList := fs.String("pkgs", "go/ast,go/doc,text/template", "three std packages to copy and edit")
	perPkg := fs.Int("files", 5, "files edited per package")
	prof := fs.String("cpuprofile", "", "write a CPU profile of the timed rounds here")
	syncPolicy := fs.String("sync", "none", "the collection's WAL sync policy: none | always (searchd index's default)")
	fs.Parse(args)
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "graphbench-update-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "src")
	files, err := copyPackages(root, strings.Split(*pkgList, ","))
	if err != nil {
		return err
	}
	db, col, err := openCollectionSync(filepath.Join(tmp, "db"), nil, *syncPolicy)
	if err != nil {
		return err
	}
	defer db.Close()
	ix, err := ingest.NewIndexer(col, filepath.Join(tmp, "manifest.json"), ingest.Options{})
	if err != nil {
		return err
	}
	st0, err := ix.Index(ctx, root, ingest.Progress{})
	if err != nil {
		return err
	}
	tb := time.Now()
	r, err := codegraph.BuildGo(ctx, root, []string{"./..."}, codegraph.GoOptions{})
	if err != nil {
		return err
	}
	store := graph.NewStore(r.Graph())
	fmt.Printf("tree: %d files indexed (%d chunks); graph %s built in %.1f s\n", st0.Files, st0.Chunks, store.View().Base().Stats(), time.Since(tb).Seconds())
	var edited []string
	for _, p := range strings.Split(*pkgList, ",") {
		fs := files[p]
		if len(fs) < *perPkg {
			return fmt.Errorf("%s has %d files, fewer than %d", p, len(fs), *perPkg)
		}
		edited = append(edited, fs[:*perPkg]...)
	}
	orig := map[string][]byte{}
	for _, f := range edited {
		orig[f], _ = os.ReadFile(f)
	}
	var total, lex, gr, upd, check, cpu, cpuAll, walk, write, apply, search, expand []time.Duration
	up := codegraph.NewUpdater(ix, store, root, r.PkgOfDir, ingest.Options{})
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for round := -1; round < *rounds; round++ { // round -1 warms up (the first search loads the segments)
		// The edit: every file gets a new function calling the first
		// function its package's graph knows in that file.
		word := fmt.Sprintf("zqedit%dr", round+1)
		for i, f := range edited {
			fn := fmt.Sprintf("StrataEdit%d_%d", round+1, i)
			add := fmt.Sprintf("\n// %s marks edit %s.\nfunc %s() int { return len(%q) }\n", fn, word, fn, word)
			if err := os.WriteFile(f, append(append([]byte(nil), orig[f]...), add...), 0o644); err != nil {
				return err
			}
		}
		// Distinct mtimes: the indexer's size+mtime check must see the edit.
		time.Sleep(5 * time.Millisecond)
		c0 := cpuTime()
		t0 := time.Now()
		us, err := up.Update(ctx, edited, ingest.Progress{})
		if err != nil {
			return err
		}
		t2 := time.Now()
		cpu = append(cpu, cpuTime()-c0)
		// Visible: search finds the new functions, and expansion from
		// them runs over the new nodes.
		ts := time.Now()
		res, err := ingest.Search(ctx, col, contract.Query{Text: word, Mode: contract.Lexical, TopK: 50})
		tsd := time.Since(ts)
		if err != nil {
			return err
		}
		if len(res.Hits) != len(edited) {
			return fmt.Errorf("round %d: search found %d of %d new functions", round, len(res.Hits), len(edited))
		}
		v := store.View()
		for _, h := range res.Hits {
			if len(v.ByDoc(h.DocID)) == 0 {
				return fmt.Errorf("round %d: hit %s is no graph node", round, h.DocID)
			}
		}
		te := time.Now()
		ex, err := codegraph.Expand(ctx, col, v, contract.Query{Text: word, Mode: contract.Lexical}, codegraph.ExpandOptions{SeedK: 15, BudgetTokens: 2000})
		if err != nil {
			return err
		}
		if len(ex.Seeds) != len(edited) {
			return fmt.Errorf("round %d: expansion seeded %d of %d", round, len(ex.Seeds), len(edited))
		}
		t3 := time.Now()
		cpuAll = append(cpuAll, cpuTime()-c0)
		if round < 0 {
			cpu, cpuAll = cpu[:0], cpuAll[:0]
			continue
		}
		lex, gr, upd = append(lex, us.IndexTime), append(gr, us.GraphTime), append(upd, t2.Sub(t0))
		walk, write, apply = append(walk, us.Index.WalkTime), append(write, us.Index.WriteTime), append(apply, us.ApplyTime)
		search, expand = append(search, tsd), append(expand, t3.Sub(te))
		check, total = append(check, t3.Sub(t2)), append(total, t3.Sub(t0))
	}
	for _, f := range edited {
		os.WriteFile(f, orig[f], 0o644)
	}
	fmt.Printf("edit of %d files in %d packages, %d rounds (ms): p50 / p99 / max\n", len(edited), len(strings.Split(*pkgList, ",")), *rounds)
	for _, row := range []struct {
		name string
		d    []time.Duration
	}{{"lexical (ingest incremental pass + upsert)", lex},
		{"  of which walk (stat of every file)", walk}, {"  of which engine Upsert+Delete (WAL)", write},
		{"graph (15 SyntaxFragments + Store.Apply)", gr}, {"  of which Store.Apply (view build+publish)", apply},
		{"Updater.Update (the two side by side)", upd},
		{"check (search + expand over the new view)", check},
		{"  of which the first search after the writes", search}, {"  of which expand", expand},
		{"end to end (update + check)", total},
		{"process CPU time of Update", cpu}, {"process CPU time of update + check", cpuAll}} {
		p50, p99, mx := pct(row.d, 50), pct(row.d, 99), pct(row.d, 100)
		fmt.Printf("  %-44s %7.2f %7.2f %7.2f\n", row.name, ms(p50), ms(p99), ms(mx))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// pct returns the p-th percentile (nearest rank) of ds.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (p*len(s) + 99) / 100
	if i < 1 {
		i = 1
	}
	return s[min(i, len(s))-1]
}
