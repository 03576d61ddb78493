package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestUpsertResponseJSON: the upsert response's own encoder writes JSON
// that decodes to the same value json.Marshal's does (and byte for byte
// the same when no id needs HTML escaping), with and without the epoch,
// on seeded ids holding quotes, control bytes, invalid UTF-8, '<' and
// U+2028.
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
