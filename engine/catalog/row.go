package catalog

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// Row is what a catalog keeps per row (a warm or cold row, or a MemTable
// version): the stored document, shared with the tier and read-only, and
// its decoded metadata. A MemTable version's Row leaves Meta nil and
// decodes fields from Doc.Metadata when they are read (Value, Metadata),
// so a write does not keep a second, decoded copy of its metadata (a
// contract.Value is 64 bytes; a stored value is its JSON form).
type Row struct {
	Doc  *tier.Document
	Meta map[string]contract.Value
}

// Value returns metadata field k and whether it is present: from Meta
// when the row keeps it, otherwise decoded from Doc.Metadata (a value
// CheckMeta refused reads as absent). ReservedMetaPrefix keys are never
// present.
func (r *Row) Value(k string) (contract.Value, bool) {
	if r.Meta != nil || r.Doc == nil {
		v, ok := r.Meta[k]
		return v, ok
	}
	s, ok := r.Doc.Metadata[k]
	if !ok || strings.HasPrefix(k, ReservedMetaPrefix) {
		return contract.Value{}, false
	}
	v, err := decodeValue(s)
	if err != nil {
		return contract.Value{}, false
	}
	return v, true
}

// Metadata returns the decoded metadata: Meta, or a fresh decoding of
// Doc.Metadata (DecodeMeta) when the row does not keep it.
func (r *Row) Metadata() (map[string]contract.Value, error) {
	if r.Meta != nil || r.Doc == nil {
		return r.Meta, nil
	}
	return DecodeMeta(r.Doc.Metadata)
}

// CheckMeta reports the first stored value of m that DecodeMeta would
// refuse, without keeping the decoded values.
func CheckMeta(m map[string]string) error {
	for k, s := range m {
		if strings.HasPrefix(k, ReservedMetaPrefix) {
			continue
		}
		if _, err := decodeValue(s); err != nil {
			return fmt.Errorf("metadata %q: %w", k, err)
		}
	}
	return nil
}

// decodeValue decodes one stored value (EncodeMeta's form).
func decodeValue(s string) (contract.Value, error) {
	if v, ok := decodeValueFast(s); ok {
		return v, nil
	}
	var v contract.Value
	err := json.Unmarshal([]byte(s), &v)
	return v, err
}

// ExtID is the BM25 external id of a document: a 64-bit FNV-1a hash of
// its id. bm25 breaks score ties by external id, so the same documents tie
// in the same order whichever tier (and local id) holds them.
func ExtID(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}

// EncodeMeta turns contract metadata into the tier's string map: each
// value is stored as its JSON form, so every type round-trips exactly.
func EncodeMeta(m map[string]contract.Value) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		b, err := v.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", k, err)
		}
		out[k] = string(b)
	}
	return out, nil
}

// ReservedMetaPrefix starts the stored metadata keys the engine keeps for
// itself (engine.VerifiableSources' mark): DecodeMeta leaves them out, so
// they are never returned or matched by a filter, and writes refuse them.
const ReservedMetaPrefix = "\x00strata."

// DecodeMeta is EncodeMeta's inverse, without the ReservedMetaPrefix keys.
func DecodeMeta(m map[string]string) (map[string]contract.Value, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]contract.Value, len(m))
	for k, s := range m {
		if strings.HasPrefix(k, ReservedMetaPrefix) {
			continue
		}
		v, err := decodeValue(s)
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// DecodeValue decodes one stored metadata value (one entry of a map
// EncodeMeta wrote), as DecodeMeta decodes each.
func DecodeValue(s string) (contract.Value, error) {
	if v, ok := decodeValueFast(s); ok {
		return v, nil
	}
	var v contract.Value
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return contract.Value{}, err
	}
	return v, nil
}

// decodeValueFast decodes the common stored forms without encoding/json
// (opening a warm segment decodes every row's metadata): a string with no
// escape, control character or non-ASCII byte, a compact list of such
// strings, true / false, and a plain JSON number. ok is false for anything else (json.Unmarshal decides);
// whenever ok is true the result equals json.Unmarshal's
// (FuzzDecodeValueFast).
func decodeValueFast(s string) (contract.Value, bool) {
	switch {
	case s == "true":
		return contract.Bool(true), true
	case s == "false":
		return contract.Bool(false), true
	case len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"':
		body := s[1 : len(s)-1]
		for i := 0; i < len(body); i++ {
			if c := body[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return contract.Value{}, false
			}
		}
		return contract.String(body), true
	case len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']':
		// A list as EncodeMeta writes it: ["a","b"], no whitespace, each
		// element a string as above (ingestion's names lists).
		body := s[1 : len(s)-1]
		ss := make([]string, 0, 4)
		for i := 0; i < len(body); {
			if body[i] != '"' {
				return contract.Value{}, false
			}
			j := i + 1
			for ; j < len(body) && body[j] != '"'; j++ {
				if c := body[j]; c < 0x20 || c == '\\' || c >= 0x80 {
					return contract.Value{}, false
				}
			}
			if j == len(body) {
				return contract.Value{}, false
			}
			ss = append(ss, body[i+1:j])
			i = j + 1
			if i < len(body) {
				if body[i] != ',' || i+1 == len(body) {
					return contract.Value{}, false
				}
				i++
			}
		}
		return contract.Strings(ss...), true
	case len(s) > 0 && len(s) <= 32:
		// JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
		i := 0
		if s[i] == '-' {
			i++
		}
		digits := func() int {
			j := i
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			return i - j
		}
		start := i
		if n := digits(); n == 0 || (n > 1 && s[start] == '0') {
			return contract.Value{}, false
		}
		if i < len(s) && s[i] == '.' {
			i++
			if digits() == 0 {
				return contract.Value{}, false
			}
		}
		if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
			i++
			if i < len(s) && (s[i] == '+' || s[i] == '-') {
				i++
			}
			if digits() == 0 {
				return contract.Value{}, false
			}
		}
		if i != len(s) {
			return contract.Value{}, false
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return contract.Value{}, false
		}
		return contract.Number(f), true
	}
	return contract.Value{}, false
}
