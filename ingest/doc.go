// Package ingest turns a directory tree into engine documents: it walks
// the tree, chunks each file, and writes the chunks to an engine
// collection incrementally, against a manifest of what an earlier run
// indexed. cmd/searchd's index and search subcommands are thin layers
// over it.
//
// # Walk
//
// Walk lists regular files, honouring every .gitignore on the way
// (github.com/sabhiram/go-gitignore; each file's patterns apply relative
// to its directory), never entering .git or vendored directories (vendor/,
// node_modules/, third_party/), and skipping files over MaxFileBytes
// (1 MiB). Classify then skips binary files (a NUL byte in the first 8000
// bytes, git's sniff) and marks generated ones (a "// Code generated ...
// DO NOT EDIT." line): they are indexed with metadata generated = true
// (Stats.Generated counts them) and ranked below hand-written code by
// Search's path priors; vendored trees stay skipped. Every skip is
// counted by reason (Skips).
//
// # Chunks
//
// Go source is parsed with go/parser: the package clause with its doc
// comment, and each top-level func, method, type, const and var
// declaration (a parenthesised group is one chunk), from its doc comment
// to its end, in physical lines (//line directives are ignored). Imports
// are not chunks. Comments outside every declaration (between two, or
// after the last) are text chunks, one run between two declarations cut
// by ChunkText; not the file header before the package clause,
// directive-only comments, or a repeat of one already chunked in the
// file (a generator's banner). A declaration over MaxDeclBytes (16 KiB) is cut into
// ChunkBytes pieces that keep its symbol. The parse sees the file with
// the statements of its top-level function bodies blanked (offsets and
// lines kept: a byte-level scan finds the bodies), which is where most
// of a parse goes and none of what chunking reads. Python, JavaScript, TypeScript,
// TSX, Rust, Java, C and C++ are parsed with tree-sitter (package
// ingest/lang, cgo): each function, method, class, struct, enum,
// interface, trait, impl block, module, type alias and macro is a chunk
// from its doc comment, decorators or attributes to its end, with its
// qualified symbol ("Class.method", "impl Display for Point::fmt") and
// kind; a class-like definition holding methods is cut into its head and
// its members; oversized definitions are cut as Go's are; the lines
// between definitions are cut by structure (kind decl, with the names of
// the variables, constants and prototypes they declare). In a build
// without cgo these languages fall back to the structural cut. Other text
// (and Go that does not parse) is cut by structure into chunks of at most ChunkBytes (2 KiB ≈
// 512 tokens): before a Markdown heading, after a blank line, where the
// bracket depth is zero, in that order of preference, with optional
// OverlapLines. All of it is O(file size).
//
// A chunk is the line span Lx-Ly (1-based, inclusive, through the last
// newline: engine.ReadSpan's convention). Its document: id ABS_PATH#Lx-Ly,
// source_uri file://ABS_PATH#Lx-Ly, version hash = engine.VersionHash
// (BLAKE3-256) of exactly those bytes, trust authoritative, metadata lang,
// path (relative to the indexed root), kind, mtime, and for declarations
// symbol ("EqualFold", "Builder.WriteString", "Class.method"), receiver
// and names. The engine's
// BM25 indexes Content only, so Content is a one-line header — the
// declared names and the relative path — followed by the span; metadata
// content_offset is the header length (Snippet strips it).
//
// # Incremental runs
//
// The manifest maps each file to its size, mtime, BLAKE3 of the whole
// file, chunk spans, or content skip reason. It is a JSON snapshot
// (written atomically) plus a journal of the entries each later pass set
// or removed (CRC32C-framed records, fsynced before Save returns), so a
// pass over a few files of a large tree writes those entries, not the
// whole manifest; a snapshot replaces the journal once the journal
// outgrows a quarter of it.
// A file with the same size and mtime, chunked by the same chunker
// (Chunker: a build with or without cgo chunks the lang languages
// differently), is not read; one whose content hash
// is unchanged is not rewritten; a changed file's new chunks are upserted
// and its old span ids that are not reused are deleted; a vanished (or
// newly ignored) file's chunks are deleted; a rename is a delete plus an
// add. Writes are batched (BatchDocs chunks per Upsert). The engine has
// no mixed upsert+delete batch, so each flush is an Upsert epoch followed
// by a Delete epoch.
//
// # Embeddings
//
// With Options.Embedder set (cmd/searchd's --embedder URL), every chunk
// written is embedded first. What is embedded is EmbedText, not the raw
// span: a Go declaration's names (also split into words), doc comment,
// signature and path, cut to EmbedTextBytes (256) — a sentence encoder
// understands prose, and the bundled USE-Lite model's cost grows about
// quadratically with text length. Embedding runs on a writer goroutine
// that takes batches of at most 4·EmbedBatch chunks in file order, embeds
// them EmbedBatch (64) per call and upserts them with their vectors, while
// the indexing goroutine reads and chunks the next files; Progress.Embedded
// reports each call. An embedder failure fails the run before the manifest
// is saved, so the next run retries those files. Unchanged files are not
// re-embedded.
//
// # Search and watch
//
// Search (SearchWith with default SearchOptions) adds to the engine's
// search: definitions first when the whole query looks like an identifier
// (EqualFold, strings.EqualFold, read_full; LooksLikeIdentifier) — those
// names are looked up in the "names" keyword field with an engine filter
// and their declarations come before the other hits (in hybrid mode,
// before the hybrid list); prose queries keep the engine's order — and
// path priors (Prior): tests, testdata, examples, .txt files, generated
// files and cmd/ and internal/ copies rank below the public
// implementation. SearchOptions switches each off and can add vocabulary
// bridging: BuildBridge learns, from the collection's own declarations,
// which identifier terms go with which doc-comment words (normalised PMI),
// stored in a versioned file (SaveBridge, LoadBridge), and Bridge.Expand
// adds them, down-weighted, to prose queries (contract.Query.Expansion).
// Watch keeps a tree indexed with fsnotify:
// a changed file's chunks are tombstoned at once, then an incremental pass
// re-indexes in the background. Searches that must never see replaced
// text set contract.Query.Verify (the engine re-hashes each hit's span):
// TestWatchNoStaleHits measures both.
package ingest
