package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

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

// writeJSON encodes v (with a trailing newline) and writes it.
func writeJSON(w http.ResponseWriter, code int, v any) {
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
