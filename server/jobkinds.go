package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
	"github.com/stratasearch/strata/vfs"
)

// registerBuiltinJobs registers flush, compact, index, archive and promote.
func (s *Server) registerBuiltinJobs() {
	s.RegisterJobKind("flush", CollectionJob(func(ctx context.Context, c *engine.Collection, p *Progress) error {
		p.Logf("flushing %s", c.Name())
		return c.Flush(ctx)
	}))
	s.RegisterJobKind("compact", CollectionJob(func(ctx context.Context, c *engine.Collection, p *Progress) error {
		p.Logf("compacting %s", c.Name())
		return c.Compact(ctx)
	}))
	s.RegisterJobKind("index", s.indexJob)
	s.RegisterJobKind("archive", CollectionJobParams(func(ctx context.Context, c *engine.Collection, p *Progress, o ArchiveParams) error {
		id, err := c.Archive(ctx, engine.ArchiveOptions{Segments: o.Segments, Oldest: o.Oldest, OmitVectors: o.OmitVectors, Nlist: o.Nlist})
		if err == nil {
			p.Logf("archived %s into cold archive %d", c.Name(), id)
		}
		return err
	}))
	s.RegisterJobKind("promote", promoteJob)
}

// ArchiveParams are the params of an "archive" job (engine.ArchiveOptions):
// the warm segment ids to archive, or else the Oldest oldest (default 1).
type ArchiveParams struct {
	Segments    []uint64 `json:"segments,omitempty"`
	Oldest      int      `json:"oldest,omitempty"`
	OmitVectors bool     `json:"omit_vectors,omitempty"`
	Nlist       int      `json:"nlist,omitempty"`
}

// maxArchiveNlist is the cold codec's largest coarse quantizer
// (engine.ArchiveOptions.Nlist).
const maxArchiveNlist = 65536

// validate checks the params at submission: oldest ≥ 0 (0 = the default
// 1), 0 ≤ nlist ≤ 65536 (0 = the default), segment ids ≥ 1 and distinct.
func (o *ArchiveParams) validate() []contract.FieldError {
	var fes []contract.FieldError
	loc := func(f string, more ...any) []any { return append([]any{"body", "params", f}, more...) }
	if o.Oldest < 0 {
		fes = append(fes, contract.FieldError{Loc: loc("oldest"), InputValue: o.Oldest, ErrorType: contract.ErrTypeOutOfRange,
			Message: "oldest must not be negative", ExpectedDomain: "0 (the default, 1) or a number of warm segments ≥ 1"})
	}
	if o.Nlist < 0 || o.Nlist > maxArchiveNlist {
		fes = append(fes, contract.FieldError{Loc: loc("nlist"), InputValue: o.Nlist, ErrorType: contract.ErrTypeOutOfRange,
			Message: "nlist is out of range", ExpectedDomain: "0 (the default) or 1..65536"})
	}
	seen := map[uint64]bool{}
	for i, id := range o.Segments {
		switch {
		case id == 0:
			fes = append(fes, contract.FieldError{Loc: loc("segments", i), InputValue: id, ErrorType: contract.ErrTypeOutOfRange,
				Message: "segment ids start at 1", ExpectedDomain: "a warm segment id ≥ 1"})
		case seen[id]:
			fes = append(fes, contract.FieldError{Loc: loc("segments", i), InputValue: id, ErrorType: contract.ErrTypeDuplicate,
				Message: "segment id given twice", ExpectedDomain: "distinct warm segment ids"})
		}
		seen[id] = true
	}
	return fes
}

// promoteJob is the "promote" JobMaker: params {"archive_id": N} are checked
// at submission: a missing or 0 archive_id is a 400, an id that is not one
// of the collection's cold archives (Collection.Archives) a 404; nothing is
// queued then. (The archive may still vanish before the job runs; the job
// then fails with the engine's error.)
func promoteJob(db *engine.DB, req JobRequest) (JobFunc, error) {
	var o PromoteParams
	run := CollectionJobParams(func(ctx context.Context, c *engine.Collection, p *Progress, o PromoteParams) error {
		id, err := c.Promote(ctx, o.ArchiveID, func(done, total int) { p.Set(float64(done) / float64(max(total, 1))) })
		if err == nil {
			p.Logf("promoted cold archive %d of %s into warm segment %d", o.ArchiveID, c.Name(), id)
		}
		return err
	})
	f, err := run(db, req)
	if err != nil {
		return nil, err
	}
	if len(req.Params) > 0 && string(req.Params) != "null" {
		if err := contract.Decode(bytes.NewReader(req.Params), "params", &o); err != nil {
			return nil, err
		}
	}
	if o.ArchiveID == 0 {
		return nil, validation(contract.FieldError{Loc: []any{"body", "params", "archive_id"}, InputValue: 0, ErrorType: contract.ErrTypeMissing,
			Message: "archive_id is required (a cold archive id ≥ 1)", ExpectedDomain: "the id of one of the collection's cold archives"})
	}
	col, err := db.Collection(req.Collection)
	if err != nil {
		return nil, err
	}
	for _, a := range col.Archives() {
		if a.ID == o.ArchiveID {
			return f, nil
		}
	}
	return nil, newErr(http.StatusNotFound, StatusNotFound, "not_found", "no such cold archive in this collection",
		[]any{"body", "params", "archive_id"}, o.ArchiveID, "the id of one of the collection's cold archives")
}

// PromoteParams are the params of a "promote" job.
type PromoteParams struct {
	ArchiveID uint64 `json:"archive_id"`
}

// underRoot reports whether p (clean, absolute) is root or inside it.
func underRoot(p, root string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// allowedIndexPath checks an index job's path lexically: absolute, clean,
// under an index root.
func (s *Server) allowedIndexPath(p string) error {
	if len(s.o.IndexRoots) == 0 {
		return &RequestError{Field: "path", Message: "index jobs are disabled (start the server with --index-root DIR)"}
	}
	if p == "" {
		return &RequestError{Field: "path", Message: "path is required"}
	}
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return &RequestError{Field: "path", Message: "path must be absolute and clean (no \".\" or \"..\" segments)"}
	}
	for _, r := range s.o.IndexRoots {
		if underRoot(p, r) {
			return nil
		}
	}
	return &RequestError{Field: "path", Message: "path is outside every index root"}
}

// indexJob is the "index" JobMaker: one incremental ingest pass of
// req.Path into req.Collection (created with the CLI's code settings when
// missing: Dim 512, cosine, code analyzer, keyword fields lang, kind,
// symbol, path, names), against the manifest DataDir/ingest/<c>.manifest.json
// that `searchd index` uses too. The path is checked lexically at submission
// and again after resolving symlinks when the job starts (a symlink under a
// root pointing outside every root is refused). The store's own data
// directory is never indexed.
func (s *Server) indexJob(db *engine.DB, req JobRequest) (JobFunc, error) {
	if req.Collection == "" {
		return nil, &RequestError{Field: "collection", Message: "collection is required"}
	}
	if len(req.Params) > 0 && string(req.Params) != "{}" && string(req.Params) != "null" {
		return nil, &RequestError{Field: "params", Message: "index takes no params"}
	}
	if err := s.allowedIndexPath(req.Path); err != nil {
		return nil, err
	}
	return func(ctx context.Context, p *Progress) error {
		real, err := filepath.EvalSymlinks(req.Path)
		if err != nil {
			return fmt.Errorf("server: index path: %w", err)
		}
		ok := false
		for _, r := range s.o.IndexRoots {
			rr, err := filepath.EvalSymlinks(r)
			if err == nil && underRoot(real, rr) {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("server: index path %s resolves to %s, outside every index root", req.Path, real)
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return fmt.Errorf("server: index path %s is not a directory", req.Path)
		}
		col, err := db.Collection(req.Collection)
		if errors.Is(err, engine.ErrNotFound) {
			col, err = db.CreateCollection(req.Collection, engine.CollectionOptions{
				Dim: 512, Metric: "cosine", Analyzer: engine.AnalyzerCode,
				IndexedFields: map[string]engine.FieldType{
					ingest.MetaLang: engine.FieldKeyword, ingest.MetaKind: engine.FieldKeyword,
					ingest.MetaSymbol: engine.FieldKeyword, ingest.MetaPath: engine.FieldKeyword,
					ingest.MetaNames: engine.FieldKeyword,
				},
			})
			if errors.Is(err, engine.ErrExists) {
				col, err = db.Collection(req.Collection)
			}
		}
		if err != nil {
			return err
		}
		if err := vfs.MkdirAllDurable(vfs.Default, filepath.Join(s.o.DataDir, "ingest")); err != nil {
			return err
		}
		absData, _ := filepath.Abs(s.o.DataDir)
		ix, err := ingest.NewIndexer(col, filepath.Join(s.o.DataDir, "ingest", req.Collection+".manifest.json"),
			ingest.Options{ExcludePaths: []string{absData}})
		if err != nil {
			return err
		}
		var total, doneBytes int64
		prog := ingest.Progress{
			Start: func(files int, bytes int64) {
				total = bytes
				p.Logf("indexing %s: %d files, %d bytes", real, files, bytes)
			},
			Advance: func(b int64) {
				doneBytes += b
				if total > 0 {
					p.Set(float64(doneBytes) / float64(total))
				}
			},
		}
		var st ingest.Stats
		if gst := s.o.Graphs[req.Collection]; gst != nil {
			// The collection's code graph follows the pass: the files it
			// rewrote or dropped get new fragments, applied in one step.
			us, err := codegraph.NewUpdater(ix, gst, real, nil, ingest.Options{ExcludePaths: []string{absData}}).Update(ctx, nil, prog)
			if err != nil {
				return err
			}
			st = us.Index
			if us.Fragments > 0 {
				if err := s.saveGraph(req.Collection, gst); err != nil {
					return err
				}
				p.Logf("graph: %d files updated (epoch %d)", us.Fragments, us.GraphEpoch)
			}
		} else if st, err = ix.Index(ctx, real, prog); err != nil {
			return err
		}
		p.Logf("indexed: files=%d read=%d indexed=%d unchanged=%d removed=%d chunks=%d deleted=%d skips=[%s] in %v",
			st.Files, st.Read, st.Indexed, st.Unchanged, st.Removed, st.Chunks, st.Deleted, st.Skips, st.Elapsed.Round(1e6))
		p.Set(1)
		return nil
	}, nil
}

// saveGraph folds a collection's graph store into its base and writes it
// to DataDir/ingest/<collection>.graph (where `searchd index --graph`
// keeps it), one writer at a time.
func (s *Server) saveGraph(col string, st *graph.Store) error {
	s.graphMu.Lock()
	defer s.graphMu.Unlock()
	v := st.View()
	g := v.Graph()
	if _, err := graph.WriteFile(filepath.Join(s.o.DataDir, "ingest", col+".graph"), g); err != nil {
		return fmt.Errorf("server: graph: %w", err)
	}
	st.SetBase(g, v.Epoch())
	return nil
}
