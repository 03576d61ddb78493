// Command mcp-session measures an agent-style MCP session against
// `searchd mcp` over stdio, as a model would issue it: repo_map, task-style
// searches, a read of a hit, find_definition of a name seen in it. For each
// tool it reports the tokens returned (the text content a model reads, in
// staging's estimate ⌈bytes/4⌉), the first call's latency and the p50/p99
// latency of N further calls, measured at the client (JSON-RPC over the
// pipes included), after the server's warm-up (store open, first search,
// tree catalog: until list and search both answer), which it reports
// apart; then, with --floor, the same searches in-process straight to
// Collection.Search, the engine's floor on the same host.
//
//	go build -o /tmp/searchd ./cmd/searchd
//	/tmp/searchd index $(go env GOROOT)/src --data /tmp/goroot-store
//	go run ./bench/cmd/mcp-session --searchd /tmp/searchd --data /tmp/goroot-store --calls 200
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

var queries = []string{
	"export times out for large accounts",
	"http client request timeout deadline exceeded",
	"parse RFC 3339 timestamp with time zone",
	"gzip reader checksum error",
	"json decoder unknown field error",
	"retry temporary network error dial",
}

type step struct {
	tool  string
	args  func(i int) map[string]any
	first time.Duration
	lat   []time.Duration
	toks  []int
}

func main() {
	bin := flag.String("searchd", "searchd", "searchd binary")
	data := flag.String("data", "./strata-data", "store indexed with `searchd index`")
	calls := flag.Int("calls", 200, "measured calls per tool (after the first)")
	demo := flag.Bool("demo", false, "list the tools and make one call (make demo), then exit")
	floor := flag.Bool("floor", true, "after the session, make the same searches in-process straight to Collection.Search (no MCP, no staging): the engine's floor on this host")
	flag.Parse()
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "mcp-session", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(*bin, "mcp", "--data", *data)}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	// Start-up: the server opens the store and warms it (its first search,
	// the indexed tree); wait until a tree tool and a search both answer.
	t0 := time.Now()
	ready := map[string]bool{}
	for !ready["list"] || !ready["search"] {
		for tool, args := range map[string]map[string]any{"list": {"limit": 1}, "search": {"query": "warm", "top_k": 1}} {
			if ready[tool] {
				continue
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				log.Fatal(err)
			}
			ready[tool] = !res.IsError
			if !res.IsError {
				fmt.Fprintf(os.Stderr, "warm-up: %s answers after %s\n", tool, round(time.Since(t0)))
			} else if time.Since(t0) > 2*time.Minute {
				log.Fatalf("the server did not warm up: %s", text(res))
			}
		}
		if !ready["list"] || !ready["search"] {
			time.Sleep(100 * time.Millisecond)
		}
	}
	warm := time.Since(t0)
	if *demo {
		runDemo(ctx, cs)
		return
	}

	call := func(tool string, args map[string]any) (*sdk.CallToolResult, time.Duration, int) {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		el := time.Since(t0)
		if err != nil {
			log.Fatalf("%s %v: %v", tool, args, err)
		}
		n := 0
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				n += len(tc.Text)
			}
		}
		if res.IsError {
			log.Fatalf("%s %v: tool error %s", tool, args, text(res))
		}
		return res, el, (n + 3) / 4
	}

	// The session: what a model would do, deriving each step from the last.
	res, _, _ := call("search", map[string]any{"query": queries[0], "top_k": 5})
	hit := res.StructuredContent.(map[string]any)["hits"].([]any)[0].(map[string]any)
	uri := hit["source_uri"].(string)
	res, _, _ = call("read", map[string]any{"uri": uri})
	name := identifier(text(res))
	fmt.Fprintf(os.Stderr, "session: search %q → %s; read it; find_definition %q\n", queries[0], uri, name)

	steps := []*step{
		{tool: "repo_map", args: func(int) map[string]any { return map[string]any{} }},
		{tool: "search", args: func(i int) map[string]any { return map[string]any{"query": queries[i%len(queries)], "top_k": 5} }},
		{tool: "read", args: func(int) map[string]any { return map[string]any{"uri": uri} }},
		{tool: "find_definition", args: func(int) map[string]any { return map[string]any{"symbol": name} }},
		{tool: "list", args: func(int) map[string]any { return map[string]any{"path": "net/http", "limit": 50} }},
	}
	for _, s := range steps {
		_, s.first, _ = call(s.tool, s.args(0))
	}
	for i := 0; i < *calls; i++ {
		for _, s := range steps {
			_, el, tok := call(s.tool, s.args(i))
			s.lat = append(s.lat, el)
			s.toks = append(s.toks, tok)
		}
	}
	fmt.Printf("revision %s over stdio; %d calls per tool after the first, Go %s, %s/%s, GOMAXPROCS=%d; server warm-up (store open, first search, tree catalog) %s\n\n",
		cs.InitializeResult().ProtocolVersion, *calls, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), round(warm))
	fmt.Println("| step | tool | tokens returned (min / median / max) | first call | p50 | p99 |")
	fmt.Println("|---|---|---|---|---|---|")
	for i, s := range steps {
		fmt.Printf("| %d | %s | %d / %d / %d | %s | %s | %s |\n", i+1, s.tool, slices.Min(s.toks), pct(s.toks, 50), slices.Max(s.toks),
			round(s.first), round(pct(s.lat, 50)), round(pct(s.lat, 99)))
	}
	if !*floor {
		return
	}
	// The server holds the store's lock: end it before opening the store.
	cs.Close()
	runFloor(*data, name, *calls)
}

// runFloor makes the session's search and find_definition queries
// in-process, straight to Collection.Search, as the tools build them
// (lexical, the names filter for find_definition; scope and principal
// empty: the trusted caller), interleaved as in the session.
func runFloor(data, name string, calls int) {
	ctx := context.Background()
	db, err := engine.Open(data, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	col, err := db.Collection("code")
	if err != nil {
		log.Fatal(err)
	}
	scanCost(ctx, col)
	search := func(i int) contract.Query {
		return contract.Query{Text: queries[i%len(queries)], Mode: contract.Lexical, TopK: 5}
	}
	f := contract.In(ingest.MetaNames, contract.String(name))
	def := func(int) contract.Query {
		return contract.Query{Text: name, Mode: contract.Lexical, TopK: 5, Filter: &f}
	}
	for i := range 3 { // warm: the first search after open loads the segment indexes
		if _, err := col.Search(ctx, search(i)); err != nil {
			log.Fatal(err)
		}
	}
	kinds := []struct {
		name string
		q    func(int) contract.Query
		lat  []time.Duration
	}{{name: "search", q: search}, {name: "find_definition", q: def}}
	for i := 0; i < calls; i++ {
		for k := range kinds {
			t0 := time.Now()
			if _, err := col.Search(ctx, kinds[k].q(i)); err != nil {
				log.Fatal(err)
			}
			kinds[k].lat = append(kinds[k].lat, time.Since(t0))
		}
	}
	fmt.Printf("\nfloor: the same queries in-process to Collection.Search (no MCP, no staging), %d calls each\n\n", calls)
	fmt.Println("| query | p50 | p99 | max |")
	fmt.Println("|---|---|---|---|")
	for _, k := range kinds {
		fmt.Printf("| %s | %s | %s | %s |\n", k.name, round(pct(k.lat, 50)), round(pct(k.lat, 99)), round(slices.Max(k.lat)))
	}
}

func pct[T int | time.Duration](xs []T, p int) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func round(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// identifier picks a name a model would look up next: the first exported
// identifier called in the read span ("Name(").
var callRE = regexp.MustCompile(`\b([A-Z][A-Za-z0-9_]+)\(`)

func identifier(s string) string {
	if m := callRE.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return "NewRequest"
}

// runDemo lists the tools with their sizes and shows one call's framed
// result, as a model would see it.
func runDemo(ctx context.Context, cs *sdk.ClientSession) {
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("tools (revision %s over stdio):\n", cs.InitializeResult().ProtocolVersion)
	for _, t := range lt.Tools {
		fmt.Printf("  %-16s %s\n", t.Name, t.Description)
	}
	args := map[string]any{"symbol": "EqualFold", "top_k": 2}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "find_definition", Arguments: args})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\ntools/call find_definition %v (isError %v):\n%s", args, res.IsError, text(res))
}

// scanCost times what reading the indexed tree's catalog costs: the
// metadata of every live document, once by IDs and GetVerifiable per id
// (content included; how the catalog was read before) and once by
// Snapshot.ScanMeta decoding the three keys the catalog uses, reporting
// wall and process CPU time of each (CPU is what a loaded host cannot
// inflate) and the bytes and allocations it made.
func scanCost(ctx context.Context, col *engine.Collection) {
	sn, err := col.Snapshot()
	if err != nil {
		log.Fatal(err)
	}
	defer sn.Close()
	keys := []string{ingest.MetaSymbol, ingest.MetaKind, ingest.MetaNames}
	type cost struct {
		wall, cpu     time.Duration
		bytes, allocs uint64
	}
	measure := func(f func()) cost {
		var m0, m1 runtime.MemStats
		runtime.GC() // start from a collected heap: no phase pays for another's garbage
		runtime.ReadMemStats(&m0)
		w0, c0 := time.Now(), cpuTime()
		f()
		c := cost{wall: time.Since(w0), cpu: cpuTime() - c0}
		runtime.ReadMemStats(&m1)
		c.bytes, c.allocs = m1.TotalAlloc-m0.TotalAlloc, m1.Mallocs-m0.Mallocs
		return c
	}
	fmt.Printf("\ncatalog read (every live document's metadata), 3 rounds\n\n| round | documents | IDs + GetVerifiable: wall / CPU / allocated | ScanMeta: wall / CPU / allocated |\n|---|---|---|---|\n")
	for r := 1; r <= 3; r++ {
		n := 0
		get := measure(func() {
			ids := sn.IDs()
			n = len(ids)
			for _, id := range ids {
				if _, _, err := sn.GetVerifiable(ctx, id); err != nil {
					log.Fatal(err)
				}
			}
		})
		scan := measure(func() {
			err := sn.ScanMeta(ctx, func(d *engine.DocMeta) bool {
				for _, k := range keys {
					if _, _, err := d.Value(k); err != nil {
						log.Fatal(err)
					}
				}
				return true
			})
			if err != nil {
				log.Fatal(err)
			}
		})
		fmt.Printf("| %d | %d | %s / %s / %.1f MiB in %d allocations | %s / %s / %.1f MiB in %d allocations |\n", r, n,
			round(get.wall), round(get.cpu), float64(get.bytes)/(1<<20), get.allocs, round(scan.wall), round(scan.cpu), float64(scan.bytes)/(1<<20), scan.allocs)
	}
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
