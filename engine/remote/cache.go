package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/vfs/objstore"
)

// cache is a size-bounded local disk cache of immutable objects, one
// file per object at dir/<key>, evicted least recently used first. An
// object a live view uses is pinned (views hard-link the file, so an
// eviction only drops the cache's own name); pinned objects are never
// evicted, so the cache can exceed its bound by what the live views use.
type cache struct {
	st    *objstore.Store
	dir   string
	limit int64

	mu      sync.Mutex
	entries map[string]*entry
	bytes   int64
	fetched int64 // bytes downloaded
	hits    int64
	misses  int64
}

type entry struct {
	size    int64 // bytes present in the file
	used    time.Time
	pins    int
	loading chan struct{} // closed when the download ends
	err     error
	// part is set for an object fetched without its Lazy range; nil
	// when every byte is present.
	part *partial
}

// partial tracks what is present of an object whose Lazy range is
// fetched on demand: whole BlockSize blocks checked against the
// manifest's CRC32Cs, and ranges checked against a caller's CRC32C.
type partial struct {
	mu      sync.Mutex
	blocks  []bool
	loading map[int64]chan struct{} // block → closed when its fetch ends
	ranges  map[int64]int64         // offset → length
}

// present reports whether [off, off+n) is in the file.
func (p *partial) present(off, n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ranges[off] >= n {
		return true
	}
	for b := off / BlockSize; b*BlockSize < off+n; b++ {
		if b >= int64(len(p.blocks)) || !p.blocks[b] {
			return false
		}
	}
	return true
}

// inBlocks reports whether every block spanning [off, off+n) is
// present; p.mu held.
func (p *partial) inBlocks(off, n int64) bool {
	for b := off / BlockSize; b*BlockSize < off+n; b++ {
		if b >= int64(len(p.blocks)) || !p.blocks[b] {
			return false
		}
	}
	return true
}

func openCache(st *objstore.Store, dir string, limit int64) (*cache, error) {
	c := &cache{st: st, dir: dir, limit: limit, entries: map[string]*entry{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// The cache starts empty: objects of an earlier run are dropped (a
	// file half-written by a killed process is never trusted).
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if err := os.RemoveAll(filepath.Join(dir, n.Name())); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// path is where key's object lives in the cache.
func (c *cache) path(key string) string { return filepath.Join(c.dir, filepath.FromSlash(key)) }

// get makes o present and verified in the cache, pins it, and returns its
// path. A download failing its checksums is removed and reported as a
// *base.CorruptError naming the object's s3:// address and offset.
func (c *cache) get(ctx context.Context, o Object) (string, error) {
	for {
		c.mu.Lock()
		e := c.entries[o.Key]
		if e == nil {
			e = &entry{loading: make(chan struct{})}
			c.entries[o.Key] = e
			c.misses++
			c.mu.Unlock()
			if testHookFetch != nil {
				testHookFetch(o.Key)
			}
			var part *partial
			var err error
			size := o.Size
			if o.lazy() {
				part, size, err = c.downloadPartial(ctx, o)
			} else {
				err = c.download(ctx, o)
			}
			c.mu.Lock()
			e.err = err
			close(e.loading)
			e.loading = nil
			if err != nil {
				delete(c.entries, o.Key)
				c.mu.Unlock()
				return "", err
			}
			e.size, e.used, e.part = size, time.Now(), part
			e.pins++
			c.bytes += size
			c.evictLocked()
			c.mu.Unlock()
			return c.path(o.Key), nil
		}
		if ch := e.loading; ch != nil {
			c.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			continue
		}
		e.pins++
		e.used = time.Now()
		c.hits++
		c.mu.Unlock()
		if err := c.fillEager(ctx, o, e); err != nil {
			c.unpin(o.Key)
			return "", err
		}
		return c.path(o.Key), nil
	}
}

// fillEager makes present every block of the cached entry e that o does
// not leave remote (Object.remoteBlock): a file cached for a manifest
// whose object had lazy ranges may be asked for by one that lists the
// same object (same content key) with fewer or none, whose reader reads
// those bytes without fetching them. Each block is checked against its
// CRC32C (fetchSpan).
func (c *cache) fillEager(ctx context.Context, o Object, e *entry) error {
	p := e.part
	if p == nil {
		return nil
	}
	var runs [][2]int64
	p.mu.Lock()
	for b := int64(0); b < int64(len(p.blocks)); b++ {
		if p.blocks[b] || o.remoteBlock(b) {
			continue
		}
		if k := len(runs) - 1; k >= 0 && runs[k][1] == b {
			runs[k][1] = b + 1
		} else {
			runs = append(runs, [2]int64{b, b + 1})
		}
	}
	p.mu.Unlock()
	for _, r := range runs {
		off := r[0] * BlockSize
		if err := c.fetchSpan(ctx, o, off, min(r[1]*BlockSize, o.Size)-off); err != nil {
			return err
		}
	}
	return nil
}

// testHookFetch, if set, runs before each object download.
var testHookFetch func(key string)

func (c *cache) download(ctx context.Context, o Object) error {
	p := c.path(o.Key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // no-op after the rename
	if o.Size >= RangedMinBytes {
		err := c.downloadRanges(ctx, o, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return os.Rename(tmp, p)
	}
	// Hash while writing: the object is never held in memory whole.
	vw := &verifyingWriter{w: f, sha: sha256.New()}
	n, err := c.st.GetTo(ctx, o.Key, vw)
	c.mu.Lock()
	c.fetched += n
	c.mu.Unlock()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := vw.check(o, c.st.URL()+"/"+o.Key); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// downloadPartial fetches o but for its lazy ranges into a sparse file of
// o.Size bytes: every BlockSize block that holds a byte outside the range
// is streamed (one ranged GET per run of blocks) and checked against its
// CRC32C before it is written. It returns what is present and its size.
func (c *cache) downloadPartial(ctx context.Context, o Object) (*partial, int64, error) {
	url := c.st.URL() + "/" + o.Key
	nb := (o.Size + BlockSize - 1) / BlockSize
	if int64(len(o.Blocks)) != nb {
		return nil, 0, &base.CorruptError{Kind: "remote manifest", Path: url, Reason: "block list does not fit the size"}
	}
	p := c.path(o.Key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, 0, err
	}
	tmp := p + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, 0, err
	}
	defer os.Remove(tmp) // no-op after the rename
	part := &partial{blocks: make([]bool, nb), loading: map[int64]chan struct{}{}, ranges: map[int64]int64{}}
	// Blocks wholly inside a lazy range stay remote; runs of the others
	// are streamed.
	eager := func(b int64) bool { return !o.remoteBlock(b) }
	var present int64
	err = f.Truncate(o.Size)
	for b := int64(0); b < nb && err == nil; {
		if !eager(b) {
			b++
			continue
		}
		end := b + 1
		for end < nb && eager(end) {
			end++
		}
		off, n := b*BlockSize, min(end*BlockSize, o.Size)-b*BlockSize
		if err = c.fetchBlocks(ctx, o, f, off, n); err == nil {
			for i := b; i < end; i++ {
				part.blocks[i] = true
			}
			present += n
		}
		b = end
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, 0, err
	}
	if err := os.Rename(tmp, p); err != nil {
		return nil, 0, err
	}
	return part, present, nil
}

// fetchBlocks streams [off, off+n) of o (whole blocks: off a multiple of
// BlockSize, n too unless it ends the object) into f, each block checked
// against its CRC32C before it is written.
func (c *cache) fetchBlocks(ctx context.Context, o Object, f *os.File, off, n int64) error {
	bw := &blockWriter{f: f, o: o, url: c.st.URL() + "/" + o.Key, off: off, buf: make([]byte, 0, BlockSize)}
	got, err := c.st.GetRangeTo(ctx, o.Key, off, n, bw)
	c.mu.Lock()
	c.fetched += got
	c.mu.Unlock()
	if err == nil {
		err = bw.flush()
	}
	return err
}

// blockWriter writes a stream of whole blocks of o from offset off to f,
// each checked against the manifest's CRC32C first.
type blockWriter struct {
	f   *os.File
	o   Object
	url string
	off int64
	buf []byte
	err error
}

func (w *blockWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && w.err == nil {
		k := min(BlockSize-len(w.buf), len(p))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == BlockSize {
			w.err = w.flush()
		}
	}
	if w.err != nil {
		return 0, w.err
	}
	return n, nil
}

func (w *blockWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if crc32.Checksum(w.buf, castagnoli) != w.o.Blocks[w.off/BlockSize] {
		return &base.CorruptError{Kind: "object", Path: w.url, Offset: w.off,
			Reason: fmt.Sprintf("block [%d, %d) fails its CRC32C", w.off, w.off+int64(len(w.buf)))}
	}
	if _, err := w.f.WriteAt(w.buf, w.off); err != nil {
		return err
	}
	w.off += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// fetchRange makes [off, off+n) of the cached object o present: at once
// when it is, else by one ranged GET whose bytes must have CRC32C crc
// (else a *base.CorruptError naming the object and off), written into
// the cached file (which the views' hard links and mappings share).
func (c *cache) fetchRange(ctx context.Context, o Object, off, n int64, crc uint32) error {
	c.mu.Lock()
	e := c.entries[o.Key]
	c.mu.Unlock()
	if e == nil || e.loading != nil {
		return fmt.Errorf("remote: %s/%s is not in the cache", c.st.URL(), o.Key)
	}
	p := e.part
	if p == nil || p.present(off, n) {
		return nil
	}
	if off < 0 || n <= 0 || off > o.Size || n > o.Size-off {
		return fmt.Errorf("remote: range [%d,+%d) outside %s/%s (%d bytes)", off, n, c.st.URL(), o.Key, o.Size)
	}
	b, err := c.st.GetRange(ctx, o.Key, off, n)
	c.mu.Lock()
	c.fetched += int64(len(b))
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if crc32.Checksum(b, castagnoli) != crc {
		return &base.CorruptError{Kind: "object", Path: c.st.URL() + "/" + o.Key, Offset: off,
			Reason: fmt.Sprintf("range [%d, %d) fails its CRC32C", off, off+n)}
	}
	f, err := os.OpenFile(c.path(o.Key), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b, off)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	added := p.ranges[off] < n
	if added {
		p.ranges[off] = n
	}
	p.mu.Unlock()
	if added {
		c.mu.Lock()
		e.size += n
		c.bytes += n
		c.evictLocked()
		c.mu.Unlock()
	}
	return nil
}

// fetchLazy makes every byte of o present (whole blocks, each checked
// against the manifest's CRC32C).
func (c *cache) fetchLazy(ctx context.Context, o Object) error {
	if !o.lazy() {
		return nil
	}
	return c.fetchSpan(ctx, o, 0, o.Size)
}

// present reports whether [off, off+n) of the cached object o is in its
// file.
func (c *cache) present(o Object, off, n int64) bool {
	c.mu.Lock()
	e := c.entries[o.Key]
	ok := e != nil && e.loading == nil
	c.mu.Unlock()
	return ok && (e.part == nil || e.part.present(off, n))
}

// fetchSpan makes [off, off+n) of the cached object o present: the
// BlockSize blocks it spans that are absent are fetched (a ranged GET per
// run of them), each checked against the manifest's CRC32C (else a
// *base.CorruptError naming the object and the block's offset) and
// written into the cached file. Concurrent calls fetch each block once:
// a block another call is fetching is waited for.
func (c *cache) fetchSpan(ctx context.Context, o Object, off, n int64) error {
	c.mu.Lock()
	e := c.entries[o.Key]
	c.mu.Unlock()
	if e == nil || e.loading != nil {
		return fmt.Errorf("remote: %s/%s is not in the cache", c.st.URL(), o.Key)
	}
	p := e.part
	if p == nil || n == 0 {
		return nil
	}
	if off < 0 || n < 0 || off > o.Size || n > o.Size-off {
		return fmt.Errorf("remote: range [%d,+%d) outside %s/%s (%d bytes)", off, n, c.st.URL(), o.Key, o.Size)
	}
	b0, b1 := off/BlockSize, (off+n-1)/BlockSize+1
	for attempt := 0; ; attempt++ {
		var mine []int64
		var wait []chan struct{}
		p.mu.Lock()
		for b := b0; b < b1; b++ {
			if p.blocks[b] {
				continue
			}
			if ch := p.loading[b]; ch != nil {
				wait = append(wait, ch)
				continue
			}
			p.loading[b] = make(chan struct{})
			mine = append(mine, b)
		}
		p.mu.Unlock()
		if len(mine) == 0 && len(wait) == 0 {
			return nil
		}
		if attempt == 3 {
			// Another call's fetch of these blocks failed three times.
			for _, b := range mine {
				p.mu.Lock()
				close(p.loading[b])
				delete(p.loading, b)
				p.mu.Unlock()
			}
			return fmt.Errorf("remote: %s/%s [%d,+%d): blocks still absent after three fetches", c.st.URL(), o.Key, off, n)
		}
		if err := c.loadBlocks(ctx, o, e, p, mine); err != nil {
			return err
		}
		for _, ch := range wait {
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// loadBlocks fetches the blocks bs of o (ascending, claimed in
// p.loading by the caller), a ranged GET per run of consecutive ones,
// marks those that arrived present and releases every claim.
func (c *cache) loadBlocks(ctx context.Context, o Object, e *entry, p *partial, bs []int64) error {
	defer func() {
		p.mu.Lock()
		for _, b := range bs {
			close(p.loading[b])
			delete(p.loading, b)
		}
		p.mu.Unlock()
	}()
	if len(bs) == 0 {
		return nil
	}
	f, err := os.OpenFile(c.path(o.Key), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	for i := 0; i < len(bs); {
		j := i + 1
		for j < len(bs) && bs[j] == bs[j-1]+1 {
			j++
		}
		off, n := bs[i]*BlockSize, min((bs[j-1]+1)*BlockSize, o.Size)-bs[i]*BlockSize
		if err := c.fetchBlocks(ctx, o, f, off, n); err != nil {
			return err
		}
		var had int64
		p.mu.Lock()
		for _, b := range bs[i:j] {
			p.blocks[b] = true
		}
		// Ranges now inside present blocks are counted by the blocks.
		for ro, rn := range p.ranges {
			if ro+rn > off && ro < off+n && p.inBlocks(ro, rn) {
				had += rn
				delete(p.ranges, ro)
			}
		}
		p.mu.Unlock()
		c.mu.Lock()
		e.size += n - had
		c.bytes += n - had
		c.evictLocked()
		c.mu.Unlock()
		i = j
	}
	return nil
}

// RangedMinBytes: objects at least this large are fetched as ranged GETs
// of RangePartBytes, RangeParallel at a time, each part checked against
// its blocks' CRC32C as it arrives (the SHA-256, which needs the bytes in
// order, is not computed: the block checksums cover every byte). Parallel
// parts pay where one connection's bandwidth is the limit (S3); over
// loopback to versitygw on 2 cores a whole stream was faster (126 MB in
// 5 objects: 255 ms streamed, 387 ms in 8 MiB parts, s3bench), hence
// the high default.
var (
	RangedMinBytes int64 = 256 << 20
	RangePartBytes int64 = 8 * BlockSize
	RangeParallel        = 4
)

func (c *cache) downloadRanges(ctx context.Context, o Object, f *os.File) error {
	url := c.st.URL() + "/" + o.Key
	if int64(len(o.Blocks)) != (o.Size+BlockSize-1)/BlockSize {
		return &base.CorruptError{Kind: "remote manifest", Path: url, Reason: "block list does not fit the size"}
	}
	nparts := int((o.Size + RangePartBytes - 1) / RangePartBytes)
	errs := make([]error, nparts)
	sem := make(chan struct{}, RangeParallel)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := 0; i < nparts; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			off := int64(i) * RangePartBytes
			n := min(RangePartBytes, o.Size-off)
			b, err := c.st.GetRange(ctx, o.Key, off, n)
			c.mu.Lock()
			c.fetched += int64(len(b))
			c.mu.Unlock()
			if err != nil {
				errs[i] = err
				cancel()
				return
			}
			for bo := int64(0); bo < n; bo += BlockSize {
				blk := b[bo:min(bo+BlockSize, n)]
				if crc32.Checksum(blk, castagnoli) != o.Blocks[(off+bo)/BlockSize] {
					errs[i] = &base.CorruptError{Kind: "object", Path: url, Offset: off + bo,
						Reason: fmt.Sprintf("block [%d, %d) fails its CRC32C", off+bo, off+bo+int64(len(blk)))}
					return // later parts still run: the first bad block is reported
				}
			}
			if _, err := f.WriteAt(b, off); err != nil {
				errs[i] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		var ce *base.CorruptError
		if errors.As(err, &ce) {
			return err // the lowest corrupt offset
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// verifyingWriter passes bytes to w while computing the SHA-256 and the
// per-block CRC32C that Object.verify checks.
type verifyingWriter struct {
	w      io.Writer
	sha    hash.Hash
	n      int64
	blocks []uint32
	cur    uint32 // CRC32C of the current block so far
}

func (v *verifyingWriter) Write(p []byte) (int, error) {
	n, err := v.w.Write(p)
	p = p[:n]
	v.sha.Write(p)
	for len(p) > 0 {
		room := BlockSize - int(v.n%BlockSize)
		k := min(room, len(p))
		v.cur = crc32.Update(v.cur, castagnoli, p[:k])
		v.n += int64(k)
		p = p[k:]
		if v.n%BlockSize == 0 {
			v.blocks = append(v.blocks, v.cur)
			v.cur = 0
		}
	}
	return n, err
}

// check compares what was written with o: size, then each block in
// order (the first bad one's offset is reported), then the SHA-256.
func (v *verifyingWriter) check(o Object, url string) error {
	blocks := v.blocks
	if v.n%BlockSize != 0 {
		blocks = append(blocks, v.cur)
	}
	if v.n != o.Size {
		return &base.CorruptError{Kind: "object", Path: url, Offset: min(v.n, o.Size),
			Reason: fmt.Sprintf("size %d, manifest says %d", v.n, o.Size)}
	}
	for i, want := range o.Blocks {
		if i >= len(blocks) || blocks[i] != want {
			off := int64(i) * BlockSize
			return &base.CorruptError{Kind: "object", Path: url, Offset: off,
				Reason: fmt.Sprintf("block [%d, %d) fails its CRC32C", off, min(off+BlockSize, o.Size))}
		}
	}
	if hex.EncodeToString(v.sha.Sum(nil)) != o.SHA256 {
		return &base.CorruptError{Kind: "object", Path: url, Reason: "SHA-256 differs from the manifest's"}
	}
	return nil
}

// unpin releases one pin of key taken by get.
func (c *cache) unpin(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil && e.pins > 0 {
		e.pins--
		c.evictLocked()
	}
}

func (c *cache) evictLocked() {
	if c.bytes <= c.limit {
		return
	}
	var keys []string
	for k, e := range c.entries {
		if e.pins == 0 && e.loading == nil {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return c.entries[keys[i]].used.Before(c.entries[keys[j]].used) })
	for _, k := range keys {
		if c.bytes <= c.limit {
			return
		}
		e := c.entries[k]
		if err := os.Remove(c.path(k)); err != nil && !os.IsNotExist(err) {
			continue
		}
		delete(c.entries, k)
		c.bytes -= e.size
	}
}

// CacheStats reports the cache.
type CacheStats struct {
	Bytes, Limit, Objects, FetchedBytes, Hits, Misses int64
}

func (c *cache) stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Bytes: c.bytes, Limit: c.limit, Objects: int64(len(c.entries)), FetchedBytes: c.fetched,
		Hits: c.hits, Misses: c.misses}
}

func (s CacheStats) String() string {
	return fmt.Sprintf("%d objects, %d of %d bytes, fetched %d bytes, %d hits, %d misses", s.Objects, s.Bytes,
		s.Limit, s.FetchedBytes, s.Hits, s.Misses)
}
