// Command strata-reqpath serves the HTTP/JSON API over an existing store
// in-process (server.Run, as `searchd serve` does, access log at info to
// stderr) and writes a CPU and an allocation profile of the serving
// process, so a load client in another process (wrk with
// bench/load/search.lua) can be profiled against it:
//
//	strata-reqpath --data /tmp/rp/data --addr 127.0.0.1:17790 --duration 25s \
//	    --cpuprofile /tmp/rp/server-cpu.prof --memprofile /tmp/rp/server-mem.prof 2>/dev/null &
//	STRATA_QUERIES=q.txt wrk -t2 -c8 -d20s --latency -s bench/load/search.lua http://127.0.0.1:17790
//
// With --api-keys FILE (searchd serve's format) every request needs a key
// (STRATA_API_KEY for search.lua) and searches carry its principal.
//
// The CPU profile covers --duration from start (the server is up within
// its first second); the allocation profile is written at the end. The
// server shuts down gracefully after --duration.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/stratasearch/strata/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "strata-reqpath:", err)
		os.Exit(1)
	}
}

func run() error {
	data := flag.String("data", "", "store directory (searchd index … --data DIR)")
	addr := flag.String("addr", "127.0.0.1:17790", "listen address")
	dur := flag.Duration("duration", 25*time.Second, "how long to serve (and profile)")
	cpu := flag.String("cpuprofile", "", "CPU profile output file")
	mem := flag.String("memprofile", "", "allocation profile output file")
	keys := flag.String("api-keys", "", "API keys file, as searchd serve --api-keys (every search then has a principal)")
	flag.Parse()
	if *data == "" {
		return fmt.Errorf("--data is required")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	fmt.Fprintf(os.Stdout, "serving %s on %s for %v (GOMAXPROCS %d)\n", *data, ln.Addr(), *dur, runtime.GOMAXPROCS(0))
	o := server.Options{DataDir: *data, Logger: logger}
	if *keys != "" {
		if o.APIKeys, err = server.LoadAPIKeys(*keys); err != nil {
			return err
		}
	}
	if err := server.Run(ctx, ln, o); err != nil {
		return err
	}
	if *mem != "" {
		f, err := os.Create(*mem)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return err
		}
	}
	return nil
}
