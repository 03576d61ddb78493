package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/mcp"
	"github.com/stratasearch/strata/server"
)

// mcpFlags are the MCP server's configuration flags, shared by `searchd
// mcp` and `searchd serve` (which mounts the HTTP transport at /mcp).
type mcpFlags struct {
	collection  *string
	roots       []string
	namespace   *string
	maxTopK     *int
	tokenBudget *int
	perHit      *int
	deadline    *time.Duration
}

func addMCPFlags(fl *flag.FlagSet, prefix string) *mcpFlags {
	f := &mcpFlags{}
	f.collection = fl.String(prefix+"collection", "code", "collection the MCP tools search and read")
	fl.Func(prefix+"root", "directory read/list/repo_map are confined to (repeatable; default: the directory holding every file the collection's ingest manifest lists)", func(s string) error {
		abs, err := filepath.Abs(s)
		if err != nil {
			return err
		}
		f.roots = append(f.roots, filepath.Clean(abs))
		return nil
	})
	f.namespace = fl.String(prefix+"namespace", "", "namespace prefix every MCP query is confined to")
	f.maxTopK = fl.Int(prefix+"max-top-k", mcp.MaxTopK, "largest top_k a tool call may ask for (clamped to 50)")
	f.tokenBudget = fl.Int(prefix+"token-budget", mcp.DefaultTokenBudget, "token budget of one tool result")
	f.perHit = fl.Int(prefix+"max-tokens-per-hit", mcp.DefaultMaxTokensPerHit, "token budget of one search hit")
	f.deadline = fl.Duration(prefix+"deadline", mcp.DefaultDeadline, "time budget of one tool call")
	return f
}

// options builds mcp.Options (Graph not set); dataDir locates the ingest
// manifest for the default roots.
func (f *mcpFlags) options(dataDir string) (mcp.Options, error) {
	o := mcp.Options{Collection: *f.collection, Roots: f.roots, Namespace: *f.namespace, MaxTopK: *f.maxTopK,
		TokenBudget: *f.tokenBudget, MaxTokensPerHit: *f.perHit, Deadline: *f.deadline}
	if len(o.Roots) == 0 {
		if r := manifestRoot(manifestPath(dataDir, o.Collection)); r != "" {
			o.Roots = []string{r}
		}
	}
	return o, nil
}

// manifestRoot is the deepest directory holding every file of an ingest
// manifest ("" when there is none). The manifest is written only by
// `searchd index` and index jobs (confined to --index-root), never by an
// API client, so documents naming other file:// paths do not widen it.
func manifestRoot(path string) string {
	m, err := ingest.LoadManifest(path)
	if err != nil || len(m.Files) == 0 {
		return ""
	}
	var root string
	first := true
	for p := range m.Files {
		d := filepath.Dir(p)
		if first {
			root, first = d, false
			continue
		}
		for root != d && !strings.HasPrefix(d, root+string(filepath.Separator)) {
			parent := filepath.Dir(root)
			if parent == root {
				break
			}
			root = parent
		}
	}
	return root
}

// runMCP is `searchd mcp`: the MCP tools over stdio, as --principal.
func runMCP(args []string) error {
	fl := flag.NewFlagSet("mcp", flag.ContinueOnError)
	data := fl.String("data", defaultData, "data directory (embedded store)")
	describe := fl.Bool("describe", false, "print the tool definitions and their size in tokens, then exit")
	principal := fl.String("principal", "", "run every call as this principal (default: the trusted local caller)")
	pns := fl.String("principal-namespaces", "*", "comma-separated namespace prefixes --principal may read")
	groups := fl.String("principal-groups", "", "comma-separated ACL groups of --principal")
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile of the session to this file (runtime/pprof)")
	memProfile := fl.String("memprofile", "", "write an allocation profile to this file when the session ends (runtime/pprof)")
	admin := fl.Bool("admin", false, "give the stdio caller the job tool (start index under --root, flush, compact, archive, promote jobs; follow or cancel them)")
	mf := addMCPFlags(fl, "")
	fl.Usage = func() {
		fmt.Fprintf(fl.Output(), "usage: searchd mcp [flags]\n\nServe the search, read, find_definition, list and repo_map tools over MCP (stdio).\n\n")
		fl.PrintDefaults()
	}
	if pos, err := parseArgs(fl, args); err != nil {
		return err
	} else if len(pos) != 0 {
		fl.Usage()
		return fmt.Errorf("mcp: unexpected arguments %q", pos)
	}
	o, err := mf.options(*data)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	if o.Graph, err = loadGraph(*data, o.Collection); err != nil { // graph.go: `searchd index --graph`
		return fmt.Errorf("mcp: %w", err)
	}
	if *principal != "" {
		o.Principal = &contract.Principal{Name: *principal, Namespaces: splitList(*pns), Groups: splitList(*groups)}
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if *describe {
		s, err := mcp.New(nil, o, logger)
		if err != nil {
			return err
		}
		shown, _ := s.DefinitionsFor(*admin)
		fmt.Printf("%s\n", shown)
		defs, tokens := s.Definitions()
		fmt.Printf("tool definitions: %d tools, %d bytes, %d tokens (⌈bytes/%d⌉, the staging estimate; ceiling %d)\n",
			len(s.ToolNames()), len(defs), tokens, contract.DefaultBytesPerToken, mcp.MaxDefinitionTokens)
		adefs, atokens := s.DefinitionsFor(true)
		fmt.Printf("for an admin caller, with the job tool (%s): %d tools, %d bytes, %d tokens\n",
			strings.Join(s.AdminToolNames(), ", "), len(s.ToolNames())+len(s.AdminToolNames()), len(adefs), atokens)
		sizes, err := mcp.DefinitionSizes(o)
		if err != nil {
			return err
		}
		fmt.Printf("by tool family (code graph: search expand, find_definition calls; memory as serve --memory-collection adds it; admin: the job tool), ceiling %d tokens:\n", mcp.MaxDefinitionTokens)
		for _, z := range sizes {
			fam, who := "core", "ordinary"
			if z.Graph {
				fam += "+graph"
			}
			if z.Memory {
				fam += "+memory"
			}
			if z.Admin {
				who = "admin"
			}
			fmt.Printf("  %-18s %-8s %2d tools %5d bytes %5d tokens\n", fam, who, z.Tools, z.Bytes, z.Tokens)
		}
		return nil
	}
	db, _, err := openCollection(*data, o.Collection, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if *admin {
		// The job runner of `searchd serve` (durable jobs under
		// DATA/server/jobs), without its HTTP side; index jobs are
		// confined to the MCP roots.
		jobs, err := server.New(db, server.Options{DataDir: *data, IndexRoots: o.Roots, Logger: logger})
		if err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
		defer jobs.Close()
		o.Jobs, o.Admin = jobs, true
	}
	s, err := mcp.New(db, o, logger)
	if err != nil {
		return err
	}
	s.Warm()
	stopProfiles, err := startProfiles(*cpuProfile, *memProfile)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	defer stopProfiles()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := s.RunStdio(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// mountMCP is serve's setup hook: the MCP tools over streamable HTTP at
// /mcp, behind the JSON API's keys (each key's principal is the caller).
func mountMCP(mf *mcpFlags, dataDir string, g *graph.Store, logger *slog.Logger) func(*server.Server) error {
	return func(srv *server.Server) error {
		o, err := mf.options(dataDir)
		if err != nil {
			return fmt.Errorf("serve: mcp: %w", err)
		}
		o.Graph = g  // the server's store, which its index jobs update
		o.Jobs = srv // admin keys get the job tool
		s, err := mcp.New(srv.DB(), o, logger)
		if err != nil {
			return fmt.Errorf("serve: mcp: %w", err)
		}
		if memoryStore != nil { // --memory-collection (memory.go)
			if err := s.EnableMemory(mcp.MemoryOptions{Store: memoryStore}); err != nil {
				return fmt.Errorf("serve: mcp: %w", err)
			}
		}
		s.Warm()
		srv.Mount("/mcp", s.HTTPHandler(mcp.HTTPOptions{
			Authenticate: func(r *http.Request) (mcp.Caller, bool) {
				p, admin := server.CallerOf(r.Context())
				return mcp.Caller{Principal: p, Admin: admin}, true
			},
			HostCheckedUpstream: true,
		}))
		logger.Info("searchd serve: MCP (streamable HTTP) at /mcp", "collection", o.Collection, "roots", strings.Join(o.Roots, ", "))
		return nil
	}
}

// startProfiles starts a CPU profile into cpu and arranges an allocation
// profile into mem (either "" for none); the returned function stops the
// CPU profile and writes the allocation profile.
func startProfiles(cpu, mem string) (func(), error) {
	var cf *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		cf = f
	}
	return func() {
		if cf != nil {
			pprof.StopCPUProfile()
			cf.Close()
		}
		if mem != "" {
			if f, err := os.Create(mem); err == nil {
				runtime.GC()
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}
	}, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
