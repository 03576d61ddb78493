package embed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/stratasearch/strata/engine/embed"
)

// A Client against an OpenAI-compatible server (here a stand-in that
// embeds every text as its length and a constant).
func ExampleClient() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req embed.Request
		json.NewDecoder(r.Body).Decode(&req)
		type entry struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []entry
		for i, t := range req.Input {
			data = append(data, entry{i, []float32{float32(len(t)), 1}})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data, "model": req.Model})
	}))
	defer srv.Close()

	c, err := embed.NewClient(embed.Options{BaseURL: srv.URL, Model: "toy", BatchSize: 2})
	if err != nil {
		panic(err)
	}
	vecs, err := c.Embed(context.Background(), []string{"a", "bb", "ccc"}) // two requests: 2 + 1 texts
	fmt.Println(vecs, err, c.Dim(), c.Model())
	// Output: [[1 1] [2 1] [3 1]] <nil> 2 toy
}
