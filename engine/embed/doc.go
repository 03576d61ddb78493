// Package embed turns texts into dense vectors for Strata: the Embedder
// interface the engine calls on its write path (documents with content and
// no vector) and query path (a dense or hybrid query with text and no
// vector), and Client, an Embedder that calls an OpenAI-compatible
// embeddings endpoint over HTTP.
//
// # Protocol
//
// Client sends POST {BaseURL}/v1/embeddings with the JSON body
//
//	{"model": "<Options.Model>", "input": ["text 0", "text 1", ...]}
//
// (and "Authorization: Bearer <APIKey>" when an API key is set), and
// expects
//
//	{"data": [{"index": 0, "embedding": [f0, f1, ...]}, ...], "model": "..."}
//
// the OpenAI embeddings response shape (extra fields such as "object" and
// "usage" are ignored). The bundled server tools/embed-server speaks it, as
// do OpenAI, llama.cpp's server, vLLM, Ollama's /v1 endpoint and others.
//
// # Checks
//
// A response is accepted only if (DecodeResponse): it is one JSON object
// of at most MaxResponseBytes; data holds exactly one entry per input;
// every index lies in [0, n) and appears once (entries may come in any
// order, each is placed at its index); every embedding has the same
// length, which equals Options.Dim when that is set; every component is a
// finite number within float32 range. Anything else is ErrBadResponse,
// which is not retried (a server that answers garbage once will again).
//
// # Batching, retries, timeouts
//
// Embed splits its input into requests of at most BatchSize texts (default
// 64), sent one after another. Each request (one attempt) has its own
// deadline, Timeout (default 30 s), under the caller's context. An attempt
// that fails with HTTP 429, 408, any 5xx, a connection error or its own
// timeout is retried up to MaxRetries times (default 4) after an
// exponential backoff with jitter: attempt a waits a uniform random time
// in [d/2, d] with d = min(BackoffBase·2^a, BackoffMax) (defaults 250 ms
// and 8 s), or the server's Retry-After (seconds or an HTTP date) when
// that is longer, capped at MaxRetryAfter (default 60 s). Other 4xx
// answers are returned at once as *StatusError. A cancelled caller context
// stops everything at once and returns the context's error. After the
// last retry the error wraps ErrRetriesExhausted and the last attempt's
// error.
package embed
