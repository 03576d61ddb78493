package embed

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Options configures a Client. The zero value of every field but BaseURL
// and Model means the default documented on it (EnsureDefaults fills them).
type Options struct {
	// BaseURL is the server's base URL, e.g. "http://127.0.0.1:7701"; the
	// client posts to BaseURL + "/v1/embeddings" (a BaseURL that already
	// ends in "/v1" is accepted too). Required; http or https.
	BaseURL string
	// Model is the model name sent in each request and returned by
	// Client.Model; the engine records it in a collection's config.
	// Required.
	Model string
	// Dim is the expected embedding dimension. 0 = learn it from the first
	// response (Client.Probe learns it up front); after that every response
	// must have that dimension. Default 0.
	Dim int
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>".
	// Default none.
	APIKey string
	// BatchSize is the largest number of texts in one request. Default 64.
	BatchSize int
	// MaxRetries is the number of retries after a failed attempt (so at
	// most MaxRetries+1 attempts per request); 0 means the default, a
	// negative value means no retries. Default 4.
	MaxRetries int
	// Timeout bounds one attempt (connect, send, server time, read).
	// Default 30 s.
	Timeout time.Duration
	// BackoffBase is the backoff before the first retry; it doubles per
	// retry. Default 250 ms.
	BackoffBase time.Duration
	// BackoffMax caps the exponential backoff. Default 8 s.
	BackoffMax time.Duration
	// MaxRetryAfter caps how long a server's Retry-After may make the
	// client wait. Default 60 s.
	MaxRetryAfter time.Duration
	// HTTPClient sends the requests. Default a client with no overall
	// timeout (Timeout applies per attempt) over http.DefaultTransport.
	HTTPClient *http.Client
}

// Defaults of Options.
const (
	DefaultBatchSize     = 64
	DefaultMaxRetries    = 4
	DefaultTimeout       = 30 * time.Second
	DefaultBackoffBase   = 250 * time.Millisecond
	DefaultBackoffMax    = 8 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
	// MaxBatchSize is the largest accepted BatchSize.
	MaxBatchSize = 4096
	// MaxDim is the largest accepted embedding dimension.
	MaxDim = 65536
)

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	} else if o.MaxRetries < 0 {
		o.MaxRetries = -1
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.BackoffBase == 0 {
		o.BackoffBase = DefaultBackoffBase
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = DefaultBackoffMax
	}
	if o.MaxRetryAfter == 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
}

// retries is the number of retries EnsureDefaults' MaxRetries stands for.
func (o *Options) retries() int {
	if o.MaxRetries < 0 {
		return 0
	}
	return o.MaxRetries
}

// Validate reports every problem with o (call after EnsureDefaults).
func (o *Options) Validate() error {
	var errs []error
	if o.BaseURL == "" {
		errs = append(errs, errors.New("embed: BaseURL is required"))
	} else if u, err := url.Parse(o.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("embed: BaseURL = %q, want an http:// or https:// URL with a host", o.BaseURL))
	}
	if o.Model == "" {
		errs = append(errs, errors.New("embed: Model is required"))
	}
	if o.Dim < 0 || o.Dim > MaxDim {
		errs = append(errs, fmt.Errorf("embed: Dim = %d, want 0 (learn) or 1..%d", o.Dim, MaxDim))
	}
	if o.BatchSize < 1 || o.BatchSize > MaxBatchSize {
		errs = append(errs, fmt.Errorf("embed: BatchSize = %d, want 1..%d", o.BatchSize, MaxBatchSize))
	}
	if o.MaxRetries > 100 {
		errs = append(errs, fmt.Errorf("embed: MaxRetries = %d, want ≤ 100", o.MaxRetries))
	}
	if o.Timeout < 0 {
		errs = append(errs, fmt.Errorf("embed: Timeout = %v, want > 0", o.Timeout))
	}
	if o.BackoffBase < 0 {
		errs = append(errs, fmt.Errorf("embed: BackoffBase = %v, want > 0", o.BackoffBase))
	}
	if o.BackoffMax < o.BackoffBase {
		errs = append(errs, fmt.Errorf("embed: BackoffMax = %v, want ≥ BackoffBase (%v)", o.BackoffMax, o.BackoffBase))
	}
	if o.MaxRetryAfter < 0 {
		errs = append(errs, fmt.Errorf("embed: MaxRetryAfter = %v, want ≥ 0", o.MaxRetryAfter))
	}
	return errors.Join(errs...)
}
