package contract

import "unicode/utf8"

// decodeFast decodes data, one valid JSON value, into w without
// encoding/json, for the plain form of a document: an object whose keys
// are exactly documentWire's field names, each at most once, with
// strings that hold no escape and are valid UTF-8, an "acl" array of
// such strings, and no null member. The vector, metadata and timestamp
// values are handed, as their bytes, to the decoders encoding/json calls
// for them (vectorWire.UnmarshalJSON, metadataWire, time.Time's
// UnmarshalJSON). It reports false for anything else, and for any value
// those decoders refuse; w is then partly filled and the caller decodes
// data again through strictUnmarshal, which gives the error, or decodes
// what this path leaves to it. Where it reports true, w holds what
// strictUnmarshal(data, w) would give: strings without escapes unquote
// to their bytes, and keys matched exactly are the only ones
// strictUnmarshal accepts.
func (w *documentWire) decodeFast(data []byte) bool {
	p := fastParser{b: data}
	p.ws()
	if !p.eat('{') {
		return false
	}
	var seen uint16
	p.ws()
	if p.eat('}') {
		return p.end()
	}
	for {
		p.ws()
		k0, k1, ok := p.plainString()
		if !ok {
			return false
		}
		f := docField(data[k0:k1])
		if f < 0 || seen&(1<<f) != 0 {
			return false
		}
		seen |= 1 << f
		p.ws()
		if !p.eat(':') {
			return false
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] == 'n' {
			return false // null: left to encoding/json
		}
		switch f {
		case fID, fContent, fSourceURI, fNamespace, fTrust, fVersionHash:
			s0, s1, ok := p.plainString()
			if !ok {
				return false
			}
			switch f {
			case fID:
				w.ID = string(data[s0:s1])
			case fContent:
				w.Content = string(data[s0:s1])
			case fSourceURI:
				w.SourceURI = string(data[s0:s1])
			case fNamespace:
				w.Namespace = string(data[s0:s1])
			case fTrust:
				w.Trust = trustOf(data[s0:s1])
			case fVersionHash:
				w.VersionHash = string(data[s0:s1])
			}
		case fACL:
			acl, ok := p.stringArray()
			if !ok {
				return false
			}
			w.ACL = acl
		case fVector, fMetadata, fTimestamp:
			v0 := p.i
			if !p.skipValue() {
				return false
			}
			raw := data[v0:p.i]
			switch f {
			case fVector:
				if raw[0] != '[' || w.Vector.UnmarshalJSON(raw) != nil {
					return false
				}
			case fMetadata:
				if raw[0] != '{' {
					return false
				}
				w.Metadata = metadataWire(raw)
			case fTimestamp:
				if raw[0] != '"' || w.Timestamp.UnmarshalJSON(raw) != nil {
					return false
				}
			}
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return p.end()
		}
		return false
	}
}

// documentWire's fields, as bit positions of decodeFast's seen set.
const (
	fID = iota
	fContent
	fVector
	fSourceURI
	fMetadata
	fNamespace
	fTrust
	fACL
	fVersionHash
	fTimestamp
)

// docField is the field a key names (exactly, case included), or -1.
func docField(k []byte) int {
	switch string(k) {
	case "id":
		return fID
	case "content":
		return fContent
	case "vector":
		return fVector
	case "source_uri":
		return fSourceURI
	case "metadata":
		return fMetadata
	case "namespace":
		return fNamespace
	case "trust":
		return fTrust
	case "acl":
		return fACL
	case "version_hash":
		return fVersionHash
	case "timestamp":
		return fTimestamp
	}
	return -1
}

// trustOf is the Trust b spells, one of the constants (no allocation)
// when it is one.
func trustOf(b []byte) Trust {
	switch string(b) {
	case string(Authoritative):
		return Authoritative
	case string(Derived):
		return Derived
	case string(ExternalUnverified):
		return ExternalUnverified
	}
	return Trust(b)
}

// fastParser walks one JSON value for decodeFast. i is the next byte.
type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// eat moves past c if it is the next byte.
func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (p *fastParser) end() bool {
	p.ws()
	return p.i == len(p.b)
}

// plainString moves past a string at p.i and returns the bounds of its
// contents, or ok=false when it is not a string, or holds an escape, a
// control byte or invalid UTF-8 (whose decoding encoding/json does).
func (p *fastParser) plainString() (s0, s1 int, ok bool) {
	if !p.eat('"') {
		return 0, 0, false
	}
	s0 = p.i
	ascii := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s1 = p.i
			p.i++
			if !ascii && !utf8.Valid(p.b[s0:s1]) {
				return 0, 0, false
			}
			return s0, s1, true
		case c == '\\' || c < 0x20:
			return 0, 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		p.i++
	}
	return 0, 0, false
}

// stringArray reads an array of plain strings ([] gives an empty,
// non-nil slice, as encoding/json does).
func (p *fastParser) stringArray() ([]string, bool) {
	if !p.eat('[') {
		return nil, false
	}
	n := 0
	for q := p.i; q < len(p.b) && p.b[q] != ']'; q++ {
		if p.b[q] == ',' {
			n++
		}
	}
	out := make([]string, 0, n+1)
	p.ws()
	if p.eat(']') {
		return out, true
	}
	for {
		p.ws()
		s0, s1, ok := p.plainString()
		if !ok {
			return nil, false
		}
		out = append(out, string(p.b[s0:s1]))
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return out, true
		}
		return nil, false
	}
}

// skipValue moves past one value (data is valid JSON).
func (p *fastParser) skipValue() bool {
	s := keyScanner{b: p.b, i: p.i, skipOnly: true}
	if s.value(nil) != nil || s.i == p.i {
		return false
	}
	p.i = s.i
	return true
}
