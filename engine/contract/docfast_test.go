package contract

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// decodeBoth decodes raw (valid JSON) through decodeFast and through
// strictUnmarshal alone, each into its own scratch (prepared by prev, a
// document decoded first, so that a reused vector array is in play), and
// returns the documents and the errors as eachElement reports them.
func decodeBoth(prev, raw []byte, reuse bool) (fast, slow Document, efast, eslow error) {
	for k, fastPath := range []bool{true, false} {
		sc := &docScratch{reuse: reuse}
		if prev != nil {
			_ = sc.d.unmarshalVia(prev, sc, fastPath)
		}
		var d Document
		err := d.unmarshalVia(raw, sc, fastPath)
		if err != nil {
			err = decodeFailure(err, "documents")
		}
		if k == 0 {
			fast, efast = d, err
		} else {
			slow, eslow = d, err
		}
	}
	return
}

var fastSeeds = []string{
	`{"id":"a","trust":"derived"}`, `{}`, ` { } `, `null`, `[]`, `"x"`, `1`, `true`,
	`{"id":"d1","content":"doc 1","trust":"authoritative"}`,
	`{"id":"a","content":"x","vector":[1,2.5,-3e-2],"source_uri":"file:///a.go#L1-L2","namespace":"t/r/","trust":"external_unverified","acl":["u1","g:2"],"version_hash":"` + strings.Repeat("ab", 32) + `","timestamp":"2026-11-29T12:00:00Z"}`,
	`{"id":"a","trust":"derived","acl":[]}`, `{"id":"a","trust":"derived","acl":[ ]}`, `{"id":"a","acl":[null]}`,
	`{"id":"a","acl":["a",1]}`, `{"id":"a","acl":null}`, `{"id":"a","acl":"x"}`, `{"id":"a","acl":[["x"]]}`,
	`{"id":"a","ID":"b","trust":"derived"}`, `{"Id":"a"}`, `{"id":"a","id":"b"}`, `{"id":"a","owner":1}`,
	`{"id":null}`, `{"content":null}`, `{"id":7}`, `{"id":true}`, `{"id":{}}`, `{"id":[]}`, `{"trust":"weird"}`,
	`{"id":"a\"b"}`, `{"id":"a\\b"}`, `{"id":"\u00e9"}`, `{"id":"\ud83d\ude00"}`, `{"id":"\ud83d"}`, `{"id":"\udc00x"}`,
	"{\"id\":\"\xff\"}", "{\"id\":\"a\xc3\"}", "{\"content\":\"\xe2\x82\xac\"}", "{\"c\xc3ntent\":\"x\"}", `{"\u0069d":"a"}`,
	`{"id":"a","vector":[1,null]}`, `{"id":"a","vector":null}`, `{"id":"a","vector":[]}`, `{"id":"a","vector":[ ]}`,
	`{"id":"a","vector":[1e39]}`, `{"id":"a","vector":[1.00000001,3.4028235e38,1e-46]}`, `{"id":"a","vector":["1"]}`,
	`{"id":"a","vector":{}}`, `{"id":"a","vector":"x"}`, `{"id":"a","vector":[[1]]}`, `{"id":"a","vector":[1,2],"vector":[3]}`,
	`{"id":"a","metadata":{"k":1,"k":2}}`, `{"id":"a","metadata":{"k":{}}}`, `{"id":"a","metadata":null}`,
	`{"id":"a","metadata":[]}`, `{"id":"a","metadata":{}}`, `{"id":"a","metadata":{"t":["x","y"],"b":true,"s":"\u00e9","n":1e20}}`,
	`{"id":"a","metadata":"x"}`, `{"id":"a","timestamp":"2026-11-29T12:00:00+02:00"}`, `{"id":"a","timestamp":"yesterday"}`,
	`{"id":"a","timestamp":1}`, `{"id":"a","timestamp":null}`, `{"id":"a","timestamp":"2026-11-29T12:00:00\u005a"}`,
	"{\n\t\"id\" : \"a\" ,\r\n \"trust\":\"derived\"\n}\n", `{"id":"a",}`,
}

// FuzzDecodeFast: the hand-written path (decodeFast, strictUnmarshal
// where it declines) gives, for every valid JSON element, the same
// document and the same error (type, location, input, message) as
// strictUnmarshal alone, with and without a reused vector array.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add(s, `{"id":"p","vector":[9,8,7,6,5]}`)
		f.Add(s, ``)
	}
	f.Fuzz(func(t *testing.T, s, prev string) {
		raw := []byte(s)
		if !json.Valid(raw) {
			return // eachDocument hands over valid elements only
		}
		var pb []byte
		if json.Valid([]byte(prev)) {
			pb = []byte(prev)
		}
		for _, reuse := range []bool{false, true} {
			a, b, ea, eb := decodeBoth(pb, raw, reuse)
			if !reflect.DeepEqual(ea, eb) {
				t.Fatalf("%q (reuse %v): fast error %#v, strictUnmarshal error %#v", s, reuse, ea, eb)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%q (reuse %v): fast %#v, strictUnmarshal %#v", s, reuse, a, b)
			}
		}
	})
}

// TestDecodeFastSeeds runs FuzzDecodeFast's comparison on its seeds and
// checks that the plain ones are decoded by decodeFast itself.
func TestDecodeFastSeeds(t *testing.T) {
	for _, s := range fastSeeds {
		if !json.Valid([]byte(s)) {
			continue
		}
		for _, reuse := range []bool{false, true} {
			a, b, ea, eb := decodeBoth([]byte(`{"vector":[1,2,3]}`), []byte(s), reuse)
			if !reflect.DeepEqual(ea, eb) || !reflect.DeepEqual(a, b) {
				t.Errorf("%q (reuse %v): fast %#v %v, strictUnmarshal %#v %v", s, reuse, a, ea, b, eb)
			}
		}
	}
	for _, s := range []string{fastSeeds[8], fastSeeds[9], `{"id":"a","trust":"derived","acl":[]}`, `{"id":"a","metadata":{"k":1,"k":2}}`} {
		var w documentWire
		if !w.decodeFast([]byte(s)) {
			t.Errorf("%s: decodeFast declined a plain document", s)
		}
	}
}

// TestEachDocumentTinyAllocs: EachDocumentReusing allocates, for a tiny
// document (id, content, trust), the id and the content strings and
// nothing else: through encoding/json it was about 18 allocations a
// document (its decoding state, the key check's key list).
func TestEachDocumentTinyAllocs(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"documents":[`)
	const n = 200
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"d%d","content":"doc %d","trust":"authoritative"}`, i, i)
	}
	b.WriteString(`]}`)
	var env struct {
		Documents json.RawMessage `json:"documents"`
	}
	if err := json.Unmarshal([]byte(b.String()), &env); err != nil {
		t.Fatal(err)
	}
	got := 0
	allocs := testing.AllocsPerRun(5, func() {
		got = 0
		if err := EachDocumentReusing(env.Documents, func(i int, d *Document) error {
			if d.ID != fmt.Sprint("d", i) || d.Trust != Authoritative {
				t.Fatalf("document %d: %+v", i, d)
			}
			got++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	if got != n {
		t.Fatalf("%d documents, want %d", got, n)
	}
	// fmt.Sprint in the check above: 2 more a document.
	t.Logf("%.2f allocations a document", allocs/n)
	if per := allocs / n; per > 4.1 {
		t.Errorf("%.2f allocations a document, want ≤ 4 (id, content, the check's Sprint)", per)
	}
}

// FuzzDocumentsHint: for a JSON array, DocumentsHint is the number of its
// elements (json.Unmarshal's count), capped at len/28; for anything else
// it is 0 or, for input that is not JSON, at most len/28.
func FuzzDocumentsHint(f *testing.F) {
	for _, s := range []string{`[]`, ` [ {"id":"a","trust":"derived"} , {"id":"b"} ] `, `[1,2,3]`, `null`, `{}`, `[1,`,
		`[{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}]`, `["a,b","]",[1,[2]],{"k":"}"}]`, `x`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		got := DocumentsHint(data)
		if got < 0 || got > len(data)/minDocumentBytes {
			t.Fatalf("%q: hint %d for %d bytes", s, got, len(data))
		}
		if !json.Valid(data) {
			return
		}
		var elems []json.RawMessage
		want := 0
		if json.Unmarshal(data, &elems) == nil {
			want = min(len(elems), len(data)/minDocumentBytes)
		}
		if got != want {
			t.Fatalf("%q: hint %d, want %d", s, got, want)
		}
	})
}
