package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
)

// FuzzMCPTruncateSpan: the output fits the budget, and is exactly the span's
// head, the marker, and its tail; a valid UTF-8 span stays valid.
func FuzzMCPTruncateSpan(f *testing.F) {
	f.Add([]byte("a\nbb\nccc\n"), 4)
	f.Add([]byte("éééééééééé\nx\n"), 7)
	f.Add(bytes.Repeat([]byte("line\n"), 100), 120)
	f.Add([]byte("no newline at all, just one long line"), 10)
	f.Fuzz(func(t *testing.T, span []byte, maxBytes int) {
		if maxBytes < 0 || maxBytes > 1<<20 {
			return
		}
		out, cut := truncateSpan(span, maxBytes)
		if cut == nil {
			if out != string(span) || len(span) > maxBytes {
				t.Fatalf("uncut output differs or exceeds %d", maxBytes)
			}
			return
		}
		marker := truncateMarker(cut.lines, cut.bytes)
		head, tail := string(span[:cut.at]), string(span[cut.at+cut.bytes:])
		sep := ""
		if cut.at > 0 && span[cut.at-1] != '\n' {
			sep = "\n"
		}
		if out != head+sep+marker+tail {
			t.Fatalf("output is not head+marker+tail")
		}
		if min := len(truncateMarker(len(span), len(span))) + 3; maxBytes >= min && len(out) > maxBytes {
			t.Fatalf("output %d bytes over a budget of %d", len(out), maxBytes)
		}
		if utf8.Valid(span) && !utf8.ValidString(out) {
			t.Fatalf("cut inside a UTF-8 sequence")
		}
	})
}

// FuzzMCPToolArguments: any arguments of any tool (the graph arguments,
// the memory and job tools included) decode to valid ones or to a
// validation error (never a panic or another error).
func FuzzMCPToolArguments(f *testing.F) {
	s, err := New(nil, Options{Roots: []string{"/nonexistent"}, Graph: graph.NewStore(graph.FromFragments(nil))}, nil)
	if err != nil {
		f.Fatal(err)
	}
	s.registerMemoryTools()
	for _, seed := range []string{`{}`, `{"query":"x","top_k":3}`, `{"query":1}`, `{"filter":{"and":[{"eq":{"field":"a","value":1}}]}}`,
		`{"uri":"../x","start_line":-1}`, `{"cursor":"AAAA"}`, `[1,2]`, `null`, `{"path":"a/../..","limit":0}`, `{"symbol":"A.B","x":[]}`,
		`{"query":"x","expand":5,"cursor":"c","filter":{}}`, `{"symbol":"A","calls":"up","top_k":0}`,
		`{"kind":"archive","segments":[0,0],"oldest":-1,"nlist":1e9}`, `{"kind":"index","path":null}`, `{"kind":"promote","archive_id":0}`,
		`{"job_id":"x","cancel":true,"kind":"flush","log_lines":-1}`, `{"cancel":false}`, `{"key":"k","history":true,"kinds":["x"]}`} {
		for i := range s.tools {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		tl := s.tools[int(which)%len(s.tools)]
		err := tl.check(&call{s: s, nonce: "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}, json.RawMessage(raw))
		var ve *contract.ValidationError
		if err != nil && !errors.As(err, &ve) {
			t.Fatalf("%s %q: %T %v", tl.def.Name, raw, err, err)
		}
		if ve != nil {
			if _, err := json.Marshal(ve); err != nil {
				t.Fatalf("unencodable validation error: %v", err)
			}
		}
	})
}
