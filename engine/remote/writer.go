package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/vfs/objstore"
)

// Writer errors.
var (
	// ErrLeaseHeld: another writer holds an unexpired lease.
	ErrLeaseHeld = errors.New("remote: another writer holds the lease")
	// ErrLeaseLost: this writer's lease was taken over (or expired past
	// its safety margin); it publishes nothing more. Reopen to compete
	// again.
	ErrLeaseLost = errors.New("remote: lease lost: this writer may not publish")
	// ErrPublishConflict: another writer published the version this one
	// tried (the If-None-Match: * write lost). The writer is fenced off
	// like after ErrLeaseLost.
	ErrPublishConflict = errors.New("remote: manifest version already published by another writer")
)

// Lease is the JSON of the lease object: who may publish, until when,
// and the newest manifest version when it was taken (its fence).
type Lease struct {
	Owner   string    `json:"owner"`
	Token   string    `json:"token"`
	Expires time.Time `json:"expires"`
	Fence   uint64    `json:"fence"`
}

// WriterOptions configures a Writer.
type WriterOptions struct {
	// Owner names the writer in the lease (host:pid by default).
	Owner string
	// LeaseTTL is how long a lease lasts without renewal. Default 10s.
	// Publication refuses to start later than LeaseTTL/2 after the last
	// renewal, so a paused writer cannot publish on a lease that may
	// have passed to another.
	LeaseTTL time.Duration
	// Staging is the local directory for hard links of the files being
	// uploaded. Default DB dir/remote-staging.
	Staging string
	// Grace is how long garbage collection keeps manifests and objects
	// that a reader may still use: manifests replaced by a newer version
	// less than Grace ago, manifests pinned by a reader heartbeat younger
	// than Grace, and any object younger than Grace (an upload not yet
	// published). Readers' PinInterval must be well under it. Default 1m.
	Grace time.Duration
}

// Writer publishes a local engine.DB to an object store: the one writer
// of a bucket prefix, holding the lease.
type Writer struct {
	st  *objstore.Store
	db  *engine.DB
	o   WriterOptions
	now func() time.Time

	// lmu guards the lease state; Renew takes only it, so renewals go
	// on while a long Publish uploads (under mu).
	lmu       sync.Mutex
	lease     Lease
	leaseETag string
	renewed   time.Time
	fenced    error // ErrLeaseLost / ErrPublishConflict once lost

	mu       sync.Mutex // Publish, Collect: the fields below
	version  uint64     // newest version published or seen
	uploaded map[string]bool
	objects  map[string]Object    // collection/file/size/mtime → its uploaded object
	last     []CollectionManifest // of the newest version this writer published
	stats    WriterStats
}

// WriterStats counts what a Writer did.
type WriterStats struct {
	Published, Uploaded, UploadedBytes, Deleted int64
}

// OpenWriter takes the lease of st's prefix for db (ErrLeaseHeld if
// another writer holds it) and publishes a fence manifest: a copy of the
// newest manifest under this writer's token at the next version, so a
// previous writer that lost the lease can no longer publish any version
// it would try (versions are taken by If-None-Match: *).
func OpenWriter(ctx context.Context, st *objstore.Store, db *engine.DB, o WriterOptions) (*Writer, error) {
	if o.Owner == "" {
		h, _ := os.Hostname()
		o.Owner = fmt.Sprintf("%s:%d", h, os.Getpid())
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 10 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = time.Minute
	}
	if o.Staging == "" {
		o.Staging = filepath.Join(db.Dir(), "remote-staging")
	}
	w := &Writer{st: st, db: db, o: o, now: timeNow, uploaded: map[string]bool{}, objects: map[string]Object{}}
	if err := st.EnsureBucket(ctx); err != nil {
		return nil, err
	}
	newest, err := newestVersion(ctx, st, 0)
	if err != nil {
		return nil, err
	}
	if err := w.acquire(ctx, newest); err != nil {
		return nil, err
	}
	// Fence: take the next version with the newest state.
	var cols []CollectionManifest
	if newest > 0 {
		m, err := readManifest(ctx, st, newest)
		if err != nil {
			return nil, err
		}
		cols = m.Collections
	}
	w.version = newest
	// A previous holder may still publish once in flight (it renewed
	// before the takeover): its version then collides with the fence,
	// which is retried on the newest state. Its next renewal fails.
	for attempt := 0; ; attempt++ {
		err := w.put(ctx, cols)
		if err == nil {
			return w, nil
		}
		if !errors.Is(err, ErrPublishConflict) || attempt >= 10 {
			return nil, err
		}
		w.lmu.Lock()
		w.fenced = nil
		w.lmu.Unlock()
		if w.version, err = newestVersion(ctx, st, w.version); err != nil {
			return nil, err
		}
		m, err := readManifest(ctx, st, w.version)
		if err != nil {
			return nil, err
		}
		cols = m.Collections
	}
}

func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// acquire takes the lease: creates it (If-None-Match: *) or replaces an
// expired one (If-Match its etag).
func (w *Writer) acquire(ctx context.Context, newest uint64) error {
	ls := Lease{Owner: w.o.Owner, Token: newToken(), Expires: w.now().Add(w.o.LeaseTTL), Fence: newest}
	b, _ := json.Marshal(ls)
	cur, etag, err := w.st.Get(ctx, leaseKey)
	var newETag string
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		newETag, err = w.st.PutIfAbsent(ctx, leaseKey, b)
	case err != nil:
		return err
	default:
		var old Lease
		if json.Unmarshal(cur, &old) == nil && w.now().Before(old.Expires) {
			return fmt.Errorf("%w: %s until %s", ErrLeaseHeld, old.Owner, old.Expires.Format(time.RFC3339Nano))
		}
		newETag, err = w.st.PutIfMatch(ctx, leaseKey, b, etag)
	}
	if errors.Is(err, objstore.ErrConflict) {
		return fmt.Errorf("%w: lost the race to take it: %w", ErrLeaseHeld, err)
	}
	if err != nil {
		return err
	}
	w.lease, w.leaseETag, w.renewed = ls, newETag, w.now()
	return nil
}

// renewLocked extends the lease (If-Match its etag). The If-Match is
// what proves that nobody took the lease over, however long ago the last
// renewal was (a pause or an outage past the TTL is harmless when it
// still holds). A conflict fences the writer off (ErrLeaseLost), unless
// the lease object still carries this writer's token: then an earlier
// renewal was applied but its answer lost, and the writer adopts that
// object's etag and renews again. w.lmu is held.
func (w *Writer) renewLocked(ctx context.Context) error {
	if w.fenced != nil {
		return w.fenced
	}
	for attempt := 0; ; attempt++ {
		t := w.now()
		ls := w.lease
		ls.Expires = t.Add(w.o.LeaseTTL)
		b, _ := json.Marshal(ls)
		etag, err := w.st.PutIfMatch(ctx, leaseKey, b, w.leaseETag)
		if errors.Is(err, objstore.ErrConflict) && attempt == 0 {
			cur, curETag, gerr := w.st.Get(ctx, leaseKey)
			var held Lease
			if gerr == nil && json.Unmarshal(cur, &held) == nil && held.Token == w.lease.Token {
				w.leaseETag = curETag
				continue
			}
			if gerr != nil && !errors.Is(gerr, objstore.ErrNotFound) {
				return gerr // cannot tell yet; the next renewal asks again
			}
		}
		if errors.Is(err, objstore.ErrConflict) || errors.Is(err, objstore.ErrNotFound) {
			w.fenced = fmt.Errorf("%w: %w", ErrLeaseLost, err)
			return w.fenced
		}
		if err != nil {
			return err
		}
		w.lease, w.leaseETag, w.renewed = ls, etag, t
		return nil
	}
}

// Renew extends the lease. Run calls it every LeaseTTL/3.
func (w *Writer) Renew(ctx context.Context) error {
	w.lmu.Lock()
	defer w.lmu.Unlock()
	return w.renewLocked(ctx)
}

func (w *Writer) fencedErr() error {
	w.lmu.Lock()
	defer w.lmu.Unlock()
	return w.fenced
}

// Version returns the newest manifest version this writer published.
func (w *Writer) Version() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.version
}

// Stats returns the writer's counters.
func (w *Writer) Stats() WriterStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Publish uploads the flushed state of every collection (segment and
// archive files not uploaded yet, If-None-Match: *) and then publishes it
// as the next manifest version. Nothing is published when the state
// equals the newest published one (returns that version). Unflushed
// writes (the MemTable, in the local WAL) are not published: readers see
// what was flushed. A segment a background flush wrote without its
// vector index (tier package doc, "Deferred vector indexes") is
// published as it is, and readers scan its vectors exactly; once the
// writer has built its index, the next Publish uploads the rewritten
// segment in its place. Errors: ErrLeaseLost, ErrPublishConflict (both fence
// the writer off for good), object-store errors (retry later).
func (w *Writer) Publish(ctx context.Context) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.fencedErr(); err != nil {
		return 0, err
	}
	if err := os.RemoveAll(w.o.Staging); err != nil {
		return 0, err
	}
	defer os.RemoveAll(w.o.Staging)
	var cols []CollectionManifest
	for _, name := range w.db.Collections() {
		c, err := w.db.Collection(name)
		if errors.Is(err, engine.ErrUnavailable) {
			// Broken locally: readers keep the last published state.
			for _, l := range w.last {
				if l.Name == name {
					cols = append(cols, l)
				}
			}
			continue
		}
		if err != nil {
			continue // dropped meanwhile
		}
		cfg, err := os.ReadFile(filepath.Join(w.db.Dir(), "collections", name, "collection.json"))
		if err != nil {
			return 0, fmt.Errorf("remote: collection %q config: %w", name, err)
		}
		dir := filepath.Join(w.o.Staging, name)
		state, err := c.LinkStoreState(dir)
		if err != nil {
			return 0, fmt.Errorf("remote: collection %q: %w", name, err)
		}
		cm := CollectionManifest{Name: name, Config: cfg, State: state}
		files := make([]string, 0, len(state.Segments)+len(state.Archives))
		for _, s := range state.Segments {
			files = append(files, s.File)
		}
		for _, a := range state.Archives {
			files = append(files, a.File)
		}
		for _, f := range files {
			o, err := w.upload(ctx, name, filepath.Join(dir, f), f)
			if err != nil {
				return 0, err
			}
			cm.Objects = append(cm.Objects, o)
		}
		cols = append(cols, cm)
	}
	if w.last != nil && reflect.DeepEqual(stripConfig(cols), stripConfig(w.last)) {
		return w.version, nil
	}
	if err := w.put(ctx, cols); err != nil {
		return 0, err
	}
	return w.version, nil
}

func stripConfig(c []CollectionManifest) []CollectionManifest {
	out := make([]CollectionManifest, len(c))
	for i, m := range c {
		m.Config = nil
		out[i] = m
	}
	return out
}

// timeNow is the writers' clock (tests move it).
var timeNow = time.Now

// testHookUpload, if set, runs before each object upload.
var testHookUpload func(key string)

// testHookBeforePut, if set, runs after the uploads and before the
// manifest write (fault tests stop the process there).
var testHookBeforePut func()

// put renews the lease and writes version+1 with cols (If-None-Match: *).
// When that version exists under this writer's own lease token, an
// earlier put was stored but its answer lost: the writer adopts it as
// published and, if it holds other collections than cols, writes cols
// on top of it.
func (w *Writer) put(ctx context.Context, cols []CollectionManifest) error {
	if testHookBeforePut != nil {
		testHookBeforePut()
	}
	w.lmu.Lock()
	defer w.lmu.Unlock()
	if cols == nil {
		cols = []CollectionManifest{}
	}
	want, err := json.Marshal(cols)
	if err != nil {
		return err
	}
	for {
		if err := w.renewLocked(ctx); err != nil {
			return err
		}
		m := Manifest{FormatVersion: FormatVersion, Version: w.version + 1, Parent: w.version, Writer: w.o.Owner,
			LeaseToken: w.lease.Token, Created: w.now().UTC(), Collections: cols}
		b, err := json.Marshal(&m)
		if err != nil {
			return err
		}
		// The lease was renewed just now; refuse if the renewal is already
		// older than half the TTL (a pause between renew and put).
		if w.now().Sub(w.renewed) > w.o.LeaseTTL/2 {
			w.fenced = fmt.Errorf("%w: paused %s between renewal and publication", ErrLeaseLost, w.now().Sub(w.renewed))
			return w.fenced
		}
		_, err = w.st.PutIfAbsent(ctx, ManifestKey(m.Version), b)
		if err == nil {
			w.version, w.last = m.Version, cols
			w.stats.Published++
			return nil
		}
		if !errors.Is(err, objstore.ErrConflict) {
			return err
		}
		there, rerr := readManifest(ctx, w.st, m.Version)
		if rerr != nil && !errors.Is(rerr, objstore.ErrNotFound) {
			var ce *base.CorruptError
			if !errors.As(rerr, &ce) {
				return rerr // cannot tell whose it is yet; retry later
			}
		}
		if rerr != nil || there.LeaseToken != w.lease.Token {
			w.fenced = fmt.Errorf("%w: version %d: %w", ErrPublishConflict, m.Version, err)
			return w.fenced
		}
		w.version, w.last = there.Version, there.Collections
		w.stats.Published++
		if got, _ := json.Marshal(there.Collections); string(got) == string(want) {
			return nil
		}
	}
}

// upload puts the file at path (named file in the store) under its
// content key unless already there, and returns its Object.
func (w *Writer) upload(ctx context.Context, col, path, file string) (Object, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Object{}, err
	}
	// Segment and archive files are immutable and their ids never
	// reused within a store: one uploaded before (same name, size and
	// modification time: a collection dropped and created again reuses
	// names) is not read again.
	memo := fmt.Sprintf("%s/%s/%d/%d", col, file, fi.Size(), fi.ModTime().UnixNano())
	if o, ok := w.objects[memo]; ok {
		return o, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Object{}, err
	}
	sum, blocks := checksums(b)
	o := Object{File: file, Key: objectKey(col, file, sum), Size: int64(len(b)), SHA256: sum, Blocks: blocks}
	if off, n, ok := tier.TextSection(b); ok {
		o.Lazy = &Range{Off: off, Len: n}
	}
	if off, n, ok := tier.PostingsSection(b); ok {
		o.Postings = &Range{Off: off, Len: n}
	}
	if w.uploaded[o.Key] {
		return o, nil
	}
	if testHookUpload != nil {
		testHookUpload(o.Key)
	}
	if _, err := w.st.PutIfAbsent(ctx, o.Key, b); err != nil {
		if !errors.Is(err, objstore.ErrConflict) {
			return Object{}, err
		}
		// There already (uploaded before a crash, or by an earlier
		// writer): same key = same content hash; check the size.
		inf, err := w.st.Stat(ctx, o.Key)
		if err != nil {
			return Object{}, err
		}
		if inf.Size != o.Size {
			return Object{}, fmt.Errorf("remote: object %s exists with %d bytes, want %d", o.Key, inf.Size, o.Size)
		}
	} else {
		w.stats.Uploaded++
		w.stats.UploadedBytes += o.Size
	}
	w.uploaded[o.Key] = true
	w.objects[memo] = o
	return o, nil
}

// Collect deletes what no live manifest references (garbage
// collection; only the writer calls it, never a reader). It first renews
// the lease, so a writer that lost it deletes nothing. Live manifests:
// the newest, those replaced by a newer version less than Grace ago (a
// reader that read one while it was the newest may still be fetching its
// objects), and those a reader heartbeat younger than Grace pins
// (readers/<id>; the heartbeat's age is the younger of its own time
// stamp and the pin object's modification time, so a reader whose clock
// lags is not dropped). Objects under data/ that no live manifest
// references and that are older than Grace (so an upload of the next
// version is never taken) are deleted, then the manifests that are not
// live. It returns the number of objects deleted.
func (w *Writer) Collect(ctx context.Context) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.Renew(ctx); err != nil {
		return 0, err
	}
	now := w.now()
	ms, err := w.st.List(ctx, manifestDir, "")
	if err != nil {
		return 0, err
	}
	pinned := map[uint64]bool{}
	rs, err := w.st.List(ctx, readersDir, "")
	if err != nil {
		return 0, err
	}
	for _, r := range rs {
		b, _, err := w.st.Get(ctx, r.Key)
		if err != nil {
			continue
		}
		var p readerPin
		if json.Unmarshal(b, &p) == nil && (now.Sub(p.Heartbeat) < w.o.Grace || storedAge(now, r.LastModified) < w.o.Grace) {
			pinned[p.Version] = true
		} else if now.Sub(r.LastModified) > 10*w.o.Grace {
			_ = w.st.Delete(ctx, r.Key) // a long-gone reader
		}
	}
	var versions []uint64
	for _, m := range ms {
		if v, ok := parseManifestKey(m.Key); ok {
			versions = append(versions, v)
		}
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i] < versions[j] })
	if len(versions) == 0 {
		return 0, nil
	}
	mans := make([]*Manifest, len(versions))
	for i, v := range versions {
		m, err := readManifest(ctx, w.st, v)
		if err != nil {
			if errors.Is(err, objstore.ErrUnavailable) {
				return 0, err
			}
			// A damaged old manifest keeps nothing alive, except the newest.
			if i == len(versions)-1 {
				return 0, err
			}
			continue
		}
		mans[i] = m
	}
	live := map[string]bool{}
	var dead []uint64
	var replaced time.Time // Created of the next readable version
	for i := len(versions) - 1; i >= 0; i-- {
		m := mans[i]
		if m == nil {
			dead = append(dead, versions[i])
			continue
		}
		if i == len(versions)-1 || now.Sub(replaced) < w.o.Grace || pinned[versions[i]] {
			for _, c := range m.Collections {
				for _, o := range c.Objects {
					live[o.Key] = true
				}
			}
		} else {
			dead = append(dead, versions[i])
		}
		replaced = m.Created
	}
	objs, err := w.st.List(ctx, dataDir, "")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range objs {
		if live[o.Key] || storedAge(now, o.LastModified) < w.o.Grace {
			continue
		}
		if err := w.st.Delete(ctx, o.Key); err != nil {
			return n, err
		}
		delete(w.uploaded, o.Key)
		for m, ob := range w.objects {
			if ob.Key == o.Key {
				delete(w.objects, m)
			}
		}
		n++
	}
	for _, v := range dead {
		if err := w.st.Delete(ctx, ManifestKey(v)); err != nil {
			return n, err
		}
		n++
	}
	w.stats.Deleted += int64(n)
	return n, nil
}

// storedAge is how long ago, at the latest, an object listed with
// modification time lm was written: S3 listings truncate it to the
// second, so the age is counted from the end of that second.
func storedAge(now, lm time.Time) time.Duration { return now.Sub(lm) - time.Second }

// Run renews the lease every LeaseTTL/3, publishes every interval and
// collects garbage every 10 intervals, until ctx is done or the writer is
// fenced off (then it returns that error). Object-store errors are
// retried on the next tick.
func (w *Writer) Run(ctx context.Context, interval time.Duration, logf func(string, ...any)) error {
	pub := time.NewTicker(interval)
	defer pub.Stop()
	ren := time.NewTicker(w.o.LeaseTTL / 3)
	defer ren.Stop()
	ticks := 0
	for {
		var err error
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ren.C:
			err = w.Renew(ctx)
		case <-pub.C:
			_, err = w.Publish(ctx)
			if ticks++; err == nil && ticks%10 == 0 {
				_, err = w.Collect(ctx)
			}
		}
		if errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrPublishConflict) {
			return err
		}
		if err != nil && logf != nil && ctx.Err() == nil {
			logf("remote: writer: %v", err)
		}
	}
}

// Close releases the lease (expires it now, If-Match), so another writer
// can take over at once. The DB stays open.
func (w *Writer) Close(ctx context.Context) error {
	w.lmu.Lock()
	defer w.lmu.Unlock()
	if w.fenced != nil {
		return nil
	}
	ls := w.lease
	ls.Expires = w.now().Add(-time.Second)
	b, _ := json.Marshal(ls)
	_, err := w.st.PutIfMatch(ctx, leaseKey, b, w.leaseETag)
	w.fenced = fmt.Errorf("%w: writer closed", ErrLeaseLost)
	return err
}

// newestVersion lists manifests after `after` and returns the highest
// version (after itself when none is newer).
func newestVersion(ctx context.Context, st *objstore.Store, after uint64) (uint64, error) {
	start := ""
	if after > 0 {
		start = ManifestKey(after)
	}
	l, err := st.List(ctx, manifestDir, start)
	if err != nil {
		return 0, err
	}
	v := after
	for _, o := range l {
		if n, ok := parseManifestKey(o.Key); ok && n > v {
			v = n
		}
	}
	return v, nil
}

func readManifest(ctx context.Context, st *objstore.Store, v uint64) (*Manifest, error) {
	key := ManifestKey(v)
	b, _, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return DecodeManifest(st.URL()+"/"+key, v, b)
}

// readerPin is the JSON of readers/<id>: the version a reader serves.
type readerPin struct {
	Version   uint64    `json:"version"`
	Heartbeat time.Time `json:"heartbeat"`
}
