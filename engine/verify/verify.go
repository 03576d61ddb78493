// Package verify re-checks a document's source against the version the
// engine stored: it parses file:// source URIs and their #Lx-Ly spans,
// reads the span's live bytes (bounded, regular files only), hashes them
// (VersionHash) and caches the hash per file, invalidated by size and
// modification time.
//
// # Who may have a file read
//
// Verification answers one bit per hit — does the live span still hash to
// the stored version? — and whoever can choose a document's source_uri and
// version_hash can turn that bit into an oracle on any file the server can
// read (1,000 documents naming one file, one guess each, and one verified
// search reveal a 4-digit PIN). So the engine reads a file only for a
// document whose source it is entitled to read:
//
//   - the writer vouched for the batch's sources (engine.VerifiableSources:
//     ingestion, which reads the very files it writes documents for, and
//     embedded programs indexing their own files); or
//   - the source's path, with every symbolic link resolved, lies under a
//     directory the operator bound to the document's namespace (Root) or
//     to the whole collection (CollectionOptions.SourceRoots).
//
// Every other file:// source is never read: its hit is kept as it is, as
// for sources of other schemes, so the outcome of a search depends on
// nothing but the stored documents. The server refuses such URIs from API
// callers at write time (Confined).
//
// Confinement (Confined) works on the decoded path: percent-encoding is
// undone by URL parsing (so %2e%2e and %2F are seen as the ".." and "/"
// they spell), the path is cleaned, every symbolic link is resolved on
// both the path and the root (filepath.EvalSymlinks; for a path that does
// not exist yet, its deepest existing ancestor), and the result must be
// the root or below it. Comparisons are byte-exact: on Linux paths are
// case-sensitive, so /srv/A and /srv/a are different roots and a case
// variant of a path under one is not under the other. A file:// URI names
// the local host only: an empty host or "localhost" (in any case, as host
// names are); any other host is not verifiable.
package verify

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeebo/blake3"

	"github.com/stratasearch/strata/vfs"
)

// ErrNotVerifiable marks a URI verification cannot check: not a file://
// URI of the local host, or a malformed #L fragment.
var ErrNotVerifiable = errors.New("verify: source not verifiable")

// MaxSourceFileBytes bounds the files verification reads: a source that
// is larger, or not a regular file (a device such as /dev/zero, a FIFO, a
// directory), counts as gone, so a document naming one cannot make a
// search read without end.
const MaxSourceFileBytes = 64 << 20

// VersionHash returns the BLAKE3-256 of source bytes as 64 lowercase hex
// digits: the version hash the engine computes when a document carries
// none (of its Content) and verification recomputes from the live source
// span.
func VersionHash(source []byte) string {
	sum := blake3.Sum256(source)
	return hex.EncodeToString(sum[:])
}

// SumString is blake3.Sum256 of s, hashed from the string itself: no
// []byte copy of s (a document's content can be megabytes).
func SumString(s string) (sum [32]byte) {
	h := blake3.New()
	_, _ = h.WriteString(s)
	h.Sum(sum[:0])
	return sum
}

// VersionHashString is VersionHash of s's bytes, without copying them.
func VersionHashString(s string) string {
	sum := SumString(s)
	return hex.EncodeToString(sum[:])
}

// Source spans. A file:// URI names a whole file, or with a fragment
// #Lx-Ly (or #Lx) the lines x..y, 1-based and inclusive: the bytes from the
// start of line x through the end of line y including its '\n' (if the file
// has one there). Ingesters should hash exactly these bytes (ReadSpan, then
// VersionHash), or store them as the Content and let the engine hash it.
var spanFragRE = regexp.MustCompile(`^L([1-9][0-9]*)(?:-L?([1-9][0-9]*))?$`)

// maxSpanLine bounds span line numbers (a larger one could not name a line
// of a MaxSourceFileBytes file anyway, and would overflow int on 32 bits).
const maxSpanLine = MaxSourceFileBytes

// ParseFileURI splits a file:// URI into its path and line span. from and
// to are 1-based inclusive line numbers; 0, 0 means the whole file. The
// path is the decoded URI path, unchanged (not cleaned). Errors (all
// wrapping ErrNotVerifiable but the first): not a URI; not a file:// URI
// of the local host (host empty or "localhost"); a malformed #L fragment;
// to < from.
func ParseFileURI(uri string) (path string, from, to int, err error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", 0, 0, fmt.Errorf("verify: source uri %q: %w", uri, err)
	}
	if u.Scheme != "file" || u.Path == "" || u.Opaque != "" {
		return "", 0, 0, fmt.Errorf("%w: %q is not a file:// URI", ErrNotVerifiable, uri)
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		return "", 0, 0, fmt.Errorf("%w: %q names host %q, not the local host", ErrNotVerifiable, uri, u.Host)
	}
	if u.Fragment == "" {
		return u.Path, 0, 0, nil
	}
	m := spanFragRE.FindStringSubmatch(u.Fragment)
	if m == nil {
		return "", 0, 0, fmt.Errorf("%w: %q: fragment %q is not #Lx or #Lx-Ly", ErrNotVerifiable, uri, u.Fragment)
	}
	from, err1 := strconv.Atoi(m[1])
	to = from
	var err2 error
	if m[2] != "" {
		to, err2 = strconv.Atoi(m[2])
	}
	if err1 != nil || err2 != nil || from > maxSpanLine || to > maxSpanLine {
		return "", 0, 0, fmt.Errorf("%w: %q: line number out of range", ErrNotVerifiable, uri)
	}
	if to < from {
		return "", 0, 0, fmt.Errorf("%w: %q: line span ends before it starts", ErrNotVerifiable, uri)
	}
	return u.Path, from, to, nil
}

// Span returns the bytes of lines from..to of data (1-based, inclusive;
// 0, 0 = all of data), or ok=false when data has fewer lines than to.
func Span(data []byte, from, to int) ([]byte, bool) {
	if from == 0 {
		return data, true
	}
	start, line := 0, 1
	for line < from {
		i := bytes.IndexByte(data[start:], '\n')
		if i < 0 {
			return nil, false
		}
		start += i + 1
		line++
	}
	if start >= len(data) {
		return nil, false
	}
	end := start
	for line <= to {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			if line < to {
				return nil, false
			}
			end = len(data)
			break
		}
		end += i + 1
		line++
	}
	return data[start:end], true
}

// ReadSource reads a regular file of at most MaxSourceFileBytes. It is
// opened with vfs.OpenRegular: a FIFO, device or other special file is
// refused without blocking, and a symbolic link as the last component is
// refused, not followed (callers resolve and confine the path first, so a
// link found there now was swapped in since). The limit is enforced on
// the bytes read too, so a file that grows cannot exceed it.
func ReadSource(path string) ([]byte, error) {
	f, fi, err := vfs.OpenRegular(path, nil)
	if err != nil {
		if errors.Is(err, vfs.ErrNotRegular) {
			return nil, fmt.Errorf("verify: source %s is not a regular file", path)
		}
		return nil, err
	}
	defer f.Close()
	// One buffer of the size the file had when opened (+1 to see EOF
	// without growing), grown only if it grew since.
	data := make([]byte, 0, min(max(fi.Size(), 0), MaxSourceFileBytes)+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(data) > MaxSourceFileBytes {
			break
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	if len(data) > MaxSourceFileBytes {
		return nil, fmt.Errorf("verify: source %s is larger than %d bytes", path, MaxSourceFileBytes)
	}
	return data, nil
}

// ReadSpan reads the source span a file:// URI names (see ParseFileURI).
// It applies no confinement: callers decide first whether the source may
// be read (Confined). Errors: the URI is not a local file URI, the file
// cannot be read, or it has fewer lines than the span ends at.
func ReadSpan(uri string) ([]byte, error) {
	path, from, to, err := ParseFileURI(uri)
	if err != nil {
		return nil, err
	}
	return ReadPathSpan(path, from, to)
}

// ReadPathSpan reads lines from..to (0, 0 = all) of the file at path, as
// ReadSpan does.
func ReadPathSpan(path string, from, to int) ([]byte, error) {
	data, err := ReadSource(path)
	if err != nil {
		return nil, fmt.Errorf("verify: read source: %w", err)
	}
	b, ok := Span(data, from, to)
	if !ok {
		return nil, fmt.Errorf("verify: source %s has no lines %d-%d", path, from, to)
	}
	return b, nil
}

// Cache caches the live version hash of each source span, keyed by path
// and invalidated when the file's size or modification time changes. Safe
// for concurrent use.
type Cache struct {
	mu    sync.Mutex
	files map[string]*fileHashes
}

type fileHashes struct {
	id    fileID
	spans map[[2]int]string // (from, to) → hash; "" = span absent
}

// fileID is what the cache compares to decide that a file is unchanged:
// size and mtime, and where the platform has them the inode and the ctime
// (which no writer can set back, unlike mtime with touch -r or cp -p).
type fileID struct {
	size         int64
	mtime, ctime time.Time
	dev, ino     uint64
}

func idOf(fi os.FileInfo) fileID {
	id := fileID{size: fi.Size(), mtime: fi.ModTime()}
	id.ctime, id.dev, id.ino = statExtra(fi)
	return id
}

func (a fileID) same(b fileID) bool {
	return a.size == b.size && a.mtime.Equal(b.mtime) && a.ctime.Equal(b.ctime) && a.dev == b.dev && a.ino == b.ino
}

// racyWindow: a file changed this recently before it was read may change
// again within the file system's timestamp granularity (the kernel's clock
// tick) without its mtime or ctime moving, so its hashes are not cached
// (git's "racily clean" rule).
const racyWindow = time.Second

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{files: map[string]*fileHashes{}} }

// LiveHash returns the current version hash of lines from..to (0, 0 = the
// whole file) of the file at path; ok is false when the span no longer
// exists (file gone, shorter, larger than MaxSourceFileBytes or not a
// regular file), which counts as stale. It applies no confinement: callers
// decide first whether the source may be read (Confined, which also gives
// the resolved path to pass here). A symbolic link at path is not
// followed: it counts as stale.
func (vc *Cache) LiveHash(path string, from, to int) (hash string, ok bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxSourceFileBytes {
		return "", false
	}
	key := [2]int{from, to}
	vc.mu.Lock()
	id := idOf(fi)
	fh := vc.files[path]
	if fh != nil && fh.id.same(id) {
		if h, hit := fh.spans[key]; hit {
			vc.mu.Unlock()
			return h, h != ""
		}
	}
	vc.mu.Unlock()
	data, err := ReadSource(path)
	if err != nil {
		return "", false
	}
	h := ""
	if b, found := Span(data, from, to); found {
		h = VersionHash(b)
	}
	if time.Since(fi.ModTime()) < racyWindow || time.Since(id.ctime) < racyWindow {
		return h, h != "" // racily clean: not cached
	}
	vc.mu.Lock()
	fh = vc.files[path]
	if fh == nil || !fh.id.same(id) {
		fh = &fileHashes{id: id, spans: map[[2]int]string{}}
		vc.files[path] = fh
	}
	fh.spans[key] = h
	vc.mu.Unlock()
	return h, h != ""
}
