package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/stratasearch/strata/engine/contract"
)

// Status strings of the error shape, one per HTTP status the server uses.
// Every error body is
//
//	{"status":S,"error_count":N,"errors":[{"loc":[…],"input_value":…,
//	  "error_type":"…","message":"…","expected_domain":"…"}]}
//
// with S "validation_error" for 400 (the DESIGN.md shape, produced by
// contract.ValidationError) and the strings below otherwise.
const (
	StatusValidation        = "validation_error"       // 400
	StatusUnauthorized      = "unauthorized"           // 401
	StatusForbidden         = "forbidden"              // 403
	StatusNotFound          = "not_found"              // 404
	StatusMethodNotAllowed  = "method_not_allowed"     // 405
	StatusConflict          = "conflict"               // 409
	StatusPrecondition      = "precondition_failed"    // 412
	StatusTooLarge          = "payload_too_large"      // 413
	StatusUnsupportedMedia  = "unsupported_media_type" // 415
	StatusIdempotencyReused = "idempotency_key_reused" // 422
	StatusTooMany           = "too_many_requests"      // 429
	StatusInternal          = "internal_error"         // 500
	StatusUnavailable       = "unavailable"            // 503
	StatusTimeout           = "timeout"                // 504
)

// apiError is a failed request: an HTTP code and the error body.
type apiError struct {
	code   int
	status string
	errs   []contract.FieldError
}

func (e *apiError) Error() string {
	if len(e.errs) == 0 {
		return "server: " + e.status
	}
	return "server: " + e.status + ": " + e.errs[0].Message
}

// newErr builds a one-problem error.
func newErr(code int, status, errType, msg string, loc []any, input any, domain string) *apiError {
	if loc == nil {
		loc = []any{}
	}
	return &apiError{code: code, status: status, errs: []contract.FieldError{{
		Loc: loc, InputValue: input, ErrorType: errType, Message: msg, ExpectedDomain: domain,
	}}}
}

// validation wraps field errors as a 400 validation_error.
func validation(fes ...contract.FieldError) *apiError {
	return &apiError{code: http.StatusBadRequest, status: StatusValidation, errs: fes}
}

func (e *apiError) body() []byte {
	errs := e.errs
	if errs == nil {
		errs = []contract.FieldError{}
	}
	b, err := json.Marshal(struct {
		Status     string                `json:"status"`
		ErrorCount int                   `json:"error_count"`
		Errors     []contract.FieldError `json:"errors"`
	}{e.status, len(errs), errs})
	if err != nil { // an unencodable input_value: drop the values
		for i := range errs {
			errs[i].InputValue = nil
		}
		b, _ = json.Marshal(struct {
			Status     string                `json:"status"`
			ErrorCount int                   `json:"error_count"`
			Errors     []contract.FieldError `json:"errors"`
		}{e.status, len(errs), errs})
	}
	return append(b, '\n')
}

// writeAPIError writes e.
func writeAPIError(w http.ResponseWriter, e *apiError) {
	if e.code == http.StatusTooManyRequests || e.code == http.StatusServiceUnavailable {
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", "1")
		}
	}
	writeRaw(w, e.code, e.body())
}

// writeRaw writes a JSON body with its length.
func writeRaw(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// jsonAppender is a response that encodes itself: appendJSON appends the
// JSON json.Marshal would write for it (strings with HTML escaping off),
// in one buffer sized up front, without reflection.
type jsonAppender interface{ appendJSON(dst []byte) []byte }

// fallibleAppender is a response that encodes itself (as jsonAppender)
// but can fail where json.Marshal would (a non-finite score); sizeHint is
// about its encoded size.
type fallibleAppender interface {
	appendJSONErr(dst []byte) ([]byte, error)
	sizeHint() int
}

// responseBufs holds response buffers for fallibleAppender responses;
// one larger than maxPooledBuf is left to the collector.
var responseBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBuf = 1 << 20

// jsonChunker is a response that can encode itself in pieces:
// appendJSONChunks appends the bytes appendJSON would, calling flush
// with the buffer whenever it holds chunkBytes or more and appending
// on into what flush returns. It reports false, having appended
// nothing, when the response is small enough to be built whole.
type jsonChunker interface {
	appendJSONChunks(dst []byte, flush func([]byte) []byte) ([]byte, bool)
}

const (
	// chunkBytes is the size of the pieces a jsonChunker is written in.
	chunkBytes = 32 << 10
	// chunkedItems is the number of items from which a jsonChunker
	// response is written in pieces rather than built in one buffer.
	chunkedItems = 512
)

// writeChunked writes a jsonChunker response (with a trailing newline)
// through one buffer of about chunkBytes, so that a response as large as
// its request is never held whole. It encodes twice: once to count the
// bytes, for Content-Length, and once to write them. It reports false,
// having written nothing, when v is to be built whole.
func writeChunked(w http.ResponseWriter, code int, v jsonChunker) bool {
	buf := make([]byte, 0, chunkBytes+1024)
	size := 0
	tail, ok := v.appendJSONChunks(buf, func(b []byte) []byte { size += len(b); return b[:0] })
	if !ok {
		return false
	}
	size += len(tail) + 1
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(code)
	var werr error
	write := func(b []byte) []byte {
		if werr == nil {
			_, werr = w.Write(b)
		}
		return b[:0]
	}
	tail, _ = v.appendJSONChunks(buf[:0], write)
	write(append(tail, '\n'))
	return true
}

// writeJSON encodes v (with a trailing newline) and writes it.
func writeJSON(w http.ResponseWriter, code int, v any) {
	if c, ok := v.(jsonChunker); ok && writeChunked(w, code, c) {
		return
	}
	if a, ok := v.(fallibleAppender); ok {
		bp := responseBufs.Get().(*[]byte)
		buf := *bp
		if n := a.sizeHint() + 1; cap(buf) < n {
			buf = make([]byte, 0, n)
		}
		b, err := a.appendJSONErr(buf[:0])
		if err != nil {
			writeAPIError(w, newErr(http.StatusInternalServerError, StatusInternal, "encode", "encoding the response failed: "+err.Error(), nil, nil, ""))
		} else {
			b = append(b, '\n')
			writeRaw(w, code, b)
		}
		if cap(b) <= maxPooledBuf {
			*bp = b[:0]
			responseBufs.Put(bp)
		}
		return
	}
	if a, ok := v.(jsonAppender); ok {
		writeRaw(w, code, append(a.appendJSON(nil), '\n'))
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		writeAPIError(w, newErr(http.StatusInternalServerError, StatusInternal, "encode", "encoding the response failed: "+err.Error(), nil, nil, ""))
		return
	}
	writeRaw(w, code, append(b, '\n'))
}

// asValidation converts a *contract.ValidationError into a 400.
func asValidation(err error) (*apiError, bool) {
	var ve *contract.ValidationError
	if errors.As(err, &ve) {
		return validation(ve.Errors...), true
	}
	return nil, false
}
