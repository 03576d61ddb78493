package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/stratasearch/strata/vfs"
)

// Idempotency keys.
//
// A mutating request (POST, PUT, PATCH, DELETE) may carry an Idempotency-Key
// header (1..255 printable ASCII characters). The key is scoped by the
// caller's principal. The first request with a key runs; its response
// (status, Content-Type, body) is written durably to
// DataDir/server/idempotency/<sha256(principal NUL key)>.json (temp file →
// fsync → rename → fsync dir) BEFORE it is sent, so a client that lost the
// response and retries gets the stored response byte-for-byte with header
// Idempotent-Replayed: true, and the write is applied once. A retry while
// the first is still running gets 409; a retry with the same key but a
// different method, path, body (SHA-256) or semantics-bearing header
// (If-Match: a retry with another precondition is another request) gets
// 422. A replay restores the response headers ETag and Location. Responses 409, 429
// and 5xx are not stored (the client may retry them with the same key). Keys are
// remembered for IdempotencyTTL (default 24 h, also across restarts);
// expired files are pruned at start and every min(TTL/4, 10 min).
//
// The window where exactly-once is not guaranteed: a process crash after
// the engine acknowledged a write and before the record was fsynced. The
// retry then applies the batch again; an upsert of the same documents
// leaves the same visible state (a new epoch), a delete of absent ids is a
// no-op.

const idemHeader = "Idempotency-Key"

// fingerprintHeaders are the request headers that change what a mutating
// request does; they are part of its idempotency fingerprint.
var fingerprintHeaders = []string{"If-Match"}

// replayHeaders are the response headers an idempotent replay restores.
var replayHeaders = []string{"ETag", "Location"}

// headersFingerprint is the hex SHA-256 of the fingerprint headers r
// carries, "" when it carries none.
func headersFingerprint(h http.Header) string {
	var b strings.Builder
	for _, name := range fingerprintHeaders {
		for _, v := range h.Values(name) {
			b.WriteString(name)
			b.WriteByte(0)
			b.WriteString(v)
			b.WriteByte(0)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// savedHeaders picks the replayHeaders of a response.
func savedHeaders(h http.Header) map[string][]string {
	var out map[string][]string
	for _, name := range replayHeaders {
		if vs := h.Values(name); len(vs) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			out[name] = append([]string(nil), vs...)
		}
	}
	return out
}

type idemRecord struct {
	FormatVersion int    `json:"format_version"`
	Principal     string `json:"principal"`
	Key           string `json:"key"`
	Method        string `json:"method"`
	Path          string `json:"path"`
	BodySHA256    string `json:"body_sha256"`
	// HeadersSHA256 fingerprints the request's semantics-bearing headers
	// (fingerprintHeaders); "" when it sent none of them (and in records
	// written before the field existed).
	HeadersSHA256 string `json:"headers_sha256,omitempty"`
	// Headers are the replayed response headers (replayHeaders).
	Headers     map[string][]string `json:"headers,omitempty"`
	Status      int                 `json:"status"`
	ContentType string              `json:"content_type"`
	Body        []byte              `json:"body"`
	Created     time.Time           `json:"created"`
}

type idemStore struct {
	dir string
	ttl time.Duration
	log *slog.Logger
	now func() time.Time

	mu       sync.Mutex
	inflight map[string]bool
	stop     chan struct{}
	done     chan struct{}
}

func openIdemStore(dir string, ttl time.Duration, log *slog.Logger) (*idemStore, error) {
	if err := vfs.MkdirAllDurable(vfs.Default, dir); err != nil {
		return nil, fmt.Errorf("server: idempotency store: %w", err)
	}
	s := &idemStore{dir: dir, ttl: ttl, log: log, now: time.Now, inflight: map[string]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	s.prune()
	every := min(ttl/4, 10*time.Minute)
	if every <= 0 {
		every = time.Minute
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.prune()
			}
		}
	}()
	return s, nil
}

func (s *idemStore) close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

func validIdemKey(k string) bool {
	if len(k) < 1 || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func idemName(principal, key string) string {
	h := sha256.Sum256([]byte(principal + "\x00" + key))
	return hex.EncodeToString(h[:])
}

// begin looks key up: a live completed record is returned; a key in flight
// gives inflight; otherwise the key is marked in flight (the caller must
// call finish).
func (s *idemStore) begin(name string) (rec *idemRecord, inflight bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight[name] {
		return nil, true, nil
	}
	rec, err = s.read(name)
	if err != nil {
		return nil, false, err
	}
	if rec != nil {
		return rec, false, nil
	}
	s.inflight[name] = true
	return nil, false, nil
}

// finish stores rec (nil: nothing stored) durably and clears the in-flight
// mark.
func (s *idemStore) finish(name string, rec *idemRecord) error {
	var err error
	if rec != nil {
		rec.FormatVersion = 1
		rec.Created = s.now().UTC()
		var data []byte
		data, err = json.Marshal(rec)
		if err == nil {
			err = vfs.WriteFileAtomic(vfs.Default, filepath.Join(s.dir, name+".json"), func(w io.Writer) error {
				_, werr := w.Write(data)
				return werr
			})
		}
	}
	s.mu.Lock()
	delete(s.inflight, name)
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("server: idempotency store: %w", err)
	}
	return nil
}

// read returns the live record name, nil when absent or expired (an
// expired or unreadable file is removed).
func (s *idemStore) read(name string) (*idemRecord, error) {
	p := filepath.Join(s.dir, name+".json")
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("server: idempotency store: %w", err)
	}
	var rec idemRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.FormatVersion != 1 {
		s.log.Warn("server: idempotency record unreadable; removed", "file", p, "err", err)
		_ = os.Remove(p)
		return nil, nil
	}
	if s.now().Sub(rec.Created) > s.ttl {
		_ = os.Remove(p)
		return nil, nil
	}
	return &rec, nil
}

// prune removes expired records (and stale temp files).
func (s *idemStore) prune() {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		s.log.Warn("server: idempotency prune", "err", err)
		return
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || len(name) != 64 {
			if info, err := e.Info(); err == nil && s.now().Sub(info.ModTime()) > time.Hour {
				_ = os.Remove(filepath.Join(s.dir, e.Name()))
			}
			continue
		}
		s.mu.Lock()
		if !s.inflight[name] {
			_, _ = s.read(name)
		}
		s.mu.Unlock()
	}
}

// recorder buffers a response so it can be stored before it is sent.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(p)
}

// storable reports whether a response code is final for its key: not a
// 5xx, 429 or 409 (a conflict may clear; the client retries with the same
// key).
func storable(code int) bool {
	return code < 500 && code != http.StatusTooManyRequests && code != http.StatusConflict
}

// copyTo sends the recorded response.
func (r *recorder) copyTo(w http.ResponseWriter) {
	for k, vs := range r.header {
		w.Header()[k] = vs
	}
	code := r.code
	if code == 0 {
		code = http.StatusOK
	}
	w.WriteHeader(code)
	_, _ = w.Write(r.body.Bytes())
}
