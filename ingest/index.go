package ingest

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/vfs"
)

// Stats summarises one Index run.
type Stats struct {
	Files     int   // files the walk kept (candidates)
	Read      int   // files read from disk (new, or size/mtime changed)
	Indexed   int   // files (re-)chunked and written
	Unchanged int   // files skipped: same size and mtime, or same content hash
	Removed   int   // manifest files under the root that are gone (or now skipped)
	Skips     Skips // skipped files by reason (walk and content)
	Chunks    int   // chunks written
	Generated int   // files (re-)chunked and written that are generated (metadata generated = true)
	Deleted   int   // chunk ids deleted (changed and removed files)
	Bytes     int64 // bytes read
	Batches   int   // engine write calls (Upsert + Delete)
	Elapsed   time.Duration
	WalkTime  time.Duration // listing the tree
	WriteTime time.Duration // inside engine Upsert and Delete calls
	// Embedding (Options.Embedder): chunks embedded, the bytes of their
	// embedding texts (EmbedText), and the time inside Embed calls.
	Embedded   int
	EmbedBytes int64
	EmbedTime  time.Duration
}

// Progress observes a run. Start is called once with the candidate
// totals, Advance after each file with the bytes it accounted for (its
// size, read or not). Either may be nil.
type Progress struct {
	Start   func(files int, bytes int64)
	Advance func(bytes int64)
	// Embedded, if set, is called after each Embed call with the number
	// of chunks and embedding-text bytes it embedded (Options.Embedder).
	Embedded func(chunks int, bytes int64)
	// Changed, if set, is called on Index's goroutine for each file
	// whose chunks the pass rewrites (removed false) or drops (removed
	// true: the file is gone, unreadable, or now skipped), as the pass
	// decides; the writes are done when Index returns without error.
	Changed func(path string, removed bool)
}

// Metadata fields written per chunk.
const (
	MetaLang     = "lang"     // language tag (Lang)
	MetaPath     = "path"     // path relative to the indexed root, slash-separated
	MetaSymbol   = "symbol"   // declared name ("EqualFold", "Builder.WriteString", "Class.method")
	MetaReceiver = "receiver" // method receiver base type (Go), or a method's class
	MetaNames    = "names"    // the bare names a declaration declares (a method: its name, without receiver)
	MetaKind     = "kind"     // Chunk.Kind: func, method, type, const, var, package, class, …, decl, text
	MetaMTime    = "mtime"    // file modification time when the chunk's text was last written, Unix seconds
	MetaOffset   = "content_offset"
	// MetaGenerated is true on every chunk of a generated file (a
	// "// Code generated ... DO NOT EDIT." line, Classify's
	// SkipGenerated); absent otherwise. Search ranks such chunks below
	// hand-written code (Priors).
	MetaGenerated = "generated"
)

// FileURI returns file://ABS_PATH (path escaped as a URL path), the
// source URI of a whole file; a chunk appends #Lx-Ly.
func FileURI(abs string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

type prepared struct {
	f      File
	read   bool
	skip   string // content skip reason
	gen    bool   // generated file, indexed with MetaGenerated
	hash   string
	same   bool // content hash equals the manifest's: nothing to rewrite
	docs   []contract.Document
	texts  []string // per doc: its EmbedText (Options.Embedder only)
	frags  []string
	sums   []string // per doc: chunkSum
	err    error
	nbytes int64
}

// Index indexes root into col incrementally against the manifest at
// manifestPath (created if absent, saved at the end of a successful
// run: Manifest.Save). Per file: unchanged size and mtime → skipped without reading;
// otherwise read, classified (binary → skipped; generated → indexed with
// metadata generated = true), hashed, and
// when the content changed, chunked (ChunkFile) and written: the chunks
// whose id or document is new (FileEntry.ChunkSums) are upserted and the
// old chunk ids not reused are deleted. Files
// the manifest holds under root that the walk no longer yields lose their
// chunks. Writes go in batches of BatchDocs chunks; the engine has no
// mixed upsert+delete batch, so a batch is an Upsert epoch followed by a
// Delete epoch (a concurrent reader could see both a file's old and new
// chunks between the two; this CLI holds the store exclusively).
//
// Each chunk is a document: id ABS_PATH#Lx-Ly, source_uri
// file://ABS_PATH#Lx-Ly, version hash = engine.VersionHash of exactly that
// line span, trust authoritative, metadata lang, path, kind, mtime and for
// Go symbol (and receiver, names). Content is a one-line header (the
// declared names and the relative path, so BM25 — which indexes Content
// only — matches a symbol's name and path words) followed by the span;
// metadata content_offset is the header's length in bytes.
func Index(ctx context.Context, col *engine.Collection, manifestPath, root string, o Options, p Progress) (Stats, error) {
	ix, err := NewIndexer(col, manifestPath, o)
	if err != nil {
		return Stats{}, err
	}
	return ix.Index(ctx, root, p)
}

// Indexer indexes trees into one collection against one manifest, which
// it keeps in memory between calls (Index, Tombstone); its methods are
// serialised by a mutex and safe for concurrent use. Watch uses one.
type Indexer struct {
	col          *engine.Collection
	manifestPath string
	o            Options

	mu sync.Mutex
	m  *Manifest
}

// NewIndexer loads the manifest at manifestPath (absent = empty).
// Errors: invalid options, a malformed manifest.
func NewIndexer(col *engine.Collection, manifestPath string, o Options) (*Indexer, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	m, err := LoadManifest(manifestPath)
	if err != nil {
		return nil, err
	}
	return &Indexer{col: col, manifestPath: manifestPath, o: o, m: m}, nil
}

// Tombstone deletes, as one epoch, every chunk the manifest holds for the
// file at path (absolute) and forgets the file, so the next Index run
// re-reads it. It returns the number of chunks deleted (0 for an unknown
// file). Watch calls it as soon as a file changes, before re-indexing.
func (ix *Indexer) Tombstone(ctx context.Context, path string) (int, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	e := ix.m.Files[path]
	if e == nil {
		return 0, nil
	}
	ids := make([]string, len(e.Chunks))
	for i, fr := range e.Chunks {
		ids[i] = ChunkID(path, fr)
	}
	if len(ids) > 0 {
		if _, err := ix.col.Delete(ctx, ids); err != nil {
			return 0, fmt.Errorf("ingest: tombstone %s: %w", path, err)
		}
	}
	delete(ix.m.Files, path)
	if err := ix.m.Save(ix.manifestPath); err != nil {
		return len(ids), err
	}
	return len(ids), nil
}

// Index runs one incremental pass over root (see the package func Index).
// After a failed pass the in-memory manifest is reloaded from disk (the
// last successful pass, or the failed one's Save if its record reached
// the disk) without its chunk sums, so a retry re-reads whatever was not
// recorded and rewrites every chunk of a changed file; its next Save
// writes a snapshot rather than append after a record whose write or
// fsync may have failed.
func (ix *Indexer) Index(ctx context.Context, root string, p Progress) (Stats, error) {
	return ix.IndexParsed(ctx, root, p, nil)
}

// IndexParsed is Index with Go files the caller has parsed already
// (parsed maps a file's absolute path to its parse, which the pass only
// reads): a file the pass re-chunks whose content, as the pass reads it,
// is exactly the parsed Src is chunked from that parse (ChunkGoFile)
// instead of being parsed again, into the same chunks. An entry whose
// Src differs from the file's content is ignored.
func (ix *Indexer) IndexParsed(ctx context.Context, root string, p Progress, parsed map[string]*ParsedGo) (Stats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st, err := ix.index(ctx, root, p, parsed)
	if err != nil {
		if m, lerr := reloadAfterFailure(vfs.Default, ix.manifestPath); lerr == nil {
			ix.m = m
		}
	}
	return st, err
}

// reloadAfterFailure loads the manifest at path after a failed pass. The
// pass may have written or deleted some of the chunks the reloaded
// entries list, so their sums no longer vouch for what the collection
// holds and are dropped; and its Save may have failed after writing a
// journal record whose fsync did not succeed, so the next Save writes a
// snapshot instead of appending after it.
func reloadAfterFailure(fsys vfs.FS, path string) (*Manifest, error) {
	m, err := loadManifest(fsys, path)
	if err != nil {
		return nil, err
	}
	for _, e := range m.Files {
		e.ChunkSums = nil
	}
	m.j.broken = true
	return m, nil
}

func (ix *Indexer) index(ctx context.Context, root string, p Progress, parsed map[string]*ParsedGo) (Stats, error) {
	t0 := time.Now()
	o, m, manifestPath := ix.o, ix.m, ix.manifestPath
	var st Stats
	files, skips, err := Walk(root, o)
	if err != nil {
		return st, err
	}
	st.WalkTime = time.Since(t0)
	st.Skips = skips
	st.Files = len(files)
	var total int64
	for _, f := range files {
		total += f.Size
	}
	if p.Start != nil {
		p.Start(len(files), total)
	}
	absRoot, _ := filepath.Abs(root)
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		seen[f.Path] = true
	}

	var docs []contract.Document
	var texts []string
	var dels []string
	// Writes (and embedding) run on the writer's goroutine (embed.go), in
	// order, overlapping the reading and chunking of the next files.
	wr := ix.startWriter(ctx, p)
	wrOpen := true
	finish := func() error {
		if !wrOpen {
			return nil
		}
		wrOpen = false
		err := wr.close()
		st.Chunks, st.Deleted, st.Batches = wr.chunks, wr.deleted, wr.batches
		st.WriteTime, st.Embedded, st.EmbedBytes, st.EmbedTime = wr.writeTime, wr.embedded, wr.embedBytes, wr.embedTime
		return err
	}
	defer finish()
	flush := func() error {
		if len(docs) == 0 && len(dels) == 0 {
			return nil
		}
		err := wr.send(writeBatch{docs: docs, texts: texts, dels: dels})
		docs, texts, dels = nil, nil, nil
		return err
	}
	batchDocs := o.BatchDocs
	if o.Embedder != nil {
		batchDocs = min(batchDocs, 4*o.EmbedBatch)
	}

	// Read, classify, hash and chunk in parallel (GOMAXPROCS workers)
	// while this goroutine writes to the engine in file order.
	workers := runtime.GOMAXPROCS(0)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	olds := make([]*FileEntry, len(files)) // read by the producer, so no map access races the writer
	for i, f := range files {
		olds[i] = m.Files[f.Path]
	}
	queue := make(chan chan prepared, 4*workers+64)
	go func() {
		defer close(queue)
		sem := make(chan struct{}, workers)
		for i, f := range files {
			ch := make(chan prepared, 1)
			select {
			case queue <- ch:
			case <-pctx.Done():
				return
			}
			sem <- struct{}{}
			go func(f File, old *FileEntry, pre *ParsedGo) {
				defer func() { <-sem }()
				ch <- prepare(f, old, absRoot, o, pre)
			}(f, olds[i], parsed[f.Path])
		}
	}()
	for ch := range queue {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		pr := <-ch
		r := &pr
		old := m.Files[r.f.Path]
		switch {
		case r.err != nil:
			st.Skips[SkipError]++
			if old != nil {
				seen[r.f.Path] = false // drop its chunks below (Changed is called there)
			}
		case !r.read && old.Skip != "":
			st.Skips[old.Skip]++
		case !r.read:
			st.Unchanged++
		case r.skip != "":
			st.Skips[r.skip]++
			if old != nil {
				for _, fr := range old.Chunks {
					dels = append(dels, ChunkID(r.f.Path, fr))
				}
				if old.Skip == "" && p.Changed != nil {
					p.Changed(r.f.Path, true)
				}
			}
			m.Files[r.f.Path] = &FileEntry{Size: r.f.Size, MTimeNS: r.f.ModTime.UnixNano(), Skip: r.skip}
		case r.same:
			st.Unchanged++
			old.Size, old.MTimeNS = r.f.Size, r.f.ModTime.UnixNano()
		default:
			st.Indexed++
			if r.gen {
				st.Generated++
			}
			keep := make(map[string]bool, len(r.frags))
			for _, fr := range r.frags {
				keep[fr] = true
			}
			var had map[string]string // frag → sum of the chunk stored under it
			if old != nil {
				for _, fr := range old.Chunks {
					if !keep[fr] {
						dels = append(dels, ChunkID(r.f.Path, fr))
					}
				}
				if len(old.ChunkSums) == len(old.Chunks) && old.Chunker == Chunker(r.f.Path) {
					had = make(map[string]string, len(old.Chunks))
					for i, fr := range old.Chunks {
						had[fr] = old.ChunkSums[i]
					}
				}
			}
			for i := range r.docs {
				if had != nil && had[r.frags[i]] == r.sums[i] {
					continue // same id, same document: stored already
				}
				docs = append(docs, r.docs[i])
				if r.texts != nil {
					texts = append(texts, r.texts[i])
				}
			}
			m.Files[r.f.Path] = &FileEntry{Size: r.f.Size, MTimeNS: r.f.ModTime.UnixNano(), Hash: r.hash, Chunks: r.frags, ChunkSums: r.sums, Chunker: Chunker(r.f.Path)}
			if p.Changed != nil {
				p.Changed(r.f.Path, false)
			}
		}
		if r.read {
			st.Read++
			st.Bytes += r.nbytes
		}
		if p.Advance != nil {
			p.Advance(r.f.Size)
		}
		if len(docs) >= batchDocs {
			if err := flush(); err != nil {
				return st, err
			}
		}
	}
	// Files of this root the manifest knows but the walk no longer keeps.
	for path, e := range m.Files {
		if !under(path, absRoot) || seen[path] {
			continue
		}
		if e.Skip == "" {
			st.Removed++
			if p.Changed != nil {
				p.Changed(path, true)
			}
		}
		for _, fr := range e.Chunks {
			dels = append(dels, ChunkID(path, fr))
		}
		delete(m.Files, path)
		if len(dels) >= o.BatchDocs {
			if err := flush(); err != nil {
				return st, err
			}
		}
	}
	if err := flush(); err != nil {
		return st, err
	}
	if err := finish(); err != nil {
		return st, err
	}
	if err := m.Save(manifestPath); err != nil {
		return st, err
	}
	st.Elapsed = time.Since(t0)
	return st, nil
}

func under(path, root string) bool {
	return path == root || strings.HasPrefix(path, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// readListed reads the file Walk listed as f, opened with
// vfs.OpenRegular: a path replaced since the walk by a symbolic link, a
// FIFO or another file is refused, not followed or read.
func readListed(f File) ([]byte, error) {
	path := f.Path
	if f.open != "" {
		path = f.open
	}
	fh, _, err := vfs.OpenRegular(path, f.info)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return readAllSized(fh, f.Size)
}

// readAllSized is io.ReadAll into a buffer sized for the size the walk
// saw (one allocation when the file has not grown since).
func readAllSized(r io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > 1<<30 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size+1) // +1: the read that sees EOF needs room
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grown since the walk: let append pick the size
		}
	}
}

// prepare reads, classifies, hashes and chunks one file (no engine access;
// run in parallel).
func prepare(f File, old *FileEntry, absRoot string, o Options, pre *ParsedGo) prepared {
	r := prepared{f: f}
	// A file an older run skipped as generated is read again: generated
	// files are indexed now.
	if old != nil && old.Size == f.Size && old.MTimeNS == f.ModTime.UnixNano() && old.Chunker == Chunker(f.Path) && old.Skip != SkipGenerated {
		return r
	}
	data, err := readListed(f)
	if err != nil {
		r.err = err
		return r
	}
	r.read, r.nbytes = true, int64(len(data))
	if r.skip = Classify(data); r.skip == SkipGenerated {
		r.skip, r.gen = "", true
	} else if r.skip != "" {
		return r
	}
	if !utf8.ValidString(f.Path) {
		r.skip = SkipBadName
		return r
	}
	r.hash = engine.VersionHash(data)
	valid := utf8.Valid(data)
	if old != nil && old.Hash == r.hash && old.Chunker == Chunker(f.Path) {
		r.same = true
		return r
	}
	lines := NewLines(data)
	chunks := chunkFile(f.Path, data, lines, o, pre)
	lang := LangOf(f.Path, data)
	uri := FileURI(f.Path)
	mtime := contract.Number(float64(f.ModTime.Unix()))
	rel := f.Rel
	if absRoot != "" {
		if x, err := filepath.Rel(absRoot, f.Path); err == nil {
			rel = filepath.ToSlash(x)
		}
	}
	r.docs = make([]contract.Document, 0, len(chunks))
	r.frags = make([]string, 0, len(chunks))
	for _, c := range chunks {
		frag := fmt.Sprintf("L%d-L%d", c.StartLine, c.EndLine)
		span := lines.Span(c.StartLine, c.EndLine)
		header := rel
		if len(c.Names) > 0 {
			names := c.Names
			if c.Kind == "method" {
				names = []string{c.Symbol}
			}
			header = strings.Join(names, " ") + " " + rel
		}
		header += "\n"
		meta := map[string]contract.Value{
			MetaLang:   contract.String(lang),
			MetaPath:   contract.String(rel),
			MetaKind:   contract.String(c.Kind),
			MetaMTime:  mtime,
			MetaOffset: contract.Number(float64(len(header))),
		}
		if c.Symbol != "" {
			meta[MetaSymbol] = contract.String(c.Symbol)
		}
		if c.Receiver != "" {
			meta[MetaReceiver] = contract.String(c.Receiver)
		}
		if len(c.Names) > 0 {
			meta[MetaNames] = contract.Strings(c.Names...)
		}
		if r.gen {
			meta[MetaGenerated] = contract.Bool(true)
		}
		content := header + string(span)
		if !valid {
			content = strings.ToValidUTF8(content, "\uFFFD") // the hash stays on the raw bytes
		}
		vh := engine.VersionHash(span)
		r.docs = append(r.docs, contract.Document{
			ID:          ChunkID(f.Path, frag),
			Content:     content,
			SourceURI:   uri + "#" + frag,
			Metadata:    meta,
			Trust:       contract.Authoritative,
			VersionHash: vh,
		})
		r.frags = append(r.frags, frag)
		r.sums = append(r.sums, chunkSum(lang, r.gen, header, vh))
		if o.Embedder != nil {
			r.texts = append(r.texts, EmbedText(rel, c, span, o.EmbedTextBytes))
		}
	}
	return r
}

// chunkSum identifies a chunk document's content for the manifest: 64
// bits of the BLAKE3 over the language, the generated flag, the header
// Index prepends and spanHash, the version hash of the chunk's source
// bytes (the content is the header and those bytes, made valid UTF-8, so
// it is a function of the two and the source is hashed once). Two chunks
// of a file with the same id and sum are the same document except for
// MetaMTime, which therefore is the file's modification time when the
// chunk's text was last written.
func chunkSum(lang string, gen bool, header, spanHash string) string {
	g := "0"
	if gen {
		g = "1"
	}
	return engine.VersionHash([]byte(lang + "\x00" + g + "\x00" + header + "\x00" + spanHash))[:16]
}

// Snippet returns a hit's source text without the header Index prepends
// (metadata content_offset), or the content as it is.
func Snippet(content string, meta map[string]contract.Value) string {
	if v, ok := meta[MetaOffset]; ok {
		if n, ok := v.Num(); ok && n >= 0 && int(n) <= len(content) {
			return content[int(n):]
		}
	}
	return content
}

// identRE matches a query word that looks like a code identifier: it has an
// upper-case letter or an underscore ("EqualFold", "read_full"), optionally
// qualified ("strings.EqualFold", whose last part is used).
var identRE = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_]*\.)*([A-Za-z_][A-Za-z0-9_]*)$`)

// SymbolNames returns the identifier-like words of a query (see identRE):
// the names Search looks up among declarations.
func SymbolNames(text string) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		w = strings.Trim(w, "\"'`+-*()")
		m := identRE.FindStringSubmatch(w)
		if m == nil {
			continue
		}
		name := m[1]
		if strings.ContainsAny(name, "_ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			out = append(out, name)
		}
	}
	return out
}
