package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/testenv/s3gw"
	"github.com/stratasearch/strata/vfs/objstore"
)

// TestWriterRace: writers race for the lease, and a takeover races the
// old holder's publications, all against the real gateway: exactly one
// writer takes the lease, and after the new holder's fence no version is
// published under the old holder's token.
func TestWriterRace(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	ctx := context.Background()
	const n = 4
	dbs := make([]*dbT, n)
	for i := range dbs {
		dbs[i] = newDBT(t)
		upsert(t, createCol(t, dbs[i].db, "docs"), 0, 20+i, i)
	}
	// 1. n writers open at once: one lease.
	var wg sync.WaitGroup
	ws := make([]*Writer, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws[i], errs[i] = OpenWriter(ctx, st, dbs[i].db, WriterOptions{Owner: fmt.Sprint("w", i), LeaseTTL: time.Hour})
		}()
	}
	wg.Wait()
	holder := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if holder >= 0 {
				t.Fatalf("writers %d and %d both took the lease", holder, i)
			}
			holder = i
		case !errors.Is(err, ErrLeaseHeld):
			t.Fatalf("writer %d: %v, want ErrLeaseHeld", i, err)
		}
	}
	if holder < 0 {
		t.Fatal("no writer took the lease")
	}
	h := ws[holder]
	// 2. The holder publishes in a loop while the others (their clocks
	// past the lease) race to take over.
	stop := make(chan struct{})
	var hErr error
	var hDone sync.WaitGroup
	hDone.Add(1)
	go func() {
		defer hDone.Done()
		c := mustCol(t, dbs[holder].db, "docs")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.Upsert(ctx, []contract.Document{doc(1000+i, 9)}); err != nil {
				hErr = err
				return
			}
			c.Flush(ctx)
			if _, err := h.Publish(ctx); err != nil {
				hErr = err
				return
			}
		}
	}()
	saved := timeNow
	timeNow = func() time.Time { return time.Now().Add(2 * time.Hour) }
	ws2 := make([]*Writer, n)
	var won atomic.Bool
	for i := range n {
		if i == holder {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A contender retries while the lease looks expired to it: the
			// holder renews on every publication, so a takeover can lose
			// the If-Match race to a renewal any number of times on a
			// loaded host. It stops once any contender won.
			for attempt := 0; attempt < 500 && !won.Load(); attempt++ {
				ws2[i], errs[i] = OpenWriter(ctx, st, dbs[i].db, WriterOptions{Owner: fmt.Sprint("t", i), LeaseTTL: time.Hour})
				if errs[i] == nil {
					won.Store(true)
					return
				}
				if !errors.Is(errs[i], ErrLeaseHeld) {
					return
				}
			}
		}()
	}
	wg.Wait()
	timeNow = saved
	taker := -1
	for i := range n {
		if i == holder {
			continue
		}
		if errs[i] == nil {
			if taker >= 0 {
				t.Fatalf("takeovers %d and %d both succeeded", taker, i)
			}
			taker = i
		} else if !errors.Is(errs[i], ErrLeaseHeld) {
			t.Fatalf("takeover %d: %v", i, errs[i])
		}
	}
	if taker < 0 {
		t.Fatal("no takeover succeeded")
	}
	hDone.Wait() // the holder stops on its own: fenced
	close(stop)
	if !errors.Is(hErr, ErrLeaseLost) && !errors.Is(hErr, ErrPublishConflict) {
		t.Fatalf("old holder ended with %v, want ErrLeaseLost or ErrPublishConflict", hErr)
	}
	tw := ws2[taker]
	if _, err := tw.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	// Versions are dense 1..newest; once the taker's token appears, the
	// old holder's never does again.
	newest, err := newestVersion(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	seenTaker := false
	for v := uint64(1); v <= newest; v++ {
		m, err := readManifest(ctx, st, v)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		switch m.LeaseToken {
		case tw.lease.Token:
			seenTaker = true
		case h.lease.Token:
			if seenTaker {
				t.Fatalf("version %d published by the fenced writer after the takeover", v)
			}
		default:
			t.Fatalf("version %d by an unknown token (writer %s)", v, m.Writer)
		}
	}
	if !seenTaker {
		t.Fatal("the taker published nothing")
	}
}

type dbT struct {
	db  *engineDB
	dir string
}

func newDBT(t *testing.T) *dbT {
	dir := t.TempDir()
	d := &dbT{db: openDB(t, dir), dir: dir}
	t.Cleanup(func() { d.db.Close() })
	return d
}

// TestGatewayOutage: with the gateway stopped, a reader keeps serving its
// view and reports degraded; the writer's publication fails without
// fencing it; after a restart both recover without being reopened.
func TestGatewayOutage(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	ctx := context.Background()
	d := newDBT(t)
	c := createCol(t, d.db, "docs")
	upsert(t, c, 0, 100, 0)
	w, err := OpenWriter(ctx, st, d.db, WriterOptions{LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	r := openReader(t, st)
	want, v1 := viewResults(t, r, "docs")

	g.Stop()
	if _, err := r.Refresh(ctx); !errors.Is(err, objstore.ErrUnavailable) {
		t.Fatalf("refresh with the gateway down: %v", err)
	}
	if s := r.Status(); !s.Degraded || s.Version != v1 || !strings.Contains(s.Error, "unavailable") {
		t.Fatalf("status while down: %+v", s)
	}
	if got, _ := viewResults(t, r, "docs"); !reflect.DeepEqual(got, want) {
		t.Fatal("reader stopped serving from its cache during the outage")
	}
	upsert(t, c, 100, 150, 0)
	if _, err := w.Publish(ctx); !errors.Is(err, objstore.ErrUnavailable) {
		t.Fatalf("publish while down: %v", err)
	}
	// A reader started during the outage: degraded, no view.
	r2, err := OpenReader(ctx, st, ReaderOptions{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.Acquire() != nil || !r2.Status().Degraded {
		t.Fatal("reader opened during the outage claims a view")
	}

	if err := g.Restart(); err != nil {
		t.Fatal(err)
	}
	v2, err := w.Publish(ctx)
	if err != nil {
		t.Fatalf("publish after the restart: %v", err)
	}
	for _, rr := range []*Reader{r, r2} {
		if v, err := rr.Refresh(ctx); err != nil || v != v2 {
			t.Fatalf("refresh after restart = %d, %v; want %d", v, err, v2)
		}
		if s := rr.Status(); s.Degraded {
			t.Fatalf("still degraded: %+v", s)
		}
		if got, _ := viewResults(t, rr, "docs"); !reflect.DeepEqual(got, results(t, c)) {
			t.Fatal("reader differs from the writer after recovery")
		}
	}
}

// publishedSegments starts a gateway and a writer (lease TTL an hour,
// the given Grace) whose collection "docs" holds ten segments, more than
// CompactMaxSegments (8), and publishes them as the returned version.
func publishedSegments(t *testing.T, grace time.Duration) (*objstore.Store, *engine.Collection, *Writer, uint64) {
	t.Helper()
	st := newStore(t, s3gw.Start(t))
	d := newDBT(t)
	c := createCol(t, d.db, "docs")
	for i := 0; i < 10; i++ {
		upsert(t, c, i*20, i*20+20, 0)
	}
	w, err := OpenWriter(context.Background(), st, d.db, WriterOptions{LeaseTTL: time.Hour, Grace: grace})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := w.Publish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st, c, w, v1
}

// TestCollect: compaction replaces segments; garbage collection keeps
// the objects of the newest manifest and of a version a live reader
// pins, deletes the rest (and orphan uploads) once older than Grace, and
// the reader on the old version keeps serving.
func TestCollect(t *testing.T) {
	const grace = 300 * time.Millisecond
	st, c, w, v1 := publishedSegments(t, grace)
	ctx := context.Background()
	old := openReader(t, st)
	want, _ := viewResults(t, old, "docs")
	if err := c.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, []string{"d0003"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	v2, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	orphan := dataDir + "docs/0000-orphan.sst"
	if _, err := st.Put(ctx, orphan, []byte("left by a crashed upload")); err != nil {
		t.Fatal(err)
	}
	k1, k2 := m1Keys(t, st, v1), m1Keys(t, st, v2)
	if reflect.DeepEqual(k1, k2) {
		t.Fatal("compaction changed no object")
	}
	time.Sleep(grace + time.Second + 50*time.Millisecond) // listings give modification times to the second
	if _, err := old.Refresh(ctx); err != nil {           // heartbeat: still pins... the newest now
		t.Fatal(err)
	}
	// Pin v1 explicitly as a reader that has not refreshed yet would.
	pinV1(t, st, v1)
	if _, err := w.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	present := keysUnder(t, st, dataDir)
	for _, k := range append(k1, k2...) {
		if !present[k] {
			t.Fatalf("object %s of a live or pinned manifest was deleted", k)
		}
	}
	if present[orphan] {
		t.Fatal("orphan upload survived collection")
	}
	time.Sleep(grace + 50*time.Millisecond)
	old.Refresh(ctx)
	unpinV1(t, st)
	if _, err := w.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	present = keysUnder(t, st, dataDir)
	for _, k := range k1 {
		if !contains(k2, k) && present[k] {
			t.Fatalf("object %s only the unpinned old manifest used was kept", k)
		}
	}
	for _, k := range k2 {
		if !present[k] {
			t.Fatalf("object %s of the newest manifest was deleted", k)
		}
	}
	if ms := keysUnder(t, st, manifestDir); len(ms) != 1 || !ms[ManifestKey(v2)] {
		t.Fatalf("manifests left: %v, want only %d", ms, v2)
	}
	// A reader opened before still serves from its local copy.
	r := openReader(t, st)
	got, _ := viewResults(t, r, "docs")
	if reflect.DeepEqual(got, want) {
		// d0003 must be gone from the new version's results if it ranked.
		for _, hs := range got {
			for _, h := range hs {
				if h.ID == "d0003" {
					t.Fatal("deleted document served")
				}
			}
		}
	}
}

func pinV1(t *testing.T, st *objstore.Store, v uint64) {
	t.Helper()
	b := []byte(fmt.Sprintf(`{"version":%d,"heartbeat":%q}`, v, time.Now().UTC().Format(time.RFC3339Nano)))
	if _, err := st.Put(context.Background(), readersDir+"test-pin", b); err != nil {
		t.Fatal(err)
	}
}

func unpinV1(t *testing.T, st *objstore.Store) {
	t.Helper()
	if err := st.Delete(context.Background(), readersDir+"test-pin"); err != nil {
		t.Fatal(err)
	}
}

func keysUnder(t *testing.T, st *objstore.Store, prefix string) map[string]bool {
	t.Helper()
	l, err := st.List(context.Background(), prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, o := range l {
		m[o.Key] = true
	}
	return m
}

// The kill test's child: a writer process that acknowledges writes (one
// line per acknowledged batch), flushes, publishes, and stops at the
// named point waiting to be killed.
func TestMain(m *testing.M) {
	if mode := os.Getenv("STRATA_REMOTE_CHILD"); mode != "" {
		os.Exit(childWriter(mode))
	}
	os.Exit(m.Run())
}

func childWriter(mode string) int {
	ctx := context.Background()
	fail := func(err error) int { fmt.Println("error:", err); return 1 }
	st, err := objstore.New(objstore.Config{Endpoint: os.Getenv("STRATA_REMOTE_ENDPOINT"), AccessKey: s3gw.AccessKey,
		SecretKey: s3gw.SecretKey, Bucket: "strata", Prefix: os.Getenv("STRATA_REMOTE_PREFIX")})
	if err != nil {
		return fail(err)
	}
	db, err := engineOpen(os.Getenv("STRATA_REMOTE_DB"))
	if err != nil {
		return fail(err)
	}
	c, err := db.Collection("docs")
	if err != nil {
		return fail(err)
	}
	w, err := OpenWriter(ctx, st, db, WriterOptions{Owner: "child", LeaseTTL: time.Hour})
	if err != nil {
		return fail(err)
	}
	block := func() { fmt.Println("kill-me"); select {} }
	first := true
	switch mode {
	case "upload":
		testHookUpload = func(string) {
			if !first {
				block()
			}
			first = false
		}
	case "publish":
		testHookBeforePut = block
	case "mid-upload":
		// Signal and go on: the parent's SIGKILL lands while the
		// object's PUT is in flight.
		testHookUpload = func(key string) {
			if _, err := st.Stat(ctx, key); err == nil || !first {
				return // uploaded by the earlier writer: no PUT follows
			}
			first = false
			fmt.Println("kill-me")
		}
	}
	for i := 0; i < 4; i++ {
		var docs []contract.Document
		for j := 0; j < 40; j++ {
			d := doc(500+i*40+j, 5)
			if mode == "mid-upload" { // megabytes of segment to upload
				r := rand.New(rand.NewPCG(uint64(i), uint64(j)))
				var b strings.Builder
				for b.Len() < 16<<10 {
					fmt.Fprintf(&b, "%016x ", r.Uint64())
				}
				d.Content += b.String()
			}
			docs = append(docs, d)
		}
		if _, err := c.Upsert(ctx, docs); err != nil {
			return fail(err)
		}
		fmt.Println("acked", i)
		if i < 3 {
			if err := c.Flush(ctx); err != nil {
				return fail(err)
			}
		}
	}
	if _, err := w.Publish(ctx); err != nil {
		return fail(err)
	}
	block() // mode "after"
	return 0
}

// TestKillWriter: kill -9 the writer process during an upload, between
// the uploads and the manifest write, and after publication. Every
// acknowledged write survives (the WAL replays), readers only ever see a
// whole published version, a new writer takes over and publishes
// everything, and the orphans are collected.
func TestKillWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts writer processes")
	}
	g := s3gw.Start(t)
	for _, mode := range []string{"mid-upload", "upload", "publish", "after"} {
		t.Run(mode, func(t *testing.T) {
			st := newStore(t, g)
			ctx := context.Background()
			dir := t.TempDir()
			db := openDB(t, dir)
			upsert(t, createCol(t, db, "docs"), 0, 100, 0)
			w, err := OpenWriter(ctx, st, db, WriterOptions{Owner: "first", LeaseTTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			vBase, err := w.Publish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			w.Close(ctx)
			db.Close()

			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "STRATA_REMOTE_CHILD="+mode, "STRATA_REMOTE_ENDPOINT="+g.Endpoint,
				"STRATA_REMOTE_PREFIX="+st.Prefix(), "STRATA_REMOTE_DB="+dir)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			acked := -1
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				line := sc.Text()
				if n, ok := strings.CutPrefix(line, "acked "); ok {
					acked, _ = strconv.Atoi(n)
				}
				if line == "kill-me" {
					break
				}
				if strings.HasPrefix(line, "error:") {
					t.Fatal(line)
				}
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if acked < 0 {
				t.Fatal("child acknowledged nothing")
			}
			// A reader sees one whole version: the base or the child's.
			r := openReader(t, st)
			if s := r.Status(); s.Degraded || s.Version < vBase {
				t.Fatalf("reader after the kill: %+v", s)
			}
			// No object is visible half-written: each one's content
			// hashes to its key.
			for k := range keysUnder(t, st, dataDir) {
				b, _, err := st.Get(ctx, k)
				if err != nil {
					t.Fatal(err)
				}
				sum, _ := checksums(b)
				if !strings.Contains(k, "/"+sum[:32]+"-") {
					t.Fatalf("object %s holds %d bytes that hash to %s: a partial upload is visible", k, len(b), sum[:32])
				}
			}
			newest, _ := newestVersion(ctx, st, 0)
			childPublished := newest > vBase+1 // +1: the child's fence
			if childPublished != (mode == "after") {
				t.Fatalf("mode %s: newest version %d (base %d)", mode, newest, vBase)
			}
			// Recovery: every acknowledged write is in the reopened DB.
			db = openDB(t, dir)
			defer db.Close()
			c := mustCol(t, db, "docs")
			for i := 0; i <= acked; i++ {
				for j := 0; j < 40; j++ {
					id := doc(500+i*40+j, 5).ID
					if _, err := c.Get(ctx, id); err != nil {
						t.Fatalf("acknowledged %s lost: %v", id, err)
					}
				}
			}
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			// The new writer's clock is past the dead writer's lease.
			saved := timeNow
			timeNow = func() time.Time { return time.Now().Add(2 * time.Hour) }
			defer func() { timeNow = saved }()
			w2, err := OpenWriter(ctx, st, db, WriterOptions{Owner: "second", LeaseTTL: time.Hour, Grace: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			v, err := w2.Publish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := r.Refresh(ctx); err != nil || got != v {
				t.Fatalf("refresh = %d, %v; want %d", got, err, v)
			}
			if got, _ := viewResults(t, r, "docs"); !reflect.DeepEqual(got, results(t, c)) {
				t.Fatal("reader differs from the recovered writer")
			}
			r.Close()
			if _, err := w2.Collect(ctx); err != nil {
				t.Fatal(err)
			}
			live := map[string]bool{}
			for _, k := range m1Keys(t, st, v) {
				live[k] = true
			}
			for k := range keysUnder(t, st, dataDir) {
				if !live[k] {
					t.Fatalf("orphan %s survived collection", k)
				}
			}
			for k := range live {
				if !keysUnder(t, st, dataDir)[k] {
					t.Fatalf("live object %s collected", k)
				}
			}
		})
	}
}

// TestRenewDuringUpload: an upload that takes longer than the lease TTL
// does not fence the writer: Run keeps renewing meanwhile.
func TestRenewDuringUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("waits past a lease TTL")
	}
	g := s3gw.Start(t)
	st := newStore(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := newDBT(t)
	upsert(t, createCol(t, d.db, "docs"), 0, 30, 0)
	const ttl = 1500 * time.Millisecond
	w, err := OpenWriter(ctx, st, d.db, WriterOptions{LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	go w.Run(ctx, time.Hour, nil) // renewals only
	slow := true
	testHookUpload = func(string) {
		if slow {
			slow = false
			time.Sleep(ttl + 500*time.Millisecond)
		}
	}
	defer func() { testHookUpload = nil }()
	if _, err := w.Publish(ctx); err != nil {
		t.Fatalf("publish after an upload longer than the TTL: %v", err)
	}
}
