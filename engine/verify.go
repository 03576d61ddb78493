package engine

import (
	"errors"
	"github.com/stratasearch/strata/engine/catalog"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/engine/verify"
)

// Source verification lives in package engine/verify (URI and span
// parsing, bounded reads, the hash cache, confinement under roots); this
// file holds the collection's side: which documents' sources it may read.

// MaxSourceFileBytes bounds the files verification reads (see
// verify.MaxSourceFileBytes).
const MaxSourceFileBytes = verify.MaxSourceFileBytes

// ParseFileURI splits a file:// URI into its path and line span (see
// verify.ParseFileURI).
func ParseFileURI(uri string) (path string, from, to int, err error) { return verify.ParseFileURI(uri) }

// ReadSpan reads the source span a file:// URI names (see verify.ReadSpan).
func ReadSpan(uri string) ([]byte, error) { return verify.ReadSpan(uri) }

// VersionHash returns the BLAKE3-256 of source bytes as 64 lowercase hex
// digits (see verify.VersionHash): the version hash Upsert computes when a
// document carries none (of its Content) and verification recomputes from
// the live source span.
func VersionHash(source []byte) string { return verify.VersionHash(source) }

// VersionHashString is VersionHash of s's bytes, without copying them.
func VersionHashString(s string) string { return verify.VersionHashString(s) }

// VerifiableSources marks every document of an Upsert as having a source
// the writer vouches for: verification may read its file:// source
// wherever it is, as long as no symbolic link lies on its path (a link
// swapped in later is not vouched for; see sourcePath). Ingestion passes it (it wrote the documents from the
// very files their URIs name); an embedded program indexing its own files
// may too. Without it, a document's file:// source is read only when it
// lies under a root bound to its namespace (Options.VerifyRoots) or under
// the collection's SourceRoots; any other is never read, and its hit is
// kept unverified (package verify, "Who may have a file read"). The mark
// is stored with the version, and no document field can set it.
func VerifiableSources() WriteOption {
	return func(w *writeOpts) { w.verifiable = true }
}

// reservedMetaPrefix starts the metadata keys the engine keeps for itself
// (stored with a version, never returned, refused in a write).
const reservedMetaPrefix = catalog.ReservedMetaPrefix

// metaVerifiable is the reserved metadata key of a version written with
// VerifiableSources.
const metaVerifiable = reservedMetaPrefix + "verifiable"

// sourceDirs are the directories under which a document of namespace ns,
// written without VerifiableSources, may have its file:// source read.
func (c *Collection) sourceDirs(ns string) []string {
	dirs := append([]string(nil), c.o.SourceRoots...)
	if c.db != nil {
		dirs = append(dirs, verify.DirsFor(c.db.o.VerifyRoots, ns)...)
	}
	return dirs
}

// SourcePermitted reports whether a document of namespace ns, written
// without VerifiableSources, may name uri as its source: uri is not a
// file:// URI (verification never reads those), or its file — symbolic
// links resolved — lies under a root bound to ns (Options.VerifyRoots) or
// under the collection's SourceRoots. The server refuses every other
// file:// source_uri at write time; the engine itself stores them and
// never reads them.
func (c *Collection) SourcePermitted(ns, uri string) bool {
	if uri == "" {
		return true
	}
	u, err := url.Parse(uri)
	if err != nil || !strings.EqualFold(u.Scheme, "file") {
		return err == nil
	}
	_, ok := verify.Confined(uri, c.sourceDirs(ns))
	return ok
}

// sourcePath returns the path verification may read for hit h, or
// ok=false when it must not read any (h's source is not entitled: see
// VerifiableSources). sn is the snapshot h was found in.
//
// The writer of a marked version vouched for the file at path as it was
// then, not for wherever a symbolic link put there later points: a
// marked source is read only when path, with every link resolved, is
// still path itself (no link on the way). Otherwise it is treated as
// unmarked — read only under a root bound to its namespace or the
// collection's SourceRoots — so a tree indexed through a symlinked
// directory keeps its hits unverified unless a root covers it.
func (c *Collection) sourcePath(sn *tier.Snapshot, h *contract.Envelope, path string) (string, bool) {
	if d, _, found := sn.Get(h.DocID); found && d.Metadata[metaVerifiable] != "" &&
		storedHash(d) == h.VersionHash && d.SourceURI == h.SourceURI {
		if clean := filepath.Clean(path); filepath.IsAbs(clean) && !throughLink(clean) {
			return clean, true // gone or not regular: verification finds it stale
		}
	}
	return verify.Confined(h.SourceURI, c.sourceDirs(h.Namespace))
}

// throughLink reports whether some component of the clean absolute path
// p, up to the first one that does not exist, is a symbolic link (or
// cannot be examined). It never looks where a link points.
func throughLink(p string) bool {
	if link, ok := throughLinkResolve(p); ok {
		return link
	}
	return throughLinkWalk(p)
}

// throughLinkWalk is throughLink by one Lstat per component.
func throughLinkWalk(p string) bool {
	vol := filepath.VolumeName(p)
	cur := vol + string(filepath.Separator)
	for _, part := range strings.Split(p[len(cur):], string(filepath.Separator)) {
		if part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return false
		}
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}
