package server

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"testing"
)

// TestUpsertResponseJSON: the upsert response's own encoder writes JSON
// that decodes to the same value json.Marshal's does (and byte for byte
// the same when no id needs HTML escaping), with and without the epoch,
// on seeded ids holding quotes, control bytes, invalid UTF-8, '<' and
// U+2028; and the encoding from the handler's id/hash list is the map's,
// byte for byte.
func TestUpsertResponseJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{"a", "doc-", "\"", "\\", "\n", "\x01", "<&>", "\u2028", "\xff", "é", "🙂"}
	for round := range 50 {
		n := rng.IntN(20)
		u := UpsertResponse{Epoch: rng.Uint64(), Count: n, VersionHashes: map[string]string{}}
		plain := true
		for i := range n {
			id := fmt.Sprint(i)
			for range rng.IntN(4) {
				p := parts[rng.IntN(len(parts))]
				if p == "<&>" || p == "\u2028" || p == "\xff" {
					plain = false
				}
				id += p
			}
			u.VersionHashes[id] = fmt.Sprintf("%064x", rng.Uint64())
		}
		if round == 0 {
			u.VersionHashes = nil
		}
		// The same response from the batch's id/hash list (what the
		// upsert handler builds): the same bytes as from the map.
		var listed UpsertResponse
		if u.VersionHashes != nil {
			listed = UpsertResponse{Epoch: u.Epoch, Count: u.Count, hashes: []idHash{}}
			for id, h := range u.VersionHashes {
				var b [32]byte
				if _, err := hex.Decode(b[:], []byte(h)); err != nil {
					t.Fatal(err)
				}
				listed.hashes = append(listed.hashes, idHash{id, &b})
			}
			for _, pair := range [][2]jsonAppender{{u, listed}, {keyUpsertResponse{UpsertResponse: u}, keyUpsertResponse{UpsertResponse: listed}}} {
				if a, b := pair[0].appendJSON(nil), pair[1].appendJSON(nil); !bytes.Equal(a, b) {
					t.Fatalf("from the list\n%s\ndiffers from the map's\n%s", b, a)
				}
			}
		}
		for _, v := range []any{u, keyUpsertResponse{UpsertResponse: u}} {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got := v.(jsonAppender).appendJSON(nil)
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("own encoding %s does not parse: %v", got, err)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("own encoding\n%s\ndecodes differently from json.Marshal's\n%s", got, want)
			}
			if plain && !bytes.Equal(got, want) {
				t.Fatalf("own encoding\n%s\ndiffers from json.Marshal's\n%s", got, want)
			}
		}
	}
}

// TestUpsertResponseChunked: a response of many ids is written in pieces
// (writeChunked) with the same bytes, newline and Content-Length as the
// one built whole, with and without the epoch, for ids that need escapes
// too; a small one is still built whole.
func TestUpsertResponseChunked(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, chunkedItems - 1, chunkedItems, 3000} {
		u := UpsertResponse{Epoch: rng.Uint64(), Count: n, hashes: make([]idHash, n)}
		for i := range u.hashes {
			var b [32]byte
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			id := fmt.Sprint("doc-", i)
			if i%97 == 0 {
				id += "\"\n\xff\u2028"
			}
			u.hashes[i] = idHash{id, &b}
		}
		for _, v := range []jsonAppender{u, keyUpsertResponse{UpsertResponse: u}} {
			want := append(v.appendJSON(nil), '\n')
			w := httptest.NewRecorder()
			writeJSON(w, 200, v)
			if got := w.Body.Bytes(); !bytes.Equal(got, want) {
				t.Fatalf("n=%d: written %d bytes, differing from the %d built whole", n, len(got), len(want))
			}
			if cl := w.Header().Get("Content-Length"); cl != fmt.Sprint(len(want)) {
				t.Fatalf("n=%d: Content-Length %s for %d bytes", n, cl, len(want))
			}
			if _, chunked := v.(jsonChunker).appendJSONChunks(nil, func(b []byte) []byte { return b[:0] }); chunked != (n >= chunkedItems) {
				t.Fatalf("n=%d: chunked %v", n, chunked)
			}
		}
	}
}
