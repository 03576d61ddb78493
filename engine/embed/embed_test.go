package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// vecOf is the fake server's deterministic embedding of a text.
func vecOf(text string, dim int) []float64 {
	v := make([]float64, dim)
	for i := range v {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d|%s", i, text)
		v[i] = float64(h.Sum64()%2001)/1000 - 1
	}
	return v
}

// fakeServer answers /v1/embeddings per the protocol; fail, when set, may
// answer instead (return true when it wrote a response).
type fakeServer struct {
	dim      int
	mu       sync.Mutex
	batches  [][]string
	calls    atomic.Int64
	auth     []string
	fail     func(call int, w http.ResponseWriter) bool
	reversed bool // answer entries in reverse order
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := int(f.calls.Add(1))
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "not found", 404)
		return
	}
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.mu.Lock()
	f.batches = append(f.batches, req.Input)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if f.fail != nil && f.fail(call, w) {
		return
	}
	type entry struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	var resp struct {
		Object string  `json:"object"`
		Data   []entry `json:"data"`
		Model  string  `json:"model"`
	}
	resp.Object, resp.Model = "list", req.Model
	for i, t := range req.Input {
		resp.Data = append(resp.Data, entry{"embedding", i, vecOf(t, f.dim)})
	}
	if f.reversed {
		for i, j := 0, len(resp.Data)-1; i < j; i, j = i+1, j-1 {
			resp.Data[i], resp.Data[j] = resp.Data[j], resp.Data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func newTestClient(t *testing.T, url string, o Options) (*Client, *sleeps) {
	t.Helper()
	o.BaseURL = url
	if o.Model == "" {
		o.Model = "fake-model"
	}
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	s := &sleeps{}
	c.sleep = s.sleep
	return c, s
}

func checkVecs(t *testing.T, texts []string, got [][]float32, dim int) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(texts))
	}
	for i, tx := range texts {
		want := vecOf(tx, dim)
		if len(got[i]) != dim {
			t.Fatalf("vector %d: %d components, want %d", i, len(got[i]), dim)
		}
		for k := range want {
			if got[i][k] != float32(want[k]) {
				t.Fatalf("vector %d (%q) component %d = %v, want %v", i, tx, k, got[i][k], want[k])
			}
		}
	}
}

func TestBatchingSplitsAndKeepsOrder(t *testing.T) {
	fs := &fakeServer{dim: 8}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, Options{BatchSize: 64})
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d", i)
	}
	got, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, texts, got, 8)
	var sizes []int
	for _, b := range fs.batches {
		sizes = append(sizes, len(b))
	}
	if fmt.Sprint(sizes) != "[64 64 22]" {
		t.Fatalf("batch sizes %v, want [64 64 22]", sizes)
	}
	if fs.batches[1][0] != "text 64" || fs.batches[2][21] != "text 149" {
		t.Fatalf("batches not in input order: %q ... %q", fs.batches[1][0], fs.batches[2][21])
	}
	if c.Dim() != 8 {
		t.Fatalf("learned Dim %d, want 8", c.Dim())
	}
	// Empty input: no request.
	n := fs.calls.Load()
	if v, err := c.Embed(context.Background(), nil); err != nil || len(v) != 0 || fs.calls.Load() != n {
		t.Fatalf("empty Embed: %v %v, %d calls", v, err, fs.calls.Load()-n)
	}
}

func TestOutOfOrderEntriesArePlacedByIndex(t *testing.T) {
	fs := &fakeServer{dim: 4, reversed: true}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL+"/v1/", Options{})
	texts := []string{"a", "b", "c"}
	got, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, texts, got, 4)
}

func TestAPIKeyHeader(t *testing.T) {
	fs := &fakeServer{dim: 2}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, Options{APIKey: "sk-test"})
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	c2, _ := newTestClient(t, srv.URL, Options{})
	if _, err := c2.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if fs.auth[0] != "Bearer sk-test" || fs.auth[1] != "" {
		t.Fatalf("Authorization headers %q", fs.auth)
	}
}

func TestRetry503ThenSuccess(t *testing.T) {
	fs := &fakeServer{dim: 3, fail: func(call int, w http.ResponseWriter) bool {
		if call <= 2 {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return true
		}
		return false
	}}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	c, sl := newTestClient(t, srv.URL, Options{BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second})
	got, err := c.Embed(context.Background(), []string{"p", "q"})
	if err != nil {
		t.Fatal(err)
	}
	checkVecs(t, []string{"p", "q"}, got, 3)
	if fs.calls.Load() != 3 {
		t.Fatalf("%d calls, want 3", fs.calls.Load())
	}
	// Backoff with jitter: attempt a waits within [d/2, d], d = 100ms·2^a.
	if len(sl.d) != 2 {
		t.Fatalf("slept %v, want 2 waits", sl.d)
	}
	for a, d := range sl.d {
		hi := 100 * time.Millisecond << a
		if d < hi/2 || d > hi {
			t.Fatalf("wait %d = %v, want in [%v, %v]", a, d, hi/2, hi)
		}
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	fs := &fakeServer{dim: 3, fail: func(call int, w http.ResponseWriter) bool {
		switch call {
		case 1:
			w.Header().Set("Retry-After", "3")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return true
		case 2:
			w.Header().Set("Retry-After", "3600") // capped by MaxRetryAfter
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return true
		}
		return false
	}}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	c, sl := newTestClient(t, srv.URL, Options{BackoffBase: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond, MaxRetryAfter: 5 * time.Second})
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if len(sl.d) != 2 || sl.d[0] != 3*time.Second || sl.d[1] != 5*time.Second {
		t.Fatalf("waits %v, want [3s 5s]", sl.d)
	}
}

func TestGiveUpAfterMaxRetries(t *testing.T) {
	fs := &fakeServer{dim: 3, fail: func(call int, w http.ResponseWriter) bool {
		http.Error(w, "down", http.StatusBadGateway)
		return true
	}}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	c, sl := newTestClient(t, srv.URL, Options{MaxRetries: 3})
	_, err := c.Embed(context.Background(), []string{"x"})
	if !errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("err = %v, want ErrRetriesExhausted", err)
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 502 || !strings.Contains(se.Body, "down") {
		t.Fatalf("err = %v, want it to wrap the 502", err)
	}
	if fs.calls.Load() != 4 || len(sl.d) != 3 {
		t.Fatalf("%d calls, %d waits; want 4 and 3", fs.calls.Load(), len(sl.d))
	}
	// No retries at all.
	fs.calls.Store(0)
	c2, _ := newTestClient(t, srv.URL, Options{MaxRetries: -1})
	if _, err := c2.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrRetriesExhausted) || fs.calls.Load() != 1 {
		t.Fatalf("MaxRetries -1: err %v after %d calls", err, fs.calls.Load())
	}
}

func TestNonRetryableStatus(t *testing.T) {
	fs := &fakeServer{dim: 3, fail: func(call int, w http.ResponseWriter) bool {
		http.Error(w, `{"error":"unknown model"}`, http.StatusBadRequest)
		return true
	}}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, Options{})
	_, err := c.Embed(context.Background(), []string{"x"})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 400 || errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("err = %v, want a plain 400 StatusError", err)
	}
	if fs.calls.Load() != 1 {
		t.Fatalf("%d calls, want 1 (400 is not retried)", fs.calls.Load())
	}
}

func TestBadResponsesAreNotRetried(t *testing.T) {
	cases := map[string]string{
		"not json":           `<html>oops</html>`,
		"trailing data":      `{"data":[{"index":0,"embedding":[1,2]}]} {}`,
		"too few":            `{"data":[]}`,
		"too many":           `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2]}]}`,
		"missing index":      `{"data":[{"embedding":[1,2]}]}`,
		"index out of range": `{"data":[{"index":1,"embedding":[1,2]}]}`,
		"negative index":     `{"data":[{"index":-1,"embedding":[1,2]}]}`,
		"null embedding":     `{"data":[{"index":0,"embedding":null}]}`,
		"nan literal":        `{"data":[{"index":0,"embedding":[NaN,2]}]}`,
		"float32 overflow":   `{"data":[{"index":0,"embedding":[1e39,2]}]}`,
		"float64 overflow":   `{"data":[{"index":0,"embedding":[1e999,2]}]}`,
		"string component":   `{"data":[{"index":0,"embedding":["1",2]}]}`,
		"base64 embedding":   `{"data":[{"index":0,"embedding":"AAAA"}]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				w.Write([]byte(body))
			}))
			defer srv.Close()
			c, _ := newTestClient(t, srv.URL, Options{})
			v, err := c.Embed(context.Background(), []string{"x"})
			if !errors.Is(err, ErrBadResponse) || v != nil {
				t.Fatalf("err = %v (vectors %v), want ErrBadResponse", err, v)
			}
			if calls.Load() != 1 {
				t.Fatalf("%d calls, want 1", calls.Load())
			}
		})
	}
}

func TestDimensionIsEnforced(t *testing.T) {
	fs := &fakeServer{dim: 5}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, Options{Dim: 4})
	if _, err := c.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), "want 4") {
		t.Fatalf("err = %v, want a dimension error", err)
	}
	// A learned dimension binds later responses.
	c2, _ := newTestClient(t, srv.URL, Options{})
	if d, err := c2.Probe(context.Background()); err != nil || d != 5 {
		t.Fatalf("Probe = %d, %v; want 5", d, err)
	}
	fs.dim = 6
	if _, err := c2.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrBadResponse) {
		t.Fatalf("dimension change: err = %v, want ErrBadResponse", err)
	}
	// Mixed dimensions within one response.
	if _, _, err := DecodeResponse([]byte(`{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]}`), 2, 0); !errors.Is(err, ErrBadResponse) {
		t.Fatalf("mixed dims: err = %v", err)
	}
}

func TestTimeoutIsRetriedThenReported(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, sl := newTestClient(t, srv.URL, Options{Timeout: 50 * time.Millisecond, MaxRetries: 2})
	t0 := time.Now()
	_, err := c.Embed(context.Background(), []string{"x"})
	if !errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want retries exhausted after timeouts", err)
	}
	if calls.Load() != 3 || len(sl.d) != 2 {
		t.Fatalf("%d calls, %d waits; want 3 and 2", calls.Load(), len(sl.d))
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Fatalf("took %v", el)
	}
}

func TestContextCancellationStopsAtOnce(t *testing.T) {
	started := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only once the body is read
		started <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	c, err := NewClient(Options{BaseURL: srv.URL, Model: "m", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	t0 := time.Now()
	_, err = c.Embed(ctx, []string{"x"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Fatalf("cancellation took %v", el)
	}
	// Cancelled during a backoff wait (real sleep).
	fs := &fakeServer{dim: 2, fail: func(int, http.ResponseWriter) bool { return false }}
	fs.fail = func(call int, w http.ResponseWriter) bool { http.Error(w, "x", 503); return true }
	srv2 := httptest.NewServer(fs)
	defer srv2.Close()
	c2, _ := NewClient(Options{BaseURL: srv2.URL, Model: "m", BackoffBase: time.Hour, BackoffMax: time.Hour})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if _, err := c2.Embed(ctx2, []string{"x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
}

func TestConnectionErrorIsRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	c, sl := newTestClient(t, url, Options{MaxRetries: 2})
	_, err := c.Embed(context.Background(), []string{"x"})
	var ce *connError
	if !errors.Is(err, ErrRetriesExhausted) || !errors.As(err, &ce) {
		t.Fatalf("err = %v, want retries exhausted on a connection error", err)
	}
	if len(sl.d) != 2 {
		t.Fatalf("%d waits, want 2", len(sl.d))
	}
}

func TestOptionsValidateReportsEverything(t *testing.T) {
	o := Options{BaseURL: "ftp://x", Dim: -1, BatchSize: -3, Timeout: -1, BackoffBase: time.Second, BackoffMax: time.Millisecond}
	o.EnsureDefaults()
	err := o.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"BaseURL", "Model", "Dim", "BatchSize", "Timeout", "BackoffMax"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if _, err := NewClient(Options{BaseURL: "http://127.0.0.1:1", Model: "m"}); err != nil {
		t.Fatalf("valid options: %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"":                              0,
		"7":                             7 * time.Second,
		"0":                             0,
		"-5":                            0,
		"soon":                          0,
		"Sun, 29 Nov 2026 12:00:10 GMT": 10 * time.Second,
		"Sun, 29 Nov 2026 11:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(h, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	c, err := NewClient(Options{BaseURL: "http://x", Model: "m", BackoffBase: 100 * time.Millisecond, BackoffMax: 800 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for a := 0; a < 10; a++ {
		hi := min(100*time.Millisecond<<a, 800*time.Millisecond)
		for r := 0; r < 50; r++ {
			if d := c.backoff(a); d < hi/2 || d > hi {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", a, d, hi/2, hi)
			}
		}
	}
}

func TestCheckVectors(t *testing.T) {
	if err := CheckVectors([][]float32{{1, 2}, {3, 4}}, 2, 2); err != nil {
		t.Fatal(err)
	}
	if err := CheckVectors([][]float32{{1, 2}}, 2, 2); !errors.Is(err, ErrBadResponse) {
		t.Fatalf("count: %v", err)
	}
	if err := CheckVectors([][]float32{{1, 2, 3}}, 1, 2); !errors.Is(err, ErrDimMismatch) {
		t.Fatalf("dim: %v", err)
	}
	if err := CheckVectors([][]float32{{float32(math.Inf(1)), 2}}, 1, 2); !errors.Is(err, ErrBadResponse) {
		t.Fatalf("inf: %v", err)
	}
}

func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":0,"embedding":[0.5,-1]},{"index":1,"embedding":[1,2]}],"model":"m"}`), 2, 0)
	f.Add([]byte(`{"data":[{"index":1,"embedding":[0.5,-1]},{"index":0,"embedding":[1,2]}]}`), 2, 2)
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1e39]}]}`), 1, 1)
	f.Add([]byte(`{"data":[{"index":0,"embedding":[]}]}`), 1, 0)
	f.Add([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[3]}],"usage":{"prompt_tokens":1}}`), 1, 0)
	f.Add([]byte(`[]`), 0, 0)
	f.Add([]byte(`{"data":null}`), 0, 3)
	f.Fuzz(func(t *testing.T, body []byte, n, dim int) {
		if n < 0 || n > 1000 || dim < 0 || dim > MaxDim {
			return
		}
		vecs, _, err := DecodeResponse(body, n, dim)
		if err != nil {
			if !errors.Is(err, ErrBadResponse) {
				t.Fatalf("error %v does not wrap ErrBadResponse", err)
			}
			if vecs != nil {
				t.Fatal("vectors returned with an error")
			}
			return
		}
		if len(vecs) != n {
			t.Fatalf("%d vectors for n = %d", len(vecs), n)
		}
		d := dim
		if n > 0 && d == 0 {
			d = len(vecs[0])
		}
		if err := CheckVectors(vecs, n, d); err != nil {
			t.Fatalf("accepted response fails CheckVectors: %v", err)
		}
	})
}
