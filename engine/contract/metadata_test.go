package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"unsafe"
)

// refMetadata is the straightforward decoding decodeMetadata must equal:
// encoding/json's token stream reads each key (decoded, as a map key
// is) and raw value, a key seen twice fails, and Value.UnmarshalJSON
// decodes each value.
func refMetadata(raw []byte) (map[string]Value, bool) {
	var probe any
	if json.Unmarshal(raw, &probe) != nil {
		return nil, false
	}
	switch probe.(type) {
	case nil:
		return nil, true
	case map[string]any:
	default:
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, false
	}
	out := map[string]Value{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k := tok.(string)
		var r json.RawMessage
		if dec.Decode(&r) != nil {
			return nil, false
		}
		if _, dup := out[k]; dup {
			return nil, false
		}
		var v Value
		if v.UnmarshalJSON(r) != nil {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

var metadataSeeds = []string{
	`null`, `{}`, `{"a":1}`, `{"a":"x","b":true,"c":false,"d":["p","q"],"e":-1.5e-3}`,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"k":null}`, `{"k":{}}`, `{"k":[1]}`, `{"k":1e400}`,
	`{"k":"\u00e9\n"}`, `{"k":"` + "\xff" + `"}`, `{"` + "\xff" + `":1,"\ufffd":2}`, `[1]`, `"x"`, `3`,
	` { "a" : "b" , "c" : [ ] } `, `{"n1":1e20,"n2":-0,"n3":0.000001}`, `{"k":[]}`, `{"":1}`,
}

// TestDecodeMetadata: decodeMetadata agrees with the reference on every
// seed, and names the key of a bad value or a duplicate.
func TestDecodeMetadata(t *testing.T) {
	for _, s := range metadataSeeds {
		if !json.Valid([]byte(s)) {
			continue
		}
		checkMetadata(t, []byte(s))
	}
	for _, c := range []struct{ in, key, typ string }{
		{`{"a":1,"b":2,"b":3}`, "b", ErrTypeDuplicate},
		{`{"a":1,"b":null}`, "b", ErrTypeJSONType},
		{`{"a":{"x":1}}`, "a", ErrTypeJSONType},
	} {
		_, err := decodeMetadata([]byte(c.in))
		var de *decodeError
		if !errors.As(err, &de) || de.typ != c.typ || !reflect.DeepEqual(de.loc, []any{"metadata", c.key}) {
			t.Errorf("%s: %v (%+v)", c.in, err, de)
		}
	}
	if _, err := decodeMetadata([]byte(`[1]`)); !errors.Is(err, error(errMetadataType)) {
		t.Errorf("an array: %v", err)
	}
}

func checkMetadata(t *testing.T, raw []byte) {
	t.Helper()
	want, wok := refMetadata(raw)
	got, err := decodeMetadata(raw)
	if (err == nil) != wok {
		t.Fatalf("%q: decodeMetadata error %v, reference ok %v", raw, err, wok)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %#v, want %#v", raw, got, want)
	}
}

func FuzzDecodeMetadata(f *testing.F) {
	for _, s := range metadataSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // decodeMetadata runs on what json.Unmarshal accepted
		}
		checkMetadata(t, raw)
	})
}

// TestValueSize: a Value is 40 bytes, so that a decoded metadata map
// costs 56 bytes a slot (key and value) rather than 80.
func TestValueSize(t *testing.T) {
	if n := unsafe.Sizeof(Value{}); n != 40 {
		t.Fatalf("contract.Value is %d bytes, want 40", n)
	}
	v := Strings("a", "b")
	w := Strings("a", "b")
	if l, ok := v.List(); !ok || len(l) != 2 || l[1] != "b" || !v.Equal(w) || v.Equal(Strings("a")) || v.Equal(String("a")) {
		t.Fatalf("list value %v does not round-trip", v)
	}
	if b, err := (Value{kind: KindStrings}).MarshalJSON(); err != nil || string(b) != "[]" {
		t.Fatalf("empty list encodes as %s, %v", b, err)
	}
}
