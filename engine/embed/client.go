package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Client is an Embedder over an OpenAI-compatible HTTP endpoint (see the
// package doc). Safe for concurrent use.
type Client struct {
	o        Options
	endpoint string
	dim      atomic.Int64

	mu  sync.Mutex
	rng *rand.Rand

	// sleep waits d or until ctx ends (tests replace it).
	sleep func(ctx context.Context, d time.Duration) error
}

var _ Embedder = (*Client)(nil)

// NewClient returns a client for o (defaults filled, then validated: every
// problem is reported). It does not contact the server; Probe does.
func NewClient(o Options) (*Client, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	base := strings.TrimRight(o.BaseURL, "/")
	base = strings.TrimSuffix(base, "/v1")
	c := &Client{o: o, endpoint: base + "/v1/embeddings", rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5eed)), sleep: sleepCtx}
	c.dim.Store(int64(o.Dim))
	return c, nil
}

// Model returns Options.Model.
func (c *Client) Model() string { return c.o.Model }

// Dim returns Options.Dim, or the dimension learned from the first
// response, or 0 before any.
func (c *Client) Dim() int { return int(c.dim.Load()) }

// Options returns the client's options (defaults filled).
func (c *Client) Options() Options { return c.o }

// Probe embeds one short text to check the server is reachable and to
// learn the dimension; it returns the dimension.
func (c *Client) Probe(ctx context.Context) (int, error) {
	if _, err := c.Embed(ctx, []string{"dimension probe"}); err != nil {
		return 0, err
	}
	return c.Dim(), nil
}

// Embed embeds texts (any number; sent BatchSize per request, in order)
// and returns len(texts) vectors of Dim() components. Errors: the caller's
// context error, *StatusError (a non-retryable HTTP answer),
// ErrBadResponse, ErrRetriesExhausted (wrapping the last failure). No
// vectors are returned with an error.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for lo := 0; lo < len(texts); lo += c.o.BatchSize {
		hi := min(lo+c.o.BatchSize, len(texts))
		vecs, err := c.request(ctx, texts[lo:hi])
		if err != nil {
			if len(texts) > c.o.BatchSize {
				return nil, fmt.Errorf("embed: texts %d..%d: %w", lo, hi-1, err)
			}
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// request sends one batch with retries.
func (c *Client) request(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(Request{Model: c.o.Model, Input: texts})
	if err != nil {
		return nil, fmt.Errorf("embed: encode request: %w", err)
	}
	retries := c.o.retries()
	var last error
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		vecs, retryAfter, err := c.attempt(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err() // the caller gave up: not a server failure
		}
		if !retryable(err) {
			return nil, err
		}
		last = err
		if attempt >= retries {
			break
		}
		wait := c.backoff(attempt)
		if retryAfter > 0 {
			wait = max(wait, min(retryAfter, c.o.MaxRetryAfter))
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w after %d attempts: %w", ErrRetriesExhausted, retries+1, last)
}

// attempt sends one request under its own Timeout. It returns the server's
// Retry-After (0 if none) with a failure.
func (c *Client) attempt(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("embed: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.o.APIKey)
	}
	resp, err := c.o.HTTPClient.Do(req)
	if err != nil {
		if actx.Err() != nil && ctx.Err() == nil {
			return nil, 0, &attemptTimeout{c.o.Timeout}
		}
		return nil, 0, &connError{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), &StatusError{Code: resp.StatusCode, Body: string(b)}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		if actx.Err() != nil && ctx.Err() == nil {
			return nil, 0, &attemptTimeout{c.o.Timeout}
		}
		return nil, 0, &connError{err}
	}
	if len(b) > MaxResponseBytes {
		return nil, 0, fmt.Errorf("%w: body over %d bytes", ErrBadResponse, MaxResponseBytes)
	}
	vecs, _, err := DecodeResponse(b, n, c.Dim())
	if err != nil {
		return nil, 0, err
	}
	if len(vecs) > 0 {
		// The first response fixes the dimension; a concurrent first
		// response of another dimension fails its own check next time.
		c.dim.CompareAndSwap(0, int64(len(vecs[0])))
		if d := c.Dim(); len(vecs[0]) != d {
			return nil, 0, fmt.Errorf("%w: %d components, want %d", ErrBadResponse, len(vecs[0]), d)
		}
	}
	return vecs, 0, nil
}

// connError is a transport failure (refused, reset, EOF): retryable.
type connError struct{ err error }

func (e *connError) Error() string { return "embed: connection: " + e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// attemptTimeout is one attempt exceeding Options.Timeout: retryable.
type attemptTimeout struct{ d time.Duration }

func (e *attemptTimeout) Error() string {
	return fmt.Sprintf("embed: request timed out after %v (Options.Timeout)", e.d)
}

// Timeout marks it as a timeout (net.Error style).
func (e *attemptTimeout) Timeout() bool { return true }

func retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Retryable()
	}
	var ce *connError
	var te *attemptTimeout
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &te) || errors.As(err, &ne)
}

// backoff is attempt a's wait: uniform in [d/2, d], d = min(base·2^a, max).
func (c *Client) backoff(a int) time.Duration {
	d := c.o.BackoffBase
	for i := 0; i < a && d < c.o.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, c.o.BackoffMax)
	if d <= 1 {
		return d
	}
	c.mu.Lock()
	j := time.Duration(c.rng.Int64N(int64(d/2) + 1))
	c.mu.Unlock()
	return d/2 + j
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP
// date (RFC 9110 §10.2.3). 0 when absent or unparsable.
func parseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		if s > 1<<31 {
			s = 1 << 31
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
