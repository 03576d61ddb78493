package contract

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// metadataWire is the JSON form of Document.Metadata, held as its bytes
// until decodeMetadata turns it into the map. It aliases the input of the
// json.Unmarshal call that fills it (strictUnmarshal's own data), so it
// must be decoded before that call's input is released. checkKeys skips
// it: decodeMetadata refuses duplicate keys itself, as it builds the map.
type metadataWire []byte

func (m *metadataWire) UnmarshalJSON(data []byte) error {
	*m = data
	return nil
}

// ChecksOwnKeys marks metadataWire a KeysChecker.
func (metadataWire) ChecksOwnKeys() {}

// errMetadataType is a metadata field that is not a JSON object.
var errMetadataType = &decodeError{loc: []any{"metadata"}, typ: ErrTypeJSONType,
	msg: "wrong JSON type: metadata must be an object", domain: "object of field name → string | number | bool | [string]"}

// decodeMetadata decodes raw, one valid JSON value, into Document's
// metadata map: nil for null, otherwise a map sized to its members, with
// keys and plain values (strings without escapes, numbers, booleans)
// sharing one copy of raw instead of one allocation each. Errors are
// *decodeError at ["metadata"] or ["metadata", key]; a key given twice is
// one of them.
func decodeMetadata(raw []byte) (map[string]Value, error) {
	s := keyScanner{b: raw, skipOnly: true}
	s.ws()
	if s.i >= len(s.b) {
		return nil, nil
	}
	switch s.b[s.i] {
	case 'n':
		return nil, nil
	case '{':
	default:
		return nil, errMetadataType
	}
	n := 0
	members(raw, func(_, _ int, _ bool, _, _ int) bool { n++; return true })
	out := make(map[string]Value, n)
	str := string(raw)
	var err error
	members(raw, func(k0, k1 int, escaped bool, v0, v1 int) bool {
		k := str[k0+1 : k1-1]
		if escaped || !utf8.ValidString(k) {
			k = unescapeKey(raw[k0:k1], str[k0:k1])
		}
		if _, dup := out[k]; dup {
			err = metadataError(k, nil)
			return false
		}
		v, ok := plainValue(str[v0:v1])
		if !ok {
			if e := unmarshalValue(raw[v0:v1], &v); e != nil {
				err = metadataError(k, e)
				return false
			}
		}
		out[k] = v
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// members calls f with the spans of each member of the JSON object at the
// start of raw (valid JSON): the key's, quotes included, whether the key
// holds an escape, and the value's. It stops when f returns false.
func members(raw []byte, f func(k0, k1 int, escaped bool, v0, v1 int) bool) {
	s := keyScanner{b: raw, skipOnly: true}
	s.ws()
	s.i++ // '{'
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] == '}' {
			return
		}
		if s.b[s.i] == ',' {
			s.i++
			continue
		}
		k0 := s.i
		escaped := s.skipString()
		k1 := s.i
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ':' {
			s.i++
		}
		s.ws()
		v0 := s.i
		_ = s.value(nil)
		if s.i == v0 { // not JSON (raw is valid input only)
			return
		}
		if !f(k0, k1, escaped, v0, s.i) {
			return
		}
	}
}

// plainValue decodes the metadata value forms that need no allocation of
// their own: a string without escapes, whose bytes are valid UTF-8 (a
// substring of s), true, false and a number within float64. ok is false
// for everything else, which Value.UnmarshalJSON decides; whenever ok is
// true the result equals Value.UnmarshalJSON's.
func plainValue(s string) (Value, bool) {
	if s == "" {
		return Value{}, false
	}
	switch c := s[0]; {
	case c == '"':
		body := s[1 : len(s)-1]
		for i := 0; i < len(body); i++ {
			if body[i] == '\\' {
				return Value{}, false
			}
		}
		if !utf8.ValidString(body) {
			return Value{}, false
		}
		return String(body), true
	case s == "true":
		return Bool(true), true
	case s == "false":
		return Bool(false), true
	case c == '-' || (c >= '0' && c <= '9'):
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return Value{}, false
		}
		return Number(f), true
	}
	return Value{}, false
}

// unmarshalValue is Value.UnmarshalJSON into *dst, through a variable of
// its own so that decodeMetadata's per-member Value stays on the stack.
func unmarshalValue(raw []byte, dst *Value) error {
	var v Value
	err := v.UnmarshalJSON(raw)
	*dst = v
	return err
}

// unescapeKey decodes the JSON string raw (quotes included) as
// encoding/json decodes a map key; quoted, raw as a string, when it does
// not decode.
func unescapeKey(raw []byte, quoted string) string {
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return quoted
	}
	return k
}

// metadataError is the error at ["metadata", k]: k given twice when
// cause is nil, otherwise cause (Value.UnmarshalJSON's) placed there.
func metadataError(k string, cause error) error {
	if cause == nil {
		return &decodeError{loc: []any{"metadata", k}, input: k, typ: ErrTypeDuplicate,
			msg: "key " + strconvQuote(k) + " appears twice in one object", domain: "each key at most once"}
	}
	if de, ok := cause.(*decodeError); ok {
		cp := *de
		cp.loc = []any{"metadata", k}
		return &cp
	}
	return &decodeError{loc: []any{"metadata", k}, typ: ErrTypeJSONType, msg: cause.Error(), domain: errValue.domain}
}
