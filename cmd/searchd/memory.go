package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/embed/static"
	"github.com/stratasearch/strata/engine/memory"
	"github.com/stratasearch/strata/server"
)

// memoryStore is the memory store `searchd serve --memory-collection`
// opened (nil without the flag); mountMCP gives it to the MCP tools.
var memoryStore *memory.Store

// memoryConfig is serve's --memory-* flags.
type memoryConfig struct {
	name          string // --memory-collection; "" = no memory store
	embedder      string // embedderBuiltin or embedderNone
	dim           int    // vector dimension with embedderNone
	retention     memoryRetention
	maintainEvery time.Duration
}

// collectionOptions are the options of the collection mountMemory creates:
// memory.CollectionOptions with the built-in embedder's dimension and
// model (serve registers that embedder, so text is embedded on write and
// recall is hybrid), or with c.dim and no embedder.
func (c memoryConfig) collectionOptions() (engine.CollectionOptions, error) {
	switch c.embedder {
	case embedderBuiltin:
		o := memory.CollectionOptions(static.BuiltinDim)
		o.Embedding = &engine.EmbeddingConfig{Model: static.BuiltinModel, Dim: static.BuiltinDim}
		return o, nil
	case embedderNone:
		return memory.CollectionOptions(c.dim), nil
	}
	return engine.CollectionOptions{}, fmt.Errorf("serve: --memory-embedder %q: want %s or %s", c.embedder, embedderBuiltin, embedderNone)
}

// memoryRetention is --memory-retention: KIND=TTL[,CAPACITY] per kind.
type memoryRetention map[memory.Kind]memory.Retention

func (m memoryRetention) String() string {
	var parts []string
	for k, r := range m {
		parts = append(parts, fmt.Sprintf("%s=%v,%d", k, r.TTL, r.Capacity))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func (m memoryRetention) Set(v string) error {
	kind, rest, ok := strings.Cut(v, "=")
	k := memory.Kind(strings.TrimSpace(kind))
	if !ok || !k.Valid() {
		return fmt.Errorf("want KIND=TTL[,CAPACITY] with KIND one of preference, fact, lesson, episode, note; got %q", v)
	}
	ttlS, capS, hasCap := strings.Cut(rest, ",")
	var r memory.Retention
	if ttlS = strings.TrimSpace(ttlS); ttlS != "" && ttlS != "0" {
		d, err := time.ParseDuration(ttlS)
		if err != nil || d < 0 {
			return fmt.Errorf("%q: TTL %q is not a non-negative duration (e.g. 720h)", v, ttlS)
		}
		r.TTL = d
	}
	if hasCap {
		n, err := strconv.Atoi(strings.TrimSpace(capS))
		if err != nil || n < 0 {
			return fmt.Errorf("%q: CAPACITY %q is not a non-negative integer", v, capS)
		}
		r.Capacity = n
	}
	m[k] = r
	return nil
}

// mountMemory is serve's setup hook for --memory-collection: it opens (or
// creates, with c.collectionOptions) the collection, opens a memory.Store
// over it with c.retention as the policy's retention, and serves the
// /v1/memory routes; the MCP mount then adds the remember, recall and
// forget tools. With c.maintainEvery > 0 the background job
// (memory.Store.Maintain: consolidation, retention, changed sources,
// purge) runs at that interval until ctx is done; a pass cut short by
// shutdown fails with the collection's closed error, which is logged.
func mountMemory(ctx context.Context, c memoryConfig, logger *slog.Logger) func(*server.Server) error {
	return func(srv *server.Server) error {
		name := c.name
		if name == "" {
			return nil
		}
		db := srv.DB()
		col, err := db.Collection(name)
		if errors.Is(err, engine.ErrNotFound) {
			var co engine.CollectionOptions
			if co, err = c.collectionOptions(); err == nil {
				col, err = db.CreateCollection(name, co)
			}
		}
		if err != nil {
			return fmt.Errorf("serve: memory collection %q: %w", name, err)
		}
		st, err := memory.Open(context.Background(), col, memory.Options{Policy: memory.Policy{Retention: c.retention}})
		if err != nil {
			return fmt.Errorf("serve: memory collection %q: %w", name, err)
		}
		srv.EnableMemory(st)
		memoryStore = st
		if c.maintainEvery > 0 {
			go func() {
				_ = st.Maintain(ctx, memory.MaintainOptions{Interval: c.maintainEvery, Report: func(rep memory.MaintainReport, err error) {
					if err != nil {
						logger.Warn("searchd serve: memory maintenance", "err", err)
						return
					}
					logger.Info("searchd serve: memory maintenance", "merged", len(rep.Consolidated.Merged), "expired", len(rep.Expired.Deleted),
						"source_changed", len(rep.SourceChanged.Deleted), "purged", !rep.Purged.Skipped)
				}})
			}()
		}
		logger.Info("searchd serve: memory at /v1/memory", "collection", name, "records", st.Len())
		return nil
	}
}
