package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// Source spans. A file:// URI names a whole file, or with a fragment
// #Lx-Ly (or #Lx) the lines x..y, 1-based and inclusive: the bytes from the
// start of line x through the end of line y including its '\n' (if the file
// has one there). Ingesters should hash exactly these bytes (ReadSpan, then
// VersionHash), or store them as the Content and let Upsert hash it.

var spanFragRE = regexp.MustCompile(`^L([1-9][0-9]*)(?:-L?([1-9][0-9]*))?$`)

// errNotVerifiable marks a URI verification cannot check (not file://).
var errNotVerifiable = errors.New("engine: source not verifiable")

// ParseFileURI splits a file:// URI into its path and line span. from and
// to are 1-based inclusive line numbers; 0, 0 means the whole file.
// Errors: not a file URI, a malformed #L fragment, to < from.
func ParseFileURI(uri string) (path string, from, to int, err error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", 0, 0, fmt.Errorf("engine: source uri %q: %w", uri, err)
	}
	if u.Scheme != "file" || u.Path == "" {
		return "", 0, 0, fmt.Errorf("%w: %q is not a file:// URI", errNotVerifiable, uri)
	}
	if u.Fragment == "" {
		return u.Path, 0, 0, nil
	}
	m := spanFragRE.FindStringSubmatch(u.Fragment)
	if m == nil {
		return "", 0, 0, fmt.Errorf("%w: %q: fragment %q is not #Lx or #Lx-Ly", errNotVerifiable, uri, u.Fragment)
	}
	from, _ = strconv.Atoi(m[1])
	to = from
	if m[2] != "" {
		to, _ = strconv.Atoi(m[2])
	}
	if to < from {
		return "", 0, 0, fmt.Errorf("%w: %q: line span ends before it starts", errNotVerifiable, uri)
	}
	return u.Path, from, to, nil
}

// span returns the bytes of lines from..to (1-based, inclusive; 0, 0 = all
// of data), or ok=false when the file has fewer lines than to.
func span(data []byte, from, to int) ([]byte, bool) {
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

// MaxSourceFileBytes bounds the files verification reads: a source that
// is larger, or not a regular file (a device such as /dev/zero, a FIFO, a
// directory), counts as gone, so a document naming one cannot make a
// search read without end.
const MaxSourceFileBytes = 64 << 20

// readSource reads a regular file of at most MaxSourceFileBytes. The
// limit is enforced on the bytes read too, so a file that grows (or a
// special file that reports size 0, as /proc files do) cannot exceed it.
func readSource(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("engine: source %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSourceFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSourceFileBytes {
		return nil, fmt.Errorf("engine: source %s is larger than %d bytes", path, MaxSourceFileBytes)
	}
	return data, nil
}

// ReadSpan reads the source span a file:// URI names (see ParseFileURI).
// Errors: the URI is not a file URI, the file cannot be read, or it has
// fewer lines than the span ends at.
func ReadSpan(uri string) ([]byte, error) {
	path, from, to, err := ParseFileURI(uri)
	if err != nil {
		return nil, err
	}
	data, err := readSource(path)
	if err != nil {
		return nil, fmt.Errorf("engine: read source: %w", err)
	}
	b, ok := span(data, from, to)
	if !ok {
		return nil, fmt.Errorf("engine: source %q has no lines %d-%d", uri, from, to)
	}
	return b, nil
}

// verifyCache caches the live version hash of each source span, keyed by
// path and invalidated when the file's size or modification time changes.
type verifyCache struct {
	mu    sync.Mutex
	files map[string]*fileHashes
}

type fileHashes struct {
	size  int64
	mtime time.Time
	spans map[[2]int]string // (from, to) → hash; "" = span absent
}

func newVerifyCache() *verifyCache { return &verifyCache{files: map[string]*fileHashes{}} }

// liveHash returns the current version hash of the span uri names; ok is
// false when the span no longer exists (file gone or shorter), which counts
// as stale. err is errNotVerifiable for URIs that cannot be checked.
func (vc *verifyCache) liveHash(uri string) (hash string, ok bool, err error) {
	path, from, to, err := ParseFileURI(uri)
	if err != nil {
		return "", false, err
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxSourceFileBytes {
		return "", false, nil
	}
	key := [2]int{from, to}
	vc.mu.Lock()
	fh := vc.files[path]
	if fh != nil && fh.size == fi.Size() && fh.mtime.Equal(fi.ModTime()) {
		if h, hit := fh.spans[key]; hit {
			vc.mu.Unlock()
			return h, h != "", nil
		}
	}
	vc.mu.Unlock()
	data, err := readSource(path)
	if err != nil {
		return "", false, nil
	}
	h := ""
	if b, found := span(data, from, to); found {
		h = VersionHash(b)
	}
	vc.mu.Lock()
	fh = vc.files[path]
	if fh == nil || fh.size != fi.Size() || !fh.mtime.Equal(fi.ModTime()) {
		fh = &fileHashes{size: fi.Size(), mtime: fi.ModTime(), spans: map[[2]int]string{}}
		vc.files[path] = fh
	}
	fh.spans[key] = h
	vc.mu.Unlock()
	return h, h != "", nil
}
