package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// readBody reads the whole request body under the size limit. Errors: 413
// over limit, 415 when a non-empty body is not application/json, 400 when
// it is not valid UTF-8 (encoding/json would silently replace the bytes with
// U+FFFD, so the raw bytes are checked first and the offending value named).
func readBody(r *http.Request, w http.ResponseWriter, limit int64) ([]byte, *apiError) {
	if r.Body == nil {
		return nil, nil
	}
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	data, err := readAllSized(http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, newErr(http.StatusBadRequest, StatusValidation, contract.ErrTypeJSONInvalid, "reading the request body failed: "+err.Error(), []any{"body"}, nil, "a JSON document")
	}
	if len(data) == 0 {
		return nil, nil
	}
	ct := r.Header.Get("Content-Type")
	mt, params, perr := mime.ParseMediaType(ct)
	if perr != nil || mt != "application/json" || (params["charset"] != "" && !equalFoldASCII(params["charset"], "utf-8")) {
		return nil, newErr(http.StatusUnsupportedMediaType, StatusUnsupportedMedia, "content_type", "the request body must be application/json (UTF-8)", []any{"header", "Content-Type"}, ct, "application/json")
	}
	if !utf8.Valid(data) {
		loc, input := invalidUTF8Loc(data)
		return nil, validation(contract.FieldError{Loc: loc, InputValue: input, ErrorType: contract.ErrTypeInvalidUTF8,
			Message: "string is not valid UTF-8", ExpectedDomain: "valid UTF-8"})
	}
	return data, nil
}

// readAllSized is io.ReadAll with the buffer sized from the declared
// Content-Length (already checked against the limit), so a large body is
// read into one allocation instead of a chain of growing copies.
func readAllSized(r io.Reader, contentLength int64) ([]byte, error) {
	if contentLength <= 0 {
		return io.ReadAll(r)
	}
	buf := make([]byte, contentLength)
	n, err := io.ReadFull(r, buf)
	if err != nil {
		return buf[:n], err
	}
	rest, err := io.ReadAll(r) // net/http stops at Content-Length: empty
	if len(rest) > 0 {
		buf = append(buf, rest...)
	}
	return buf, err
}

func tooLarge(limit int64) *apiError {
	return newErr(http.StatusRequestEntityTooLarge, StatusTooLarge, "too_large", "request body exceeds the size limit", []any{"body"}, nil, "at most "+itoa64(limit)+" bytes")
}

func equalFoldASCII(a, b string) bool { return bytes.EqualFold([]byte(a), []byte(b)) }

// invalidUTF8Loc locates the first invalid UTF-8 byte of a JSON body: the
// path of the string (key or value) holding it, rooted at "body", and the
// string (invalid bytes shown as U+FFFD). A byte outside any string gives
// ["body"] and the byte offset.
func invalidUTF8Loc(data []byte) ([]any, any) {
	off := 0
	for off < len(data) {
		r, n := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	type frame struct {
		obj     bool
		key     string
		idx     int
		wantKey bool
	}
	var stack []frame
	pathOf := func(extra ...any) []any {
		loc := []any{"body"}
		for _, f := range stack {
			if f.obj {
				loc = append(loc, f.key)
			} else {
				loc = append(loc, f.idx)
			}
		}
		return append(loc, extra...)
	}
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].obj {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].idx++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		start := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return []any{"body"}, off
		}
		end := int(dec.InputOffset())
		hit := start <= off && off < end
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			if s, ok := tok.(string); ok {
				stack[n-1].key = s
				stack[n-1].wantKey = false
				if hit {
					return pathOf(), clip(s)
				}
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, frame{obj: d == '{', wantKey: d == '{'})
			default:
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
				afterValue()
			}
			continue
		}
		if hit {
			s, _ := tok.(string)
			return pathOf(), clip(s)
		}
		afterValue()
	}
}

// clip shortens an input value echoed in an error to 128 bytes (on a rune
// boundary).
func clip(s string) string {
	if len(s) <= 128 {
		return s
	}
	i := 128
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// decodeStrict decodes one JSON value from data into v under the closed
// schema (unknown fields and trailing data rejected); errors are 400s
// rooted at root.
func decodeStrict(data []byte, root string, v any) *apiError {
	if len(data) == 0 {
		return newErr(http.StatusBadRequest, StatusValidation, contract.ErrTypeMissing, "request body is required", []any{root}, nil, "a JSON document")
	}
	if err := contract.DecodeBytes(data, root, v); err != nil {
		if ae, ok := asValidation(err); ok {
			return ae
		}
		return newErr(http.StatusBadRequest, StatusValidation, contract.ErrTypeJSONInvalid, err.Error(), []any{root}, nil, "a JSON document")
	}
	return nil
}

// checkSourceURI reports a file:// source URI whose path is not absolute and
// clean (no "." or ".." segments, no doubled slashes, also when
// percent-encoded) or whose fragment is not #Lx[-Ly]. Other schemes are
// accepted as they are (they are never read).
func checkSourceURI(uri string, loc []any) *contract.FieldError {
	if uri == "" {
		return nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return &contract.FieldError{Loc: loc, InputValue: clip(uri), ErrorType: contract.ErrTypeInvalidFormat,
			Message: "source_uri is not a URI: " + err.Error(), ExpectedDomain: "a URI, e.g. file:///abs/path#L1-L9"}
	}
	if u.Scheme != "file" {
		return nil
	}
	bad := func(msg string) *contract.FieldError {
		return &contract.FieldError{Loc: loc, InputValue: clip(uri), ErrorType: contract.ErrTypeInvalidFormat,
			Message: msg, ExpectedDomain: "file:///ABS/CLEAN/PATH[#Lx[-Ly]]"}
	}
	if u.Host != "" && u.Host != "localhost" {
		return bad("file:// source_uri names a remote host")
	}
	if u.Opaque != "" || u.Path == "" || u.Path[0] != '/' {
		return bad("file:// source_uri path is not absolute")
	}
	if path.Clean(u.Path) != u.Path {
		return bad("file:// source_uri path is not clean (\".\", \"..\" or empty segments: path traversal)")
	}
	if u.RawQuery != "" {
		return bad("file:// source_uri has a query")
	}
	if _, _, _, err := engine.ParseFileURI(uri); err != nil {
		return bad("file:// source_uri fragment is not #Lx or #Lx-Ly")
	}
	return nil
}

func itoa64(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
