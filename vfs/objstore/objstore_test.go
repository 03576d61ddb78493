package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stratasearch/strata/internal/testenv/s3gw"
	"github.com/stratasearch/strata/vfs/objstore"
)

func newStore(t *testing.T, g *s3gw.Gateway, prefix string) *objstore.Store {
	t.Helper()
	s, err := objstore.New(objstore.Config{Endpoint: g.Endpoint, AccessKey: s3gw.AccessKey, SecretKey: s3gw.SecretKey,
		Bucket: "strata-test", Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestObjectOps(t *testing.T) {
	g := s3gw.Start(t)
	s := newStore(t, g, "p/q")
	ctx := context.Background()
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	etag, err := s.Put(ctx, "a/obj", data)
	if err != nil || etag == "" {
		t.Fatalf("put: %q %v", etag, err)
	}
	got, getEtag, err := s.Get(ctx, "a/obj")
	if err != nil || !bytes.Equal(got, data) || getEtag != etag {
		t.Fatalf("get: %d bytes, etag %q (put %q), %v", len(got), getEtag, etag, err)
	}
	r, err := s.GetRange(ctx, "a/obj", 1234, 100)
	if err != nil || !bytes.Equal(r, data[1234:1334]) {
		t.Fatalf("range: %v", err)
	}
	if _, err := s.GetRange(ctx, "a/obj", 9990, 100); err == nil {
		t.Fatal("range past the end succeeded")
	}
	var buf bytes.Buffer
	if n, err := s.GetTo(ctx, "a/obj", &buf); err != nil || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("GetTo: %d %v", n, err)
	}
	if st, err := s.Stat(ctx, "a/obj"); err != nil || st.Size != int64(len(data)) || st.ETag != etag {
		t.Fatalf("stat: %+v %v", st, err)
	}
	for _, k := range []string{"a/b1", "a/b2", "c/d"} {
		if _, err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.List(ctx, "a/", "a/b1")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range l {
		keys = append(keys, o.Key)
	}
	if fmt.Sprint(keys) != "[a/b2 a/obj]" {
		t.Fatalf("list a/ after a/b1 = %v", keys)
	}
	if _, _, err := s.Get(ctx, "missing"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	var oe *objstore.Error
	if _, _, err := s.Get(ctx, "missing"); !errors.As(err, &oe) || oe.Key != "strata-test/p/q/missing" {
		t.Fatalf("error does not name the key: %v", err)
	}
	if err := s.Delete(ctx, "a/b1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "a/b1"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("stat deleted: %v", err)
	}
	if err := s.Delete(ctx, "a/b1"); err != nil {
		t.Fatalf("delete missing: %v", err)
	}

	// Conditional writes.
	e1, err := s.PutIfAbsent(ctx, "cas", []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfAbsent(ctx, "cas", []byte("v2")); !errors.Is(err, objstore.ErrConflict) {
		t.Fatalf("second If-None-Match: * put: %v, want ErrConflict", err)
	}
	e2, err := s.PutIfMatch(ctx, "cas", []byte("v2"), e1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfMatch(ctx, "cas", []byte("v3"), e1); !errors.Is(err, objstore.ErrConflict) {
		t.Fatalf("If-Match on a stale etag: %v, want ErrConflict", err)
	}
	if b, et, _ := s.Get(ctx, "cas"); string(b) != "v2" || et != e2 {
		t.Fatalf("cas object = %q %q", b, et)
	}

	// Outage: ErrUnavailable, then service again after a restart.
	g.Stop()
	if _, _, err := s.Get(ctx, "cas"); !errors.Is(err, objstore.ErrUnavailable) {
		t.Fatalf("get with the gateway down: %v, want ErrUnavailable", err)
	}
	if err := g.Restart(); err != nil {
		t.Fatal(err)
	}
	if b, _, err := s.Get(ctx, "cas"); err != nil || string(b) != "v2" {
		t.Fatalf("get after restart: %q %v", b, err)
	}
}

// TestConditionalPutRace: many goroutines race conditional writes on one
// key; exactly one of each round wins (If-None-Match: * on a new key, and
// If-Match on the current etag), against the pinned versitygw.
func TestConditionalPutRace(t *testing.T) {
	g := s3gw.Start(t)
	s := newStore(t, g, "race")
	ctx := context.Background()
	const writers = 8
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	for round := 0; round < rounds; round++ {
		key := fmt.Sprintf("k%d", round)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var wins []int
		var etag string
		start := make(chan struct{})
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// A body big enough that staging takes a while.
				body := bytes.Repeat([]byte{byte(w)}, 256<<10)
				et, err := s.PutIfAbsent(ctx, key, body)
				if err == nil {
					mu.Lock()
					wins, etag = append(wins, w), et
					mu.Unlock()
				} else if !errors.Is(err, objstore.ErrConflict) {
					t.Errorf("writer %d: %v", w, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("round %d: If-None-Match: * won by %v, want exactly one", round, wins)
		}
		got, _, _ := s.Get(ctx, key)
		if len(got) == 0 || int(got[0]) != wins[0] {
			t.Fatalf("round %d: object holds writer %v's bytes, winner %d", round, got[:1], wins[0])
		}
		// If-Match on the same etag: one winner again.
		wins = nil
		start = make(chan struct{})
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := s.PutIfMatch(ctx, key, bytes.Repeat([]byte{byte(100 + w)}, 256<<10), etag)
				if err == nil {
					mu.Lock()
					wins = append(wins, w)
					mu.Unlock()
				} else if !errors.Is(err, objstore.ErrConflict) {
					t.Errorf("writer %d: %v", w, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("round %d: If-Match won by %v, want exactly one", round, wins)
		}
	}
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct{ in, b, p string }{
		{"s3://bkt/a/b/", "bkt", "a/b"}, {"s3://bkt", "bkt", ""}, {"s3://bkt/x", "bkt", "x"},
	} {
		b, p, err := objstore.ParseURL(c.in)
		if err != nil || b != c.b || p != c.p {
			t.Errorf("ParseURL(%q) = %q %q %v", c.in, b, p, err)
		}
	}
	for _, bad := range []string{"", "http://x/y", "s3:///p", "bkt/p"} {
		if _, _, err := objstore.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		}
	}
}
