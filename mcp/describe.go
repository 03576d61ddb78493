package mcp

import (
	"encoding/json"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
)

// MaxDefinitionTokens is the ceiling on the tool definitions' size: all of
// them, as tools/list returns them, in staging's token estimate.
const MaxDefinitionTokens = 1500

// Definitions returns the tool definitions as tools/list carries them (a
// JSON array of tools) and their size in tokens, counted as staging counts
// (⌈bytes / contract.DefaultBytesPerToken⌉).
// These are the tools an ordinary caller sees; DefinitionsFor(true) adds
// the admin-only job tools.
func (s *Server) Definitions() (json.RawMessage, int) { return s.DefinitionsFor(false) }

// DefinitionsFor is Definitions for an admin caller (admin true: the job
// tools too) or an ordinary one.
func (s *Server) DefinitionsFor(admin bool) (json.RawMessage, int) {
	defs := []*sdk.Tool{}
	for _, t := range s.tools {
		if !t.admin || admin {
			defs = append(defs, t.def)
		}
	}
	b, _ := json.Marshal(defs)
	return b, (len(b) + contract.DefaultBytesPerToken - 1) / contract.DefaultBytesPerToken
}

// ToolNames lists the tools an ordinary caller sees, in registration
// order; AdminToolNames the admin-only ones.
func (s *Server) ToolNames() []string { return s.toolNames(false) }

// AdminToolNames lists the admin-only job tools.
func (s *Server) AdminToolNames() []string { return s.toolNames(true) }

func (s *Server) toolNames(admin bool) []string {
	var names []string
	for _, t := range s.tools {
		if t.admin == admin {
			names = append(names, t.def.Name)
		}
	}
	return names
}

// FullDefinitions returns the definitions of a server configured as o with
// every optional tool family registered (the code-graph tools, the memory
// tools), for an ordinary caller and for an admin one (the job tools too),
// with their sizes in tokens as Definitions counts them: the most any
// client of such a server is shown. No store is opened. Errors: invalid
// options.
func FullDefinitions(o Options) (ordinary json.RawMessage, ordinaryTokens int, admin json.RawMessage, adminTokens int, err error) {
	if o.Graph == nil {
		o.Graph = graph.NewStore(graph.FromFragments(nil)) // registration only
	}
	s, err := New(nil, o, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, 0, nil, 0, err
	}
	s.registerMemoryTools()
	ordinary, ordinaryTokens = s.DefinitionsFor(false)
	admin, adminTokens = s.DefinitionsFor(true)
	return ordinary, ordinaryTokens, admin, adminTokens, nil
}
