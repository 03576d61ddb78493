package mcp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// Version is the server version reported to MCP clients.
const Version = "0.1.0"

// Caller is who a tool call runs as. The runtime fills it from the
// transport's credentials (the API key over HTTP, Options.Principal over
// stdio); no tool argument names it.
type Caller struct {
	// Principal is matched against document namespaces and ACLs; nil is
	// the trusted embedded caller.
	Principal *contract.Principal
	// Admin callers also see and may call the job tool (jobs.go) when
	// Options.Jobs is set.
	Admin bool
}

// Server holds the tools over one collection. It is transport-neutral:
// SDKServer builds the MCP server a caller's session talks to, RunStdio
// and HTTPHandler serve it. Safe for concurrent use.
type Server struct {
	db    *engine.DB
	o     Options
	roots []string // cleaned Options.Roots
	log   *slog.Logger

	tools []*tool
	cat   catalogCache
	mem   *MemoryOptions // memory.go: set by EnableMemory
	key   []byte         // HMAC key of read and list cursors (per process)

	mu   sync.Mutex
	sdks map[string]*sdk.Server // by principalKey (HTTP)

	// testHookCall, when set (tests), runs inside every tool call before
	// the tool, with the call's context.
	testHookCall func(ctx context.Context, tool string)
}

// New builds a Server over db's collection o.Collection, looked up at
// each call (a call before the collection exists is a tool error). The
// caller keeps owning db. Errors: invalid options.
func New(db *engine.DB, o Options, logger *slog.Logger) (*Server, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	s := &Server{db: db, o: o, log: logger, sdks: map[string]*sdk.Server{}, key: make([]byte, 32)}
	_, _ = rand.Read(s.key)
	for _, r := range o.Roots {
		s.roots = append(s.roots, filepath.Clean(r))
	}
	s.registerTools()
	return s, nil
}

// errNoCollection is a call made before the collection exists.
var errNoCollection = errors.New("mcp: collection not found")

// collection returns the configured collection.
func (s *Server) collection() (*engine.Collection, error) {
	if s.db == nil {
		return nil, errNoCollection
	}
	col, err := s.db.Collection(s.o.Collection)
	if err != nil {
		return nil, errNoCollection
	}
	return col, nil
}

// catalog returns the indexed tree at the collection's current epoch.
func (s *Server) catalog(ctx context.Context) (*catalog, error) {
	col, err := s.collection()
	if err != nil {
		return nil, err
	}
	return s.cat.get(ctx, col, s.roots)
}

// Warm prepares, in the background, what the first calls would otherwise
// wait for: one search (the engine's first search after opening a store
// loads its segment indexes; seconds on a large store) and the indexed
// tree that read, list and repo_map answer from.
func (s *Server) Warm() {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if col, err := s.collection(); err == nil {
			_, _ = col.Search(ctx, contract.Query{Text: "warm", TopK: 1, Mode: contract.Lexical, Scope: contract.Scope{Namespace: s.o.Namespace}})
		}
		_, _ = s.catalog(ctx)
	}()
}

// Options returns the server's options after defaults.
func (s *Server) Options() Options { return s.o }

// SDKServer returns an MCP server whose tools run as c. Each call builds a
// new one; HTTPHandler keeps one per principal.
func (s *Server) SDKServer(c Caller) *sdk.Server {
	admin := s.jobTools(c)
	caps := &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}}
	if admin {
		caps.Logging = &sdk.LoggingCapabilities{} // job completion notifications
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "strata", Version: Version}, &sdk.ServerOptions{
		Capabilities: caps,
		Logger:       s.log,
	})
	for _, t := range s.tools {
		if !t.admin || admin {
			srv.AddTool(t.def, s.handler(t, c))
		}
	}
	return srv
}

// jobTools reports whether c sees the job tool.
func (s *Server) jobTools(c Caller) bool { return c.Admin && s.o.Jobs != nil }

// tool is one registered tool: its definition and its adapter.
type tool struct {
	def   *sdk.Tool
	admin bool                                      // listed and callable for admin callers only
	check func(c *call, args json.RawMessage) error // decode and validate only
	run   func(ctx context.Context, c *call, args json.RawMessage) (out any, text string, err error)
}

// call is one tool invocation: the runtime's side of it.
type call struct {
	s      *Server
	caller Caller
	nonce  string               // frame nonce of this request
	req    *sdk.CallToolRequest // the request (nil in tests of check)
}

// arguments is what a tool's argument struct implements: validate reports
// every problem with the decoded arguments (locs start with "arguments").
type arguments interface {
	validate(c *call) []contract.FieldError
}

// register adds a tool. Its arguments decode into A under the closed-schema
// rules (unknown fields and trailing data are validation errors, as
// contract.Decode reports them), then A's validate runs; run gets valid
// arguments and returns the structured result, the framed text content
// and an error. inSchema and outSchema are the JSON Schemas the tool
// advertises; TestMCPSchemasMatchValidation checks that the schema and
// validate agree. Adding a tool is an argument struct, a run function and
// one register call in registerTools.
func register[A any, PA interface {
	*A
	arguments
}, R any](s *Server, name, desc, inSchema, outSchema string, run func(ctx context.Context, c *call, a *A) (R, string, error)) {
	def := &sdk.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(inSchema), OutputSchema: json.RawMessage(outSchema)}
	known := jsonFields(reflect.TypeFor[A]())
	decode := func(c *call, raw json.RawMessage) (*A, error) {
		var a A
		if len(bytes.TrimSpace(raw)) == 0 {
			raw = json.RawMessage("{}")
		}
		// Unknown fields are reported with every other problem: set them
		// aside, then decode the rest strictly.
		var fes []contract.FieldError
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil && obj != nil {
			var extra []string
			for k := range obj {
				if !known[k] {
					extra = append(extra, k)
				}
			}
			if len(extra) > 0 {
				sort.Strings(extra)
				for _, k := range extra {
					fes = append(fes, contract.FieldError{Loc: []any{"arguments", k}, InputValue: clip(k), ErrorType: contract.ErrTypeUnknownField,
						Message: "unknown field " + strconv.Quote(k), ExpectedDomain: "a field of the tool's input schema"})
					delete(obj, k)
				}
				raw, _ = json.Marshal(obj)
			}
		}
		if err := contract.Decode(bytes.NewReader(raw), "arguments", PA(&a)); err != nil {
			var ve *contract.ValidationError
			if errors.As(err, &ve) {
				return nil, &contract.ValidationError{Errors: append(fes, ve.Errors...)}
			}
			return nil, err
		}
		if more := PA(&a).validate(c); len(fes)+len(more) > 0 {
			return nil, &contract.ValidationError{Errors: append(fes, more...)}
		}
		return &a, nil
	}
	s.tools = append(s.tools, &tool{def: def,
		check: func(c *call, raw json.RawMessage) error { _, err := decode(c, raw); return err },
		run: func(ctx context.Context, c *call, raw json.RawMessage) (any, string, error) {
			a, err := decode(c, raw)
			if err != nil {
				return nil, "", err
			}
			return run(ctx, c, a)
		}})
}

// handler adapts a tool to the SDK: deadline, panic containment, error
// shapes.
func (s *Server) handler(t *tool, c Caller) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
		ctx, cancel := context.WithTimeout(ctx, s.o.Deadline)
		defer cancel()
		cl := &call{s: s, caller: c, nonce: rand.Text(), req: req}
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("mcp: tool panicked", "tool", t.def.Name, "panic", fmt.Sprint(p))
				res, err = toolError(failure("internal", "internal error", "")), nil
			}
		}()
		var raw json.RawMessage
		if req != nil && req.Params != nil {
			raw = req.Params.Arguments
		}
		if s.testHookCall != nil {
			s.testHookCall(ctx, t.def.Name)
		}
		out, text, rerr := t.run(ctx, cl, raw)
		if rerr != nil {
			return toolError(s.errorShape(t.def.Name, ctx, rerr)), nil
		}
		b, merr := json.Marshal(out)
		if merr != nil {
			s.log.Error("mcp: encoding a result failed", "tool", t.def.Name, "err", merr)
			return toolError(failure("internal", "encoding the result failed", "")), nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: json.RawMessage(b)}, nil
	}
}

// errorBody is the error shape of DESIGN.md (server/errors.go writes the
// same): {"status":…,"error_count":N,"errors":[FieldError…]}.
type errorBody struct {
	Status     string                `json:"status"`
	ErrorCount int                   `json:"error_count"`
	Errors     []contract.FieldError `json:"errors"`
}

func failure(status, msg, domain string) errorBody {
	return errorBody{Status: status, ErrorCount: 1, Errors: []contract.FieldError{{Loc: []any{}, ErrorType: status, Message: msg, ExpectedDomain: domain}}}
}

// errorShape maps an error to its body. Validation errors keep their
// fields; engine errors are logged and answered with a fixed message, never
// the engine's text (it names files and stored state).
func (s *Server) errorShape(tool string, ctx context.Context, err error) errorBody {
	var ve *contract.ValidationError
	var se *shapedError
	switch {
	case errors.As(err, &se):
		return se.body
	case errors.Is(err, errJobsUnavailable):
		return failure("forbidden", "the job tool needs an admin caller and a server with a job runner", "")
	case errors.As(err, &ve):
		for i := range ve.Errors {
			if ve.Errors[i].Loc == nil {
				ve.Errors[i].Loc = []any{}
			}
		}
		return errorBody{Status: "validation_error", ErrorCount: len(ve.Errors), Errors: ve.Errors}
	case errors.Is(err, errNotFound):
		return failure("not_found", err.Error(), "an indexed file or directory under the server's roots that the caller may read")
	case errors.Is(err, context.DeadlineExceeded):
		return failure("timeout", "the tool's deadline passed", fmt.Sprintf("at most %v per call", s.o.Deadline))
	case errors.Is(err, context.Canceled):
		return failure("cancelled", "the call was cancelled", "")
	case errors.Is(err, engine.ErrNoEmbedder):
		return failure("unavailable", "dense and hybrid search need an embedder; this collection has none", "mode lexical")
	case errors.Is(err, errCatalogBuilding):
		return failure("unavailable", "the indexed tree is still being read after a change; retry shortly", "")
	case errors.Is(err, errNoCollection):
		return failure("unavailable", "the collection "+strconv.Quote(s.o.Collection)+" does not exist yet (index a tree first)", "")
	case errors.Is(err, engine.ErrClosed):
		return failure("unavailable", "the store is closed", "")
	}
	if ctx.Err() != nil {
		return s.errorShape(tool, ctx, ctx.Err())
	}
	s.log.Error("mcp: tool failed", "tool", tool, "err", err)
	return failure("internal", "the tool failed (see the server log)", "")
}

func toolError(b errorBody) *sdk.CallToolResult {
	raw, err := json.Marshal(b)
	if err != nil { // an unencodable input_value: drop the values
		for i := range b.Errors {
			b.Errors[i].InputValue = nil
		}
		raw, _ = json.Marshal(b)
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}, StructuredContent: json.RawMessage(raw)}
}

// errNotFound marks a path that is not an indexed, visible file or
// directory; its text is safe to show.
var errNotFound = errors.New("not found")

type notFoundError struct{ what string }

func (e *notFoundError) Error() string {
	return e.what + ": not an indexed file or directory you may read"
}
func (e *notFoundError) Is(t error) bool { return t == errNotFound }

// --- cursors ---

// sealCursor encodes v as an opaque cursor bound to the caller: base64url
// of the JSON and an HMAC-SHA256 over it, the principal key and the tool.
func (c *call) sealCursor(tool string, v any) string {
	b, _ := json.Marshal(v)
	m := hmac.New(sha256.New, c.s.key)
	m.Write([]byte(tool + "\x00" + principalKey(c.caller.Principal, c.s.o.Namespace) + "\x00"))
	m.Write(b)
	return base64.RawURLEncoding.EncodeToString(append(b, m.Sum(nil)[:16]...))
}

// openCursor decodes a cursor sealed for this tool and caller into v.
func (c *call) openCursor(tool, cur string, v any) bool {
	raw, err := base64.RawURLEncoding.DecodeString(cur)
	if err != nil || len(raw) < 17 {
		return false
	}
	b, mac := raw[:len(raw)-16], raw[len(raw)-16:]
	m := hmac.New(sha256.New, c.s.key)
	m.Write([]byte(tool + "\x00" + principalKey(c.caller.Principal, c.s.o.Namespace) + "\x00"))
	m.Write(b)
	if !hmac.Equal(mac, m.Sum(nil)[:16]) {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

func badCursor(cur string) contract.FieldError {
	return contract.FieldError{Loc: []any{"arguments", "cursor"}, InputValue: clip(cur), ErrorType: contract.ErrTypeInvalidFormat,
		Message: "cursor is not one this tool returned to this caller", ExpectedDomain: "a next_cursor from an earlier call of this tool"}
}

// clip shortens a long input value for an error report.
func clip(s string) string {
	if len(s) > 128 {
		b := []byte(s[:128])
		for len(b) > 0 && b[len(b)-1]&0xC0 == 0x80 {
			b = b[:len(b)-1]
		}
		if len(b) > 0 && b[len(b)-1] >= 0xC0 {
			b = b[:len(b)-1]
		}
		return string(b) + "…"
	}
	return s
}

// jsonFields returns the JSON names of a struct type's fields.
func jsonFields(t reflect.Type) map[string]bool {
	m := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = true
		}
	}
	return m
}
