package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// ErrInvalid is matched (errors.Is) by every *ValidationError.
var ErrInvalid = errors.New("contract: invalid input")

// FieldError is one validation problem. JSON form:
//
//	{"loc":["query","vector",3],"input_value":"NaN","error_type":"not_finite",
//	 "message":"…","expected_domain":"finite float32"}
//
// Loc is the path to the offending value: strings for object fields, ints for
// array indexes. InputValue is the offending value as JSON can carry it
// (non-finite numbers become the strings "NaN", "+Inf", "-Inf"; a long vector
// is reported by its length).
type FieldError struct {
	Loc            []any  `json:"loc"`
	InputValue     any    `json:"input_value"`
	ErrorType      string `json:"error_type"`
	Message        string `json:"message"`
	ExpectedDomain string `json:"expected_domain"`
}

// ValidationError carries every problem found in one call. It marshals to
// the server's error shape (DESIGN.md "Server"):
//
//	{"status":"validation_error","error_count":N,"errors":[FieldError…]}
type ValidationError struct {
	Errors []FieldError
}

// Error joins all problems on one line, prefixed "contract: ".
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "contract: %d validation error", len(e.Errors))
	if len(e.Errors) != 1 {
		b.WriteByte('s')
	}
	for i, fe := range e.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(locString(fe.Loc))
		b.WriteString(": ")
		b.WriteString(fe.Message)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// MarshalJSON encodes the server's error shape.
func (e *ValidationError) MarshalJSON() ([]byte, error) {
	errs := e.Errors
	if errs == nil {
		errs = []FieldError{}
	}
	return json.Marshal(struct {
		Status     string       `json:"status"`
		ErrorCount int          `json:"error_count"`
		Errors     []FieldError `json:"errors"`
	}{"validation_error", len(errs), errs})
}

func locString(loc []any) string {
	var b strings.Builder
	for i, p := range loc {
		switch v := p.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(v) + "]")
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, v)
		}
	}
	return b.String()
}

// Error types used in FieldError.ErrorType.
const (
	ErrTypeMissing            = "missing"
	ErrTypeOutOfRange         = "out_of_range"
	ErrTypeNotFinite          = "not_finite"
	ErrTypeVectorNorm         = "vector_norm_too_large"
	ErrTypeDimensionMismatch  = "dimension_mismatch"
	ErrTypeUnknownValue       = "unknown_value"
	ErrTypeDuplicate          = "duplicate"
	ErrTypeInvalidUTF8        = "invalid_utf8"
	ErrTypeInvalidFormat      = "invalid_format"
	ErrTypeUnknownFilterOp    = "unknown_filter_op"
	ErrTypeInvalidFilter      = "invalid_filter"
	ErrTypeEmptyRange         = "empty_range"
	ErrTypeNamespaceRequired  = "namespace_required"
	ErrTypeNamespaceForbidden = "namespace_forbidden"
	ErrTypeConflict           = "conflict"
	ErrTypeJSONInvalid        = "json_invalid"
	ErrTypeJSONType           = "json_type"
	ErrTypeUnknownField       = "unknown_field"
)

// collector accumulates FieldErrors.
type collector struct{ errs []FieldError }

func (c *collector) add(loc []any, input any, typ, msg, domain string) {
	c.errs = append(c.errs, FieldError{Loc: loc, InputValue: input, ErrorType: typ, Message: msg, ExpectedDomain: domain})
}

func (c *collector) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return &ValidationError{Errors: c.errs}
}

// at returns base + more as a fresh slice.
func at(base []any, more ...any) []any {
	out := make([]any, 0, len(base)+len(more))
	return append(append(out, base...), more...)
}

// safeNumber maps non-finite floats to strings so that JSON can carry them.
func safeNumber(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return f
}

// decodeError is returned by the package's own UnmarshalJSON methods; loc is
// relative to the value being decoded.
type decodeError struct {
	loc    []any
	input  any
	typ    string
	msg    string
	domain string
}

func (e *decodeError) Error() string {
	if len(e.loc) > 0 {
		return "contract: " + locString(e.loc) + ": " + e.msg
	}
	return "contract: " + e.msg
}

// strictUnmarshal decodes one JSON value into v, rejecting unknown fields and
// trailing data.
func strictUnmarshal(data []byte, v any) error {
	// json.Unmarshal, not a json.Decoder: it decodes data in place (a
	// Decoder copies the input into a growing buffer first), and refuses
	// trailing data itself. Unknown fields are refused by checkKeys, which
	// also matches keys exactly (strictkeys.go).
	if err := json.Unmarshal(data, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value") {
			return &decodeError{typ: ErrTypeJSONInvalid, msg: "trailing data after the JSON value"}
		}
		return err
	}
	return checkKeys(data, reflect.TypeOf(v))
}

// Decode reads exactly one JSON value from r into v (a *Query, *Document,
// *Filter, *[]Document, ...) under the closed-schema rules: unknown fields and
// trailing data are rejected. Every decoding problem is returned as a
// *ValidationError whose locs start with root (e.g. "query"). Decode does not
// run Validate.
func Decode(r io.Reader, root string, v any) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("contract: reading request: %w", err)
	}
	return DecodeBytes(data, root, v)
}

// DecodeBytes is Decode of data already in memory (no copy is made).
func DecodeBytes(data []byte, root string, v any) error {
	if err := strictUnmarshal(data, v); err != nil {
		return decodeFailure(err, root)
	}
	return nil
}

// decodeFailure converts an encoding/json or package error into a
// *ValidationError rooted at root.
func decodeFailure(err error, root string) *ValidationError {
	base := []any{root}
	var de *decodeError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &de):
		return &ValidationError{Errors: []FieldError{{Loc: at(base, de.loc...), InputValue: de.input, ErrorType: de.typ, Message: de.msg, ExpectedDomain: de.domain}}}
	case errors.As(err, &se):
		return &ValidationError{Errors: []FieldError{{Loc: base, InputValue: se.Offset, ErrorType: ErrTypeJSONInvalid, Message: "malformed JSON: " + se.Error(), ExpectedDomain: "a JSON document"}}}
	case errors.As(err, &te):
		loc := base
		if te.Field != "" {
			for _, p := range strings.Split(te.Field, ".") {
				loc = append(loc, p)
			}
		}
		msg, domain := typeMismatch(te)
		return &ValidationError{Errors: []FieldError{{Loc: loc, InputValue: te.Value, ErrorType: ErrTypeJSONType, Message: msg, ExpectedDomain: domain}}}
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		name, _ := strconv.Unquote(f)
		if name == "" {
			name = f
		}
		return &ValidationError{Errors: []FieldError{{Loc: at(base, name), InputValue: name, ErrorType: ErrTypeUnknownField, Message: "unknown field " + f, ExpectedDomain: "a field of the closed schema"}}}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &ValidationError{Errors: []FieldError{{Loc: base, InputValue: nil, ErrorType: ErrTypeJSONInvalid, Message: "malformed JSON: unexpected end of input", ExpectedDomain: "a JSON document"}}}
	}
	return &ValidationError{Errors: []FieldError{{Loc: base, InputValue: nil, ErrorType: ErrTypeJSONInvalid, Message: msg, ExpectedDomain: "a JSON document"}}}
}

// typeMismatch describes a JSON type error in JSON's terms, not Go's: the
// message and expected domain name JSON types (the Go type a value decodes
// into is the engine's business, not the caller's).
func typeMismatch(te *json.UnmarshalTypeError) (msg, domain string) {
	domain = jsonDomain(te.Type)
	return "wrong JSON type: got " + te.Value + ", want " + domain, domain
}

// jsonDomain names the JSON type a value of Go type t decodes from.
func jsonDomain(t reflect.Type) string {
	if t == nil {
		return "a JSON value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() || t.Kind() == reflect.Interface {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return "string (base64)"
		}
		if e := jsonDomain(t.Elem()); e != "a JSON value" {
			return "array of " + e
		}
		return "array"
	case reflect.Map, reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			return "string (RFC 3339 date-time)"
		}
		return "object"
	}
	return "a JSON value"
}
