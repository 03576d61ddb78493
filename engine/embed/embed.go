package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Embedder maps texts to dense vectors with one fixed model.
//
// Embed returns one vector per text, in input order: out[i] has Dim()
// finite components and embeds texts[i]. It returns an error (and no
// vectors) if any text could not be embedded. Implementations must be
// safe for concurrent use.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dim is the vector dimension d, or 0 while it is not known yet.
	Dim() int
	// Model names the model; vectors of different models are not
	// comparable, so the engine records it per collection.
	Model() string
}

// Errors. Wrapped errors name the request (batch offset) and attempt.
var (
	// ErrBadResponse: the server answered 2xx with a body that is not a
	// valid embeddings response for the request (see the package doc,
	// "Checks"). Not retried.
	ErrBadResponse = errors.New("embed: bad response")
	// ErrRetriesExhausted: every attempt of a request failed with a
	// retryable error; it wraps the last attempt's error too.
	ErrRetriesExhausted = errors.New("embed: retries exhausted")
	// ErrDimMismatch: an embedder's dimension differs from what its user
	// (a collection) expects.
	ErrDimMismatch = errors.New("embed: dimension mismatch")
)

// MaxResponseBytes is the largest response body a Client reads.
const MaxResponseBytes = 256 << 20

// Request is the JSON body of POST /v1/embeddings.
type Request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// responseJSON is the accepted response shape.
type responseJSON struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// DecodeResponse parses and checks an embeddings response body for a
// request of n texts: it returns n vectors in request order (out[i] is the
// entry whose index is i) and the model name the server reported. dim > 0
// is the required dimension; dim == 0 accepts any dimension in 1..MaxDim
// shared by every vector. Errors wrap ErrBadResponse and say what is
// wrong: malformed JSON, trailing data, a wrong entry count, a missing,
// out-of-range or repeated index, an empty or wrong-length embedding, a
// component that is not finite in float32.
func DecodeResponse(body []byte, n, dim int) ([][]float32, string, error) {
	var r responseJSON
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&r); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, "", fmt.Errorf("%w: trailing data after the JSON object", ErrBadResponse)
	}
	if len(r.Data) != n {
		return nil, "", fmt.Errorf("%w: %d embeddings for %d inputs", ErrBadResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for j, d := range r.Data {
		if d.Index == nil {
			return nil, "", fmt.Errorf("%w: data[%d] has no index", ErrBadResponse, j)
		}
		i := *d.Index
		if i < 0 || i >= n {
			return nil, "", fmt.Errorf("%w: data[%d].index = %d, want 0..%d", ErrBadResponse, j, i, n-1)
		}
		if out[i] != nil {
			return nil, "", fmt.Errorf("%w: data[%d].index = %d appears twice", ErrBadResponse, j, i)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) > MaxDim {
			return nil, "", fmt.Errorf("%w: data[%d].embedding has %d components, want 1..%d", ErrBadResponse, j, len(d.Embedding), MaxDim)
		}
		if dim == 0 {
			dim = len(d.Embedding)
		}
		if len(d.Embedding) != dim {
			return nil, "", fmt.Errorf("%w: data[%d].embedding has %d components, want %d", ErrBadResponse, j, len(d.Embedding), dim)
		}
		v := make([]float32, dim)
		for k, x := range d.Embedding {
			f := float32(x)
			if math.IsNaN(x) || math.IsInf(float64(f), 0) {
				return nil, "", fmt.Errorf("%w: data[%d].embedding[%d] = %g is not a finite float32", ErrBadResponse, j, k, x)
			}
			v[k] = f
		}
		out[i] = v
	}
	return out, r.Model, nil
}

// CheckVectors reports whether vecs holds n vectors of dim finite
// components each (an Embedder's contract); the engine applies it to
// every Embedder's output, not only Client's.
func CheckVectors(vecs [][]float32, n, dim int) error {
	if len(vecs) != n {
		return fmt.Errorf("%w: %d vectors for %d texts", ErrBadResponse, len(vecs), n)
	}
	for i, v := range vecs {
		if len(v) != dim {
			return fmt.Errorf("%w: vector %d has %d components, want %d", ErrDimMismatch, i, len(v), dim)
		}
		for k, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%w: vector %d component %d = %g is not finite", ErrBadResponse, i, k, x)
			}
		}
	}
	return nil
}

// StatusError is a non-2xx HTTP answer.
type StatusError struct {
	Code int    // HTTP status code
	Body string // the start of the response body (at most 512 bytes)
}

func (e *StatusError) Error() string {
	b := strings.TrimSpace(e.Body)
	if b == "" {
		return fmt.Sprintf("embed: server answered HTTP %d", e.Code)
	}
	return fmt.Sprintf("embed: server answered HTTP %d: %s", e.Code, b)
}

// Retryable reports whether the status is worth retrying: 408, 429, 5xx.
func (e *StatusError) Retryable() bool {
	return e.Code == 408 || e.Code == 429 || e.Code >= 500
}
