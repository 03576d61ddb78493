package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/stratasearch/strata/engine/embed"
	"github.com/stratasearch/strata/engine/embed/static"
	"github.com/stratasearch/strata/engine/verify"
	"github.com/stratasearch/strata/server"
)

// runServe is `searchd serve`: the HTTP/JSON API (package server)
// over the embedded store in --data, until SIGINT or SIGTERM, then a
// graceful shutdown (in-flight requests finish, jobs are cancelled, every
// WAL is synced by closing the store).
func runServe(args []string) error {
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	data := fl.String("data", defaultData, "data directory (embedded store); the server keeps its state in DIR/server/")
	addr := fl.String("addr", "127.0.0.1:7700", "listen address host:port")
	apiKeys := fl.String("api-keys", "", `API keys file: JSON [{"key" or "key_sha256", "principal", "namespaces":["tenant-a/"], "admin":bool}] (none = open mode, loopback only)`)
	insecure := fl.Bool("insecure-no-auth", false, "allow open mode (no API keys) on a non-loopback address")
	var roots []string
	fl.Func("index-root", "directory index jobs may read (repeatable; none = index jobs disabled)", func(s string) error {
		abs, err := filepath.Abs(s)
		if err != nil {
			return err
		}
		roots = append(roots, filepath.Clean(abs))
		return nil
	})
	var vroots []verify.Root
	fl.Func("verify-root", "NAMESPACE_PREFIX=DIR: API-written documents of matching namespaces may name file:// sources under DIR, and only there (repeatable; \"*\" = every namespace)", func(s string) error {
		ns, dir, ok := strings.Cut(s, "=")
		if !ok || ns == "" || dir == "" {
			return fmt.Errorf("want NAMESPACE_PREFIX=DIR, got %q", s)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		vroots = append(vroots, verify.Root{Namespace: ns, Dir: filepath.Clean(abs)})
		return nil
	})
	maxBody := fl.Int64("max-body", server.DefaultMaxBodyBytes, "largest request body in bytes (413 above)")
	reqTimeout := fl.Duration("request-timeout", server.DefaultRequestTimeout, "per-request deadline; a search's budget is min(budget_ms, this)")
	maxConc := fl.Int("max-concurrency", server.DefaultMaxConcurrency, "concurrent /v1 requests (429 beyond)")
	idemTTL := fl.Duration("idempotency-ttl", server.DefaultIdempotencyTTL, "how long completed Idempotency-Keys are remembered (across restarts)")
	shutdown := fl.Duration("shutdown-timeout", server.DefaultShutdownTimeout, "how long in-flight requests may take to finish at shutdown")
	logFormat := fl.String("log-format", "text", "access/server log format: text | json (stderr)")
	logLevel := fl.String("log-level", "info", "debug | info | warn | error (the access log is info)")
	memCol := fl.String("memory-collection", "", "serve an agent memory store over this collection (/v1/memory, MCP remember/recall/forget); created if missing")
	memEmb := fl.String("memory-embedder", embedderBuiltin, "embedder of a memory collection --memory-collection creates: builtin (recall is hybrid; model "+static.BuiltinModel+") | none (recall is lexical unless a caller sends vectors of --memory-dim)")
	memDim := fl.Int("memory-dim", 8, "vector dimension of a memory collection --memory-collection creates with --memory-embedder none")
	memRet := memoryRetention{}
	fl.Var(memRet, "memory-retention", "retention of one memory kind, KIND=TTL[,CAPACITY] (e.g. note=168h,200: notes are forgotten 7 days after they are recorded, and at most 200 stay active per subject); repeatable; applied by the background job")
	memMaintain := fl.Duration("memory-maintain-every", 10*time.Minute, "interval of the memory store's background job (consolidation, retention, changed sources, purge); 0 = off")
	ef := addEmbedderFlags(fl)
	mf := addMCPFlags(fl, "mcp-")  // mcp.go: /mcp, the MCP tools over streamable HTTP
	osf := addObjectStoreFlags(fl) // objectstore.go: --object-store, --read-only
	var hosts []string
	fl.Func("allowed-hosts", `further Host names accepted in open mode (comma-separated or repeatable; "*" disables the DNS-rebinding check)`, func(s string) error {
		for _, h := range strings.Split(s, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hosts = append(hosts, h)
			}
		}
		return nil
	})
	fl.Usage = func() {
		fmt.Fprintf(fl.Output(), "usage: searchd serve [flags]\n\nServe the HTTP/JSON API over the store in --data (GET /v1/openapi.json describes it).\n\n")
		fl.PrintDefaults()
	}
	var err error
	if pos, err := parseArgs(fl, args); err != nil {
		return err
	} else if len(pos) != 0 {
		fl.Usage()
		return fmt.Errorf("serve: unexpected arguments %q", pos)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("serve: --log-level: %w", err)
	}
	var h slog.Handler
	switch *logFormat {
	case "text":
		h = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	case "json":
		h = slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	default:
		return fmt.Errorf("serve: --log-format %q, want text or json", *logFormat)
	}
	logger := slog.New(h)

	o := server.Options{DataDir: *data, MaxBodyBytes: *maxBody, RequestTimeout: *reqTimeout, MaxConcurrency: *maxConc,
		IdempotencyTTL: *idemTTL, ShutdownTimeout: *shutdown, IndexRoots: roots, VerifyRoots: vroots, Logger: logger, AllowedHosts: hosts}
	// Every collection's code graph (graph.go); index jobs keep them
	// current, and the MCP tools share the one of their collection.
	if o.Graphs, err = loadGraphs(*data); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if *apiKeys != "" {
		keys, err := server.LoadAPIKeys(*apiKeys)
		if err != nil {
			return err
		}
		o.APIKeys = keys
	} else if !server.IsLoopback(*addr) && !*insecure {
		return fmt.Errorf("serve: refusing open mode (no --api-keys) on non-loopback address %s; pass --api-keys FILE or --insecure-no-auth", *addr)
	}
	// --embedder: collections recording this model embed text-only
	// queries (dense / hybrid) and text-only upserts through it.
	emb, err := ef.embedder(context.Background())
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// The built-in embedder is always there for collections indexed with it.
	o.Engine.Embedders = map[string]embed.Embedder{static.BuiltinModel: static.Lazy{}}
	if emb != nil {
		o.Engine.Embedders[emb.Model()] = emb
		logger.Info("searchd serve: embedder", "embedder", *ef.url, "model", emb.Model(), "dim", emb.Dim())
	}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(*data, 0o755); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if o.APIKeys == nil {
		logger.Warn("searchd serve: OPEN MODE — no API keys; every caller is trusted",
			"addr", ln.Addr().String(), "non_loopback", !server.IsLoopback(*addr))
	}
	if len(roots) > 0 {
		logger.Info("searchd serve: index jobs may read", "roots", strings.Join(roots, ", "))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t0 := time.Now()
	if len(mf.roots) == 0 {
		mf.roots = roots // index jobs' roots bound what MCP may read, unless --mcp-root says otherwise
	}
	if *osf.readOnly {
		return serveReplica(ctx, ln, osf, o, logger)
	}
	setup := []func(*server.Server) error{mountMemory(ctx, memoryConfig{name: *memCol, embedder: *memEmb, dim: *memDim, retention: memRet, maintainEvery: *memMaintain}, logger), mountMCP(mf, *data, o.Graphs[*mf.collection], logger)}
	if *osf.url != "" {
		setup = append(setup, osf.publisher(ctx, logger))
	}
	err = server.Run(ctx, ln, o, setup...)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	logger.Info("searchd serve: stopped", "uptime", time.Since(t0).Round(time.Second))
	return nil
}
