// Package objstore is Strata's S3 client: the few object operations the
// object-store tier needs (put, conditional put, get, ranged get, stat,
// list, delete) over github.com/minio/minio-go/v7, with errors mapped to
// three sentinels:
//
//   - ErrNotFound: the key (or bucket) does not exist (HTTP 404).
//   - ErrConflict: a conditional write's precondition failed (HTTP 412,
//     or 409 ConditionalRequestConflict): another writer won.
//   - ErrUnavailable: the endpoint could not be reached or answered 5xx.
//
// Every error is an *Error naming the operation and the full key.
//
// A Store addresses keys under one bucket and prefix; URLs take the form
// s3://bucket/prefix. Conditional writes use If-None-Match: * (create
// only) and If-Match: "etag" (replace only that version), which S3,
// MinIO and versitygw (v1.8.0 and later evaluate them under a per-key
// publish lock, so two racing writes never both succeed) honour.
package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Sentinel errors; match with errors.Is.
var (
	ErrNotFound    = errors.New("objstore: not found")
	ErrConflict    = errors.New("objstore: precondition failed (conflicting write)")
	ErrUnavailable = errors.New("objstore: object store unavailable")
)

// Error is an operation's failure: Op ("put", "get", ...), the full key
// (bucket/prefix/key) and the cause, which matches one of the sentinels
// where the response allowed it.
type Error struct {
	Op, Key string
	Err     error
}

func (e *Error) Error() string { return fmt.Sprintf("objstore: %s %s: %v", e.Op, e.Key, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Config locates a bucket and prefix on an S3 endpoint.
type Config struct {
	// Endpoint is host:port (no scheme), e.g. "127.0.0.1:7070".
	Endpoint string
	// Secure selects https.
	Secure bool
	// AccessKey and SecretKey are the S3 credentials.
	AccessKey, SecretKey string
	// Region; default "us-east-1".
	Region string
	// Bucket is required; Prefix (no leading or trailing slash) may be
	// empty.
	Bucket, Prefix string
	// Timeout bounds each request. Default 30s.
	Timeout time.Duration
}

// ParseURL splits "s3://bucket/prefix" into bucket and prefix (slashes
// trimmed).
func ParseURL(u string) (bucket, prefix string, err error) {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "s3" || p.Host == "" {
		return "", "", fmt.Errorf("objstore: want s3://bucket/prefix, got %q", u)
	}
	return p.Host, strings.Trim(p.Path, "/"), nil
}

// ConfigFromEnv fills Endpoint, Secure and the credentials from
// STRATA_S3_ENDPOINT (a URL such as http://127.0.0.1:7070, or host:port),
// STRATA_S3_ACCESS_KEY and STRATA_S3_SECRET_KEY, falling back to
// AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and
// Bucket and Prefix from the s3:// URL u.
func ConfigFromEnv(u string) (Config, error) {
	var c Config
	var err error
	if c.Bucket, c.Prefix, err = ParseURL(u); err != nil {
		return c, err
	}
	env := func(a, b string) string {
		if v := os.Getenv(a); v != "" {
			return v
		}
		return os.Getenv(b)
	}
	ep := env("STRATA_S3_ENDPOINT", "AWS_ENDPOINT_URL")
	if ep == "" {
		return c, errors.New("objstore: no endpoint: set STRATA_S3_ENDPOINT (e.g. http://127.0.0.1:7070)")
	}
	if strings.Contains(ep, "://") {
		pu, err := url.Parse(ep)
		if err != nil {
			return c, fmt.Errorf("objstore: endpoint %q: %w", ep, err)
		}
		c.Endpoint, c.Secure = pu.Host, pu.Scheme == "https"
	} else {
		c.Endpoint = ep
	}
	c.AccessKey = env("STRATA_S3_ACCESS_KEY", "AWS_ACCESS_KEY_ID")
	c.SecretKey = env("STRATA_S3_SECRET_KEY", "AWS_SECRET_ACCESS_KEY")
	return c, nil
}

// Store is a bucket and prefix on an S3 endpoint. Safe for concurrent
// use.
type Store struct {
	c       *minio.Client
	bucket  string
	prefix  string
	timeout time.Duration
}

// New connects (lazily: no request is made) to the endpoint of c.
func New(c Config) (*Store, error) {
	if c.Bucket == "" || c.Endpoint == "" {
		return nil, errors.New("objstore: endpoint and bucket are required")
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	mc, err := minio.New(c.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
		Secure:    c.Secure,
		Region:    c.Region,
		Transport: tr,
		// Retries hide an outage for seconds; the callers decide.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("objstore: %w", err)
	}
	return &Store{c: mc, bucket: c.Bucket, prefix: strings.Trim(c.Prefix, "/"), timeout: c.Timeout}, nil
}

// Bucket and Prefix return the store's location.
func (s *Store) Bucket() string { return s.bucket }
func (s *Store) Prefix() string { return s.prefix }

// URL returns s3://bucket/prefix.
func (s *Store) URL() string { return "s3://" + s.bucket + "/" + s.prefix }

func (s *Store) full(key string) string {
	if s.prefix == "" {
		return key
	}
	return s.prefix + "/" + key
}

func (s *Store) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// mapErr turns a minio-go error into an *Error matching a sentinel.
func (s *Store) mapErr(op, key string, err error) error {
	if err == nil {
		return nil
	}
	full := s.bucket + "/" + s.full(key)
	r := minio.ToErrorResponse(err)
	switch {
	case r.StatusCode == http.StatusNotFound || r.Code == minio.NoSuchKey || r.Code == minio.NoSuchBucket:
		return &Error{op, full, fmt.Errorf("%w: %s", ErrNotFound, r.Code)}
	case r.StatusCode == http.StatusPreconditionFailed || r.Code == minio.PreconditionFailed ||
		r.Code == "ConditionalRequestConflict":
		return &Error{op, full, fmt.Errorf("%w: %s", ErrConflict, r.Code)}
	case r.StatusCode >= 500:
		return &Error{op, full, fmt.Errorf("%w: %s %s", ErrUnavailable, r.Code, r.Message)}
	case r.StatusCode == 0:
		// No HTTP answer: connection refused, reset, timeout.
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) ||
			strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "connection reset") {
			return &Error{op, full, fmt.Errorf("%w: %w", ErrUnavailable, err)}
		}
	}
	return &Error{op, full, err}
}

// EnsureBucket creates the bucket if it does not exist.
func (s *Store) EnsureBucket(ctx context.Context) error {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil {
		return s.mapErr("bucket-exists", "", err)
	}
	if ok {
		return nil
	}
	err = s.c.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: "us-east-1"})
	if r := minio.ToErrorResponse(err); r.Code == "BucketAlreadyOwnedByYou" || r.Code == "BucketAlreadyExists" {
		return nil
	}
	return s.mapErr("make-bucket", "", err)
}

func (s *Store) put(ctx context.Context, op, key string, data []byte, set func(*minio.PutObjectOptions)) (string, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true}
	if set != nil {
		set(&opts)
	}
	info, err := s.c.PutObject(ctx, s.bucket, s.full(key), bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return "", s.mapErr(op, key, err)
	}
	return info.ETag, nil
}

// Put writes data to key unconditionally and returns its ETag.
func (s *Store) Put(ctx context.Context, key string, data []byte) (string, error) {
	return s.put(ctx, "put", key, data, nil)
}

// PutIfAbsent writes data to key only if no object exists there
// (If-None-Match: *); otherwise ErrConflict.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	return s.put(ctx, "put-if-absent", key, data, func(o *minio.PutObjectOptions) { o.SetMatchETagExcept("*") })
}

// PutIfMatch replaces key only if its current ETag is etag (If-Match);
// otherwise ErrConflict (ErrNotFound or ErrConflict if it is gone).
func (s *Store) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if etag == "" {
		return "", &Error{"put-if-match", s.bucket + "/" + s.full(key), errors.New("empty etag")}
	}
	return s.put(ctx, "put-if-match", key, data, func(o *minio.PutObjectOptions) { o.SetMatchETag(etag) })
}

// Get reads the whole object at key and returns it with its ETag. An
// object replaced while it is read (minio-go pins the ETag of the first
// response) is read again.
func (s *Store) Get(ctx context.Context, key string) ([]byte, string, error) {
	for attempt := 0; ; attempt++ {
		b, etag, err := s.get(ctx, key)
		if errors.Is(err, ErrConflict) && attempt < 5 {
			continue
		}
		return b, etag, err
	}
}

func (s *Store) get(ctx context.Context, key string) ([]byte, string, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	obj, err := s.c.GetObject(ctx, s.bucket, s.full(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, "", s.mapErr("get", key, err)
	}
	defer obj.Close()
	st, err := obj.Stat()
	if err != nil {
		return nil, "", s.mapErr("get", key, err)
	}
	b := make([]byte, st.Size)
	if _, err := io.ReadFull(obj, b); err != nil {
		return nil, "", s.mapErr("get", key, err)
	}
	return b, st.ETag, nil
}

// GetRange reads n bytes of key starting at off. Reading past the end
// is an error.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if off < 0 || n <= 0 {
		return nil, &Error{"get-range", s.bucket + "/" + s.full(key), fmt.Errorf("bad range off=%d n=%d", off, n)}
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var o minio.GetObjectOptions
	if err := o.SetRange(off, off+n-1); err != nil {
		return nil, &Error{"get-range", s.bucket + "/" + s.full(key), err}
	}
	obj, err := s.c.GetObject(ctx, s.bucket, s.full(key), o)
	if err != nil {
		return nil, s.mapErr("get-range", key, err)
	}
	defer obj.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(obj, b); err != nil {
		return nil, s.mapErr("get-range", key, err)
	}
	return b, nil
}

// GetRangeTo streams n bytes of key starting at off to w and returns the
// bytes written. Reading past the end is an error.
func (s *Store) GetRangeTo(ctx context.Context, key string, off, n int64, w io.Writer) (int64, error) {
	if off < 0 || n <= 0 {
		return 0, &Error{"get-range", s.bucket + "/" + s.full(key), fmt.Errorf("bad range off=%d n=%d", off, n)}
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var o minio.GetObjectOptions
	if err := o.SetRange(off, off+n-1); err != nil {
		return 0, &Error{"get-range", s.bucket + "/" + s.full(key), err}
	}
	obj, err := s.c.GetObject(ctx, s.bucket, s.full(key), o)
	if err != nil {
		return 0, s.mapErr("get-range", key, err)
	}
	defer obj.Close()
	got, err := io.CopyN(w, obj, n)
	if err != nil {
		return got, s.mapErr("get-range", key, err)
	}
	return got, nil
}

// GetTo streams the object at key to w and returns the bytes written.
func (s *Store) GetTo(ctx context.Context, key string, w io.Writer) (int64, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	obj, err := s.c.GetObject(ctx, s.bucket, s.full(key), minio.GetObjectOptions{})
	if err != nil {
		return 0, s.mapErr("get", key, err)
	}
	defer obj.Close()
	n, err := io.Copy(w, obj)
	if err != nil {
		return n, s.mapErr("get", key, err)
	}
	return n, nil
}

// Info describes an object: its key relative to the store's prefix, size
// in bytes and ETag.
type Info struct {
	Key          string
	Size         int64
	ETag         string
	LastModified time.Time
}

// Stat returns key's metadata.
func (s *Store) Stat(ctx context.Context, key string) (Info, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	st, err := s.c.StatObject(ctx, s.bucket, s.full(key), minio.StatObjectOptions{})
	if err != nil {
		return Info{}, s.mapErr("stat", key, err)
	}
	return Info{Key: key, Size: st.Size, ETag: st.ETag, LastModified: st.LastModified}, nil
}

// List returns the objects whose keys start with prefix (relative to the
// store's prefix) and sort after startAfter (also relative; "" for all),
// in key order.
func (s *Store) List(ctx context.Context, prefix, startAfter string) ([]Info, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	opts := minio.ListObjectsOptions{Prefix: s.full(prefix), Recursive: true}
	if startAfter != "" {
		opts.StartAfter = s.full(startAfter)
	}
	var out []Info
	cut := ""
	if s.prefix != "" {
		cut = s.prefix + "/"
	}
	for o := range s.c.ListObjects(ctx, s.bucket, opts) {
		if o.Err != nil {
			return nil, s.mapErr("list", prefix, o.Err)
		}
		out = append(out, Info{Key: strings.TrimPrefix(o.Key, cut), Size: o.Size, ETag: o.ETag, LastModified: o.LastModified})
	}
	return out, nil
}

// Delete removes key; deleting a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.mapErr("delete", key, s.c.RemoveObject(ctx, s.bucket, s.full(key), minio.RemoveObjectOptions{}))
}
