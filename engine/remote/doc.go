// Package remote puts a Strata database on object storage: one writer
// publishes, any number of stateless readers serve.
//
// Layout under s3://bucket/prefix/:
//
//	lease                          JSON Lease {owner, token, expires, fence}
//	manifests/<20-digit v>.json    root manifest v (Manifest), written once
//	data/<collection>/<crc32c>-<file>  segment (seg-<id>.sst) and archive
//	                               (cold-<id>.parquet) files, immutable
//	readers/<id>                   JSON {version, heartbeat} of each reader
//	cursor.key                     the readers' shared cursor HMAC key (32 B)
//
// Writer (OpenWriter, Publish, Run): the WAL stays on the writer's local
// disk and acknowledges writes as before (engine, tier). Publish takes a
// consistent snapshot of each collection's flushed state by hard-linking
// its files (tier.Store.LinkState), uploads the files not yet in the
// bucket (If-None-Match: *), then renews the lease (If-Match its etag)
// and writes manifest v+1 with If-None-Match: *. Versions are dense and
// each is created by exactly one conditional write, so two racing writers
// never both publish a version: the loser gets ErrPublishConflict. The
// lease has a TTL; OpenWriter takes a free or expired lease (If-Match on
// the old one's etag) and at once publishes a fence manifest (the newest
// state under its own token at the next version), so a previous holder's
// next publication collides with it; a writer whose renewal finds the
// lease replaced (its If-Match fails and the object holds another
// token), or that paused past LeaseTTL/2 between renewing and
// publishing, gets ErrLeaseLost. Both errors are final for that Writer.
// A pause or an outage longer than the TTL alone is not: the If-Match
// still holding proves nobody took the lease. A write whose answer was
// lost (a timeout after the server applied it) is recognised by the
// writer's own token: a lease or a manifest version carrying it is
// adopted as the writer's. A crash at any point leaves either
// the old newest manifest (uploads without a manifest are orphans that
// Collect removes after Grace) or the new one; never a half-published
// version, since readers only follow manifests, written in one PUT.
//
// Conditional writes must be atomic at the server. versitygw v1.8.0 (the
// tests' server, internal/testenv/s3gw) checks If-None-Match / If-Match
// under a per-key publish lock after staging the body; objstore's race
// test checks it.
//
// Reader (OpenReader, Refresh, Run, ServeHTTP): polls manifests/ for a
// newer version, downloads the objects it lacks into a local cache
// (CacheDir/objects, one reader per CacheDir; least recently used
// evicted beyond CacheBytes, the live view's objects pinned; emptied at
// open), FetchParallel objects at a time, and verifies each against the
// manifest: size, the CRC32C of every 1 MiB block, and the SHA-256 for
// objects streamed whole (under RangedMinBytes, 256 MiB); larger ones
// arrive as parallel ranged GETs of RangePartBytes, each part checked
// block by block. Damage
// is a base.CorruptError naming the s3:// key and the offset of the first
// bad block. The objects are hard-linked into a private store directory
// per version (tier.WriteStoreDir) opened as a read-only engine.DB
// (Options.Replica: no background compaction). Segments are then mmapped
// from the cache as from local disk, so a warm query costs what a local
// one does. While it fetches a version the reader's pin names that
// version and is rewritten every PinInterval, so garbage collection keeps
// its objects however long the fetch takes (the view being served is
// local and needs no pin). A segment of tier format version 3 or 4 has its
// text section (the rows' contents, in zstd blocks) recorded as the
// object's Lazy range: the reader fetches every 1 MiB block holding a
// byte outside it (streamed, each checked against its CRC32C) into a
// sparse cached file, opens the view with the text left remote, and a
// query's hits fetch their text blocks by ranged GETs (checked against
// the block CRC32Cs of the segment's text index, written into the cached
// file) when their content is first read; a fetch failure fails that
// query and marks the reader degraded. The BM25 posting blobs are the
// object's second lazy range (Object.Postings, tier.PostingsSection): the
// view opens with the BM25 header, document table, dictionary and term
// records present, and a query fetches the whole 1 MiB blocks its posting
// lists lie in, in parallel, each checked against its CRC32C and fetched
// once across concurrent queries (tier.SpanFetcher). Everything else (doc
// store without content, vector index) is present before a version is
// served.
// ReaderOptions.Eager, or a manifest without Lazy ranges, fetches objects
// whole; Reader.Prefetch fetches the rest. A view is swapped
// in whole; each query pins one view, so no query sees two versions; an
// old view closes when its last query ends. When the store is
// unreachable the reader keeps serving its view and reports degraded
// (Status, GET /healthz 503) until a refresh succeeds again.
//
// Garbage (Writer.Collect, never a reader, after renewing the lease):
// objects no live manifest references (the newest, any replaced by a
// newer version less than Grace ago, any a reader pinned within Grace),
// once older than Grace, then the dead manifests.
package remote
