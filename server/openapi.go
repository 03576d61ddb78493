package server

import (
	_ "embed"
	"net/http"
	"strconv"
)

// openAPISpec is the OpenAPI 3.0 description of every route, served at
// GET /v1/openapi.json. TestOpenAPIMatchesRoutes checks that it lists
// exactly the registered routes and that its example request bodies are
// accepted by the real handlers.
//
//go:embed openapi.json
var openAPISpec []byte

// OpenAPISpec returns the embedded OpenAPI document (a copy).
func OpenAPISpec() []byte { return append([]byte(nil), openAPISpec...) }

func serveSpec(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(openAPISpec)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPISpec)
}
