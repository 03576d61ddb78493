package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

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
func mountMemory(name string, dim int, logger *slog.Logger) func(*server.Server) error {
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
		logger.Info("searchd serve: memory at /v1/memory", "collection", name, "records", st.Len())
		return nil
	}
}
