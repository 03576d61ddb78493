package contract

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Exact keys. encoding/json matches object keys to struct fields
// case-insensitively ({"Text":…} fills Text, and in {"top_k":5,"TOP_K":0}
// the last one wins, slipping past a check for an explicit "top_k":0), keeps
// the last of duplicated keys, and ignores a null where a number is due
// ([1,null,3] decodes as [1,0,3]). A closed schema admits none of that, so
// strictUnmarshal runs checkKeys over the input after decoding it:
//
//   - every key of an object decoded into a struct must be exactly one of
//     the struct's JSON field names (byte for byte);
//   - no object may hold the same key twice (maps included);
//   - null is refused where a non-pointer number (or an element of a
//     number slice or array) is due; a pointer field takes null as absent.
//
// Values of types with their own UnmarshalJSON (Query, Document, Value,
// Filter, json.RawMessage, time.Time) are not checked against a schema:
// those methods decode through strictUnmarshal themselves, so the check
// runs there, on their wire types. Duplicate keys are still refused in
// them, except in KeysChecker types, whose own decoding refuses them. checkKeys assumes data is valid JSON (it runs after a
// successful decode) and never allocates per number or per string value.

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// KeysChecker is implemented by a type whose own decoding checks its
// keys under these rules: Document (UnmarshalJSON runs strictUnmarshal on
// its wire type), its metadata (decodeMetadata refuses duplicates as it
// builds the map), or raw JSON decoded later by DecodeDocuments (the
// server's request body). checkKeys moves past such values without
// collecting their keys, so a document's keys are not checked twice.
type KeysChecker interface{ ChecksOwnKeys() }

var selfCheckedType = reflect.TypeFor[KeysChecker]()

// jsonFields caches struct type → JSON field name → field type.
var jsonFields sync.Map

func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := jsonFields.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	addFields(t, m)
	jsonFields.Store(t, m)
	return m
}

func addFields(t reflect.Type, m map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(ft, m)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := m[name]; !dup {
			m[name] = f.Type
		}
	}
}

func isNumber(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// checkKeys checks data (valid JSON) against the schema of t (see above).
func checkKeys(data []byte, t reflect.Type) error {
	s := keyScanner{b: data}
	return s.value(t)
}

type keyScanner struct {
	b    []byte
	i    int
	path []pathElem // where s.i is, materialised only for an error
	// skipOnly moves past values without checking them (splitArray).
	skipOnly bool
}

// pathElem is one step of keyScanner.path: an object key or an index.
type pathElem struct {
	key   string
	idx   int
	isKey bool
}

// loc returns the path, plus last, as an error loc.
func (s *keyScanner) loc(last ...any) []any {
	out := make([]any, 0, len(s.path)+len(last))
	for _, p := range s.path {
		if p.isKey {
			out = append(out, p.key)
		} else {
			out = append(out, p.idx)
		}
	}
	return append(out, last...)
}

// keySet holds the keys of one object: checked one by one while few
// (most objects have a handful of keys), then collected and sorted once at
// the end of the object (a metadata map may have thousands; a hash set of
// them would cost far more than the object's bytes).
type keySet struct {
	list []string
}

// add adds k and reports whether it is known to be there already.
func (ks *keySet) add(k string) bool {
	if len(ks.list) < 16 {
		for _, x := range ks.list {
			if x == k {
				return true
			}
		}
	}
	ks.list = append(ks.list, k)
	return false
}

// dup returns a key given twice, when there are too many to check one by
// one, or "".
func (ks *keySet) dup() (string, bool) {
	if len(ks.list) <= 16 {
		return "", false
	}
	slices.Sort(ks.list)
	for i := 1; i < len(ks.list); i++ {
		if ks.list[i] == ks.list[i-1] {
			return ks.list[i], true
		}
	}
	return "", false
}

func (s *keyScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value checks the value at s.i against t (nil: anything) and moves past
// it.
func (s *keyScanner) value(t reflect.Type) error {
	s.ws()
	if s.i >= len(s.b) {
		return nil
	}
	c := s.b[s.i]
	if t != nil && t.Kind() == reflect.Pointer {
		if c == 'n' {
			s.skipLiteral()
			return nil
		}
		t = t.Elem()
	}
	if t != nil && (t.Implements(selfCheckedType) || reflect.PointerTo(t).Implements(selfCheckedType)) && !s.skipOnly {
		s.skipOnly = true
		err := s.value(nil)
		s.skipOnly = false
		return err
	}
	if t != nil && (t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)) {
		t = nil // its UnmarshalJSON checks itself
	}
	switch c {
	case '{':
		return s.object(t)
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		s.i++
		if elem != nil && isNumber(elem.Kind()) {
			return s.numbers()
		}
		for n := 0; ; n++ {
			s.ws()
			if s.i >= len(s.b) {
				return nil
			}
			if s.b[s.i] == ']' {
				s.i++
				return nil
			}
			at := s.i
			s.path = append(s.path, pathElem{idx: n})
			err := s.value(elem)
			s.path = s.path[:len(s.path)-1]
			if err != nil {
				return err
			}
			if s.i == at { // not JSON (checkKeys runs on valid input only)
				return nil
			}
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
			}
		}
	case '"':
		s.skipString()
		return nil
	case 'n':
		s.skipLiteral()
		if t != nil && isNumber(t.Kind()) {
			return &decodeError{loc: s.loc(), input: nil, typ: ErrTypeJSONType,
				msg: "null where a number is due", domain: "a number"}
		}
		return nil
	default:
		s.skipLiteral()
		return nil
	}
}

// numbers moves past the rest of an array of numbers (s.i after '['),
// refusing a null element.
func (s *keyScanner) numbers() error {
	for n := 0; s.i < len(s.b); n++ {
		s.ws()
		if s.i >= len(s.b) {
			return nil
		}
		switch s.b[s.i] {
		case ']':
			s.i++
			return nil
		case 'n':
			return &decodeError{loc: s.loc(n), input: nil, typ: ErrTypeJSONType, msg: "null where a number is due", domain: "a number"}
		case '{', '[', '"':
			return s.value(nil) // not a number array after all: decoding failed first
		}
		at := s.i
		s.skipLiteral()
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
		}
		if s.i == at {
			return nil
		}
	}
	return nil
}

// object checks an object against t (a struct: exact field names; a map:
// any keys; nil: anything), refusing duplicate keys in every case.
func (s *keyScanner) object(t reflect.Type) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = fieldsOf(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	s.i++ // '{'
	var seen keySet
	for {
		s.ws()
		if s.i >= len(s.b) {
			return nil
		}
		if s.b[s.i] == '}' {
			s.i++
			if k, dup := seen.dup(); dup {
				return &decodeError{loc: s.loc(k), input: k, typ: ErrTypeDuplicate,
					msg: "key " + strconvQuote(k) + " appears twice in one object", domain: "each key at most once"}
			}
			return nil
		}
		if s.b[s.i] == ',' {
			s.i++
			continue
		}
		var key string
		if s.skipOnly {
			s.skipString()
		} else {
			key = s.key()
		}
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ':' {
			s.i++
		}
		if !s.skipOnly && seen.add(key) {
			return &decodeError{loc: s.loc(key), input: key, typ: ErrTypeDuplicate,
				msg: "key " + strconvQuote(key) + " appears twice in one object", domain: "each key at most once"}
		}
		vt := elem
		if fields != nil {
			ft, ok := fields[key]
			if !ok {
				return &decodeError{loc: s.loc(key), input: key, typ: ErrTypeUnknownField,
					msg: "unknown field " + strconvQuote(key) + " (keys are matched exactly, case included)", domain: "a field of the closed schema"}
			}
			vt = ft
		}
		at := s.i
		s.path = append(s.path, pathElem{key: key, isKey: true})
		err := s.value(vt)
		s.path = s.path[:len(s.path)-1]
		if err != nil {
			return err
		}
		if s.i == at { // not JSON (checkKeys runs on valid input only)
			return nil
		}
	}
}

// key reads an object key (a JSON string) and returns it unescaped.
func (s *keyScanner) key() string {
	start := s.i
	escaped := s.skipString()
	raw := s.b[start:s.i]
	if !escaped && len(raw) >= 2 {
		return string(raw[1 : len(raw)-1])
	}
	var k string
	if err := json.Unmarshal(raw, &k); err != nil {
		return string(raw)
	}
	return k
}

// skipString moves past the string at s.i and reports whether it holds
// an escape.
func (s *keyScanner) skipString() (escaped bool) {
	s.i++ // opening quote
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i += 2
		case '"':
			s.i++
			return escaped
		default:
			s.i++
		}
	}
	return escaped
}

// skipLiteral moves past a number, true, false or null.
func (s *keyScanner) skipLiteral() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return
		}
		s.i++
	}
}
