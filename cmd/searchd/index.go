package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
)

// defaultData is every subcommand's default --data directory.
const defaultData = "./strata-data"

// builtinEmbedBatch is the number of chunks per Embed call of the
// built-in embedder (in-process: one call per engine write batch of
// 4·256 chunks).
const builtinEmbedBatch = 256

// codeDim is the vector dimension of lexical-only collections the CLI
// creates (no vectors are written to them): 512, the dimension of the
// bundled Universal Sentence Encoder Lite embedder. With --embedder the
// collection takes the embedder's dimension (embedder.go).
const codeDim = 512

// parseArgs parses fl over args allowing flags before and after the
// positional arguments ("index PATH --data D" and "index --data D PATH").
func parseArgs(fl *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fl.Parse(args); err != nil {
			return nil, err
		}
		args = fl.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// openCollection opens the embedded store at dir and the named collection,
// creating it (code analyzer, lexical-only) when create is set.
func openCollection(dir, name string, create bool) (*engine.DB, *engine.Collection, error) {
	return openCollectionSync(dir, name, create, "")
}

// openCollectionSync is openCollection with the WAL sync policy of a
// collection it creates ("" = the engine's default, always).
func openCollectionSync(dir, name string, create bool, sync string) (*engine.DB, *engine.Collection, error) {
	return openStore(dir, name, create, sync, nil) // embedder.go
}

// manifestPath is where index keeps a collection's ingest manifest.
func manifestPath(dir, col string) string {
	return filepath.Join(dir, "ingest", col+".manifest.json")
}

func runIndex(args []string) error {
	fl := flag.NewFlagSet("index", flag.ContinueOnError)
	data := fl.String("data", defaultData, "data directory (embedded store)")
	colName := fl.String("collection", "code", "collection name")
	maxFile := fl.Int64("max-file-bytes", 1<<20, "skip files larger than this")
	chunkBytes := fl.Int("chunk-bytes", 2048, "text chunk size cap in bytes (≈ 4 bytes per token)")
	overlap := fl.Int("overlap", 0, "lines repeated between consecutive text chunks")
	syncPolicy := fl.String("sync", "always", "WAL sync policy of a collection this creates: always | interval | none")
	watch := fl.Bool("watch", false, "after indexing, keep watching PATH (fsnotify) until interrupted: tombstone changed files at once, re-index in the background")
	noProgress := fl.Bool("no-progress", false, "no progress bar (also off when stdout is not a terminal)")
	withGraph := fl.Bool("graph", false, "also build the code graph of every PATH (expand, callers, callees, ranked repo_map) into DATA/ingest/COLLECTION.graph; without it an existing graph is updated for the files that changed")
	bridge := fl.Bool("bridge", true, "after indexing, learn the vocabulary bridge (doc-comment words → identifier terms) that search --expand uses (--bridge=false: skip)")
	embFlags := addEmbedderFlags(fl) // embedder.go: --embedder builtin|none|URL, --embedder-model, --embedder-batch
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile of the run to this file (runtime/pprof)")
	memProfile := fl.String("memprofile", "", "write an allocation profile to this file when the run ends (runtime/pprof)")
	fl.Usage = func() {
		fmt.Fprintf(fl.Output(), "usage: searchd index PATH... [flags]\n\nIndex directory trees (incremental on re-runs). The run sets the Go garbage\ncollector to GOGC=200 under a soft memory limit of half the machine's memory,\nunless GOGC or GOMEMLIMIT is set in the environment.\n\n")
		fl.PrintDefaults()
	}
	pos, err := parseArgs(fl, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fl.Usage()
		return errors.New("index: want at least one PATH")
	}
	if len(pos) > 1 && *watch {
		return errors.New("index: --watch takes exactly one PATH")
	}
	roots, err := indexRoots(pos) // searchopts.go
	if err != nil {
		return err
	}
	root := strings.Join(roots, ", ")
	// The store's own directory is never indexed, even when it lies inside
	// the tree (the default ./strata-data under `searchd index .`).
	o := ingest.Options{MaxFileBytes: *maxFile, ChunkBytes: *chunkBytes, OverlapLines: *overlap, ExcludePaths: []string{*data}}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(*data, "ingest"), 0o755); err != nil {
		return err
	}
	tuneIndexGC()                                                // indexgc.go: GOGC 200 under half the memory, unless the environment sets either
	stopProfiles, err := startProfiles(*cpuProfile, *memProfile) // mcp.go
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer stopProfiles()
	out := os.Stdout
	fmt.Fprintf(out, "searchd index: %s → collection %q in %s\n", root, *colName, *data)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	emb, err := embFlags.embedder(ctx)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	tOpen := time.Now()
	var db *engine.DB
	var col *engine.Collection
	if emb != nil {
		db, col, err = openStore(*data, *colName, true, *syncPolicy, emb)
		if errors.Is(err, errLexicalOnly) && !embFlags.explicit() {
			// The default embedder does not apply to a collection indexed
			// lexical-only: keep indexing it so.
			fmt.Fprintf(out, "note: collection %q was indexed lexical-only; it stays so (index into a new --collection to get vectors)\n", *colName)
			emb = nil
		} else if err != nil {
			return err
		}
	}
	if emb == nil {
		db, col, err = openCollectionSync(*data, *colName, true, *syncPolicy)
		if err != nil {
			return err
		}
	}
	switch {
	case emb == nil:
		fmt.Fprintln(out, "mode: lexical-only (BM25), --embedder none: no vectors are written, dense and hybrid search are unavailable.")
	case embFlags.builtin():
		o.Embedder, o.EmbedBatch = emb, builtinEmbedBatch
		fmt.Fprintf(out, "mode: lexical (BM25) + dense: chunks are embedded in-process by the built-in embedder (model %s, %d-d; --embedder none for lexical-only)\n", emb.Model(), emb.Dim())
	default:
		o.Embedder, o.EmbedBatch = emb, *embFlags.batch
		fmt.Fprintf(out, "mode: lexical (BM25) + dense: chunks are embedded by %s (model %s, %d-d, %d per request)\n", *embFlags.url, emb.Model(), emb.Dim(), *embFlags.batch)
	}
	openTime := time.Since(tOpen)

	var bar *progressbar.ProgressBar
	var prog ingest.Progress
	if !*noProgress && term.IsTerminal(int(os.Stdout.Fd())) {
		var files, done int
		var start time.Time
		prog.Start = func(n int, total int64) {
			files, start = n, time.Now()
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(out),
				progressbar.OptionShowBytes(true), progressbar.OptionSetWidth(30),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish(),
				progressbar.OptionSetDescription("indexing"))
		}
		// Advance runs on the indexing goroutine, Embedded on the writer
		// goroutine: shared counters are atomic (the bar itself is safe for
		// concurrent use).
		var doneN, embedded atomic.Int64
		describe := func() {
			secs := max(time.Since(start).Seconds(), 1e-9)
			dn := doneN.Load()
			d := fmt.Sprintf("files %d/%d (%.0f files/s)", dn, files, float64(dn)/secs)
			if emb != nil {
				en := embedded.Load()
				d += fmt.Sprintf(", embedded %d (%.1f/s)", en, float64(en)/secs)
			}
			bar.Describe(d)
		}
		prog.Advance = func(b int64) {
			done++
			doneN.Store(int64(done))
			if done%50 == 0 || done == files {
				describe()
			}
			bar.Add64(b)
		}
		if emb != nil {
			prog.Embedded = func(n int, _ int64) {
				embedded.Add(int64(n))
				describe()
			}
		}
	}
	// A collection with a code graph keeps it current: each pass updates
	// the graph of the files it rewrote or dropped (codegraph.Updater,
	// syntax-level for Go); --graph rebuilds it whole instead.
	var gst *graph.Store
	if !*withGraph {
		if gst, err = loadGraph(*data, *colName); err != nil {
			return fmt.Errorf("index: %w (rebuild it with --graph)", err)
		}
	}
	var pkgs map[string]string
	if gst != nil {
		pkgs = codegraph.PkgOfDirOf(gst.View())
	}
	graphFiles := 0
	ix, ierr := ingest.NewIndexer(col, manifestPath(*data, *colName), o)
	var st ingest.Stats
	for _, r := range roots {
		if ierr != nil {
			break
		}
		var rs ingest.Stats
		if gst != nil {
			var us codegraph.UpdateStats
			us, ierr = codegraph.NewUpdater(ix, gst, r, pkgs, o).Update(ctx, nil, prog)
			rs, graphFiles = us.Index, graphFiles+us.Fragments
		} else {
			rs, ierr = ix.Index(ctx, r, prog)
		}
		st = addStats(st, rs) // searchopts.go
	}
	if bar != nil {
		bar.Finish()
	}
	switch {
	case ierr != nil:
	case *withGraph:
		gst, ierr = writeGraph(ctx, out, *data, *colName, roots, o)
	case graphFiles > 0:
		if ierr = saveGraph(*data, *colName, gst); ierr == nil {
			fmt.Fprintf(out, "graph:   %d files updated (Go syntax-level until the next index --graph)\n", graphFiles)
		}
	}
	if ierr == nil && *bridge {
		ierr = buildBridge(ctx, out, col, bridgePath(*data, *colName)) // searchopts.go
	}
	if ierr == nil && *watch {
		size, _ := dirSize(*data)
		printIndexSummary(out, st, size, openTime, 0)
		fmt.Fprintf(out, "watching %s (Ctrl-C to stop; the store stays locked meanwhile)\n", root)
		ierr = watchTree(ctx, out, ix, gst, *data, *colName, roots[0], o, 200*time.Millisecond)
	}
	tClose := time.Now()
	if ierr == nil && !*watch && st.Chunks > 0 {
		// Write the MemTable as a warm segment now: otherwise every later
		// opening (each `searchd search`) replays its WAL tail, analysing
		// its text again and rebuilding its vector index, seconds for a
		// tree like GOROOT/src. The flush also retires the WAL.
		ierr = col.Flush(ctx)
	}
	cerr := db.Close()
	closeTime := time.Since(tClose)
	if ierr != nil {
		return ierr
	}
	if cerr != nil {
		return cerr
	}
	if *watch {
		fmt.Fprintf(out, "stopped watching; store closed in %v\n", closeTime.Round(time.Millisecond))
		return nil
	}
	size, _ := dirSize(*data)
	printIndexSummary(out, st, size, openTime, closeTime)
	return nil
}

// watchTree keeps root indexed (ingest.WatchWith) until ctx ends. With
// a code graph (gst not nil) each re-index pass is a codegraph.Updater
// update of the changed files, so expand, callers and callees see an
// edit with its text, and the graph is saved (saveGraph) after each pass
// that changed it.
func watchTree(ctx context.Context, out io.Writer, ix *ingest.Indexer, gst *graph.Store, dataDir, col, root string, o ingest.Options, debounce time.Duration) error {
	wo := ingest.WatchOptions{Debounce: debounce}
	if gst != nil {
		up := codegraph.NewUpdater(ix, gst, root, nil, o)
		wo.Reindex = func(ctx context.Context, changed []string) (ingest.Stats, error) {
			us, err := up.Update(ctx, changed, ingest.Progress{})
			if err != nil || us.Fragments == 0 {
				return us.Index, err
			}
			if err := saveGraph(dataDir, col, gst); err != nil {
				return us.Index, err
			}
			fmt.Fprintf(out, "graph: %d files updated (epoch %d) in %v\n", us.Fragments, us.GraphEpoch, us.Elapsed.Round(time.Millisecond))
			return us.Index, nil
		}
	}
	return ingest.WatchWith(ctx, ix, root, wo, func(e ingest.WatchEvent) {
		switch {
		case e.Err != nil:
			fmt.Fprintln(os.Stderr, "searchd:", e.Err)
		case e.Stats != nil:
			fmt.Fprintf(out, "re-indexed: %d files changed, %d removed, %d chunks written, %d deleted in %v\n",
				e.Stats.Indexed, e.Stats.Removed, e.Stats.Chunks, e.Stats.Deleted, e.Stats.Elapsed.Round(time.Millisecond))
		default:
			fmt.Fprintf(out, "changed: %s (%d chunks tombstoned)\n", shortPath(e.Path), e.Tombstoned)
		}
	})
}

func printIndexSummary(w io.Writer, st ingest.Stats, size int64, openTime, closeTime time.Duration) {
	secs := max(st.Elapsed.Seconds(), 1e-9)
	fmt.Fprintf(w, "files:   %d walked, %d indexed, %d unchanged, %d removed, %d read from disk\n",
		st.Files, st.Indexed, st.Unchanged, st.Removed, st.Read)
	if st.Skips.Total() > 0 {
		fmt.Fprintf(w, "skipped: %d (%s)\n", st.Skips.Total(), st.Skips)
	} else {
		fmt.Fprintln(w, "skipped: 0")
	}
	fmt.Fprintf(w, "chunks:  %d written, %d deleted, %d engine write batches\n", st.Chunks, st.Deleted, st.Batches)
	fmt.Fprintf(w, "bytes:   %.1f MiB read in %v: %s, %.0f files/s\n",
		float64(st.Bytes)/(1<<20), st.Elapsed.Round(time.Millisecond), rate(st.Bytes, st.Elapsed), float64(st.Read)/secs)
	if st.Generated > 0 {
		fmt.Fprintf(w, "generated: %d files indexed with metadata generated=true (ranked below hand-written code)\n", st.Generated)
	}
	fmt.Fprintf(w, "time:    walk %v, engine writes %v, read+chunk+hash the rest (%d cores)\n",
		st.WalkTime.Round(time.Millisecond), st.WriteTime.Round(time.Millisecond), runtime.GOMAXPROCS(0))
	if st.Embedded > 0 {
		es := max(st.EmbedTime.Seconds(), 1e-9)
		fmt.Fprintf(w, "embed:   %d chunks (%.1f KiB of text) in %v: %.1f chunks/s, %.1f KB/s (overlapping the reading and chunking)\n",
			st.Embedded, float64(st.EmbedBytes)/1024, st.EmbedTime.Round(time.Millisecond), float64(st.Embedded)/es, float64(st.EmbedBytes)/1e3/es)
	}
	fmt.Fprintf(w, "store:   open %v (WAL replay), close %v; size on disk %.1f MiB\n",
		openTime.Round(time.Millisecond), closeTime.Round(time.Millisecond), float64(size)/(1<<20))
}

// dirSize sums the sizes of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n, err
}

// shortPath renders an absolute path relative to the working directory
// when that is shorter.
func shortPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") && len(r) < len(p) {
			return r
		}
	}
	return p
}
