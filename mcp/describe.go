package mcp

import (
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stratasearch/strata/engine/contract"
)

// MaxDefinitionTokens is the ceiling on the tool definitions' size: all of
// them, as tools/list returns them, in staging's token estimate.
const MaxDefinitionTokens = 1500

// Definitions returns the tool definitions as tools/list carries them (a
// JSON array of tools) and their size in tokens, counted as staging counts
// (⌈bytes / contract.DefaultBytesPerToken⌉).
func (s *Server) Definitions() (json.RawMessage, int) {
	defs := make([]*sdk.Tool, len(s.tools))
	for i, t := range s.tools {
		defs[i] = t.def
	}
	b, _ := json.Marshal(defs)
	return b, (len(b) + contract.DefaultBytesPerToken - 1) / contract.DefaultBytesPerToken
}

// ToolNames lists the registered tools in registration order.
func (s *Server) ToolNames() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.def.Name
	}
	return names
}
