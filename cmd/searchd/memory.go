package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/memory"
	"github.com/stratasearch/strata/server"
)

// memoryStore is the memory store `searchd serve --memory-collection`
// opened (nil without the flag); mountMCP gives it to the MCP tools.
var memoryStore *memory.Store

// mountMemory is serve's setup hook for --memory-collection NAME: it
// opens (or creates, with memory.CollectionOptions(dim)) the collection,
// opens a memory.Store over it and serves the /v1/memory routes; the MCP
// mount then adds the remember, recall, forget and memory_history tools.
// With maintainEvery > 0 the background job (memory.Store.Maintain:
// consolidation, retention, changed sources, purge) runs at that interval
// until ctx is done; a pass cut short by shutdown fails with the
// collection's closed error, which is logged.
func mountMemory(ctx context.Context, name string, dim int, maintainEvery time.Duration, logger *slog.Logger) func(*server.Server) error {
	return func(srv *server.Server) error {
		if name == "" {
			return nil
		}
		db := srv.DB()
		col, err := db.Collection(name)
		if errors.Is(err, engine.ErrNotFound) {
			col, err = db.CreateCollection(name, memory.CollectionOptions(dim))
		}
		if err != nil {
			return fmt.Errorf("serve: memory collection %q: %w", name, err)
		}
		st, err := memory.Open(context.Background(), col, memory.Options{})
		if err != nil {
			return fmt.Errorf("serve: memory collection %q: %w", name, err)
		}
		srv.EnableMemory(st)
		memoryStore = st
		if maintainEvery > 0 {
			go func() {
				_ = st.Maintain(ctx, memory.MaintainOptions{Interval: maintainEvery, Report: func(rep memory.MaintainReport, err error) {
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
