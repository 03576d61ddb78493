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
// the admin-only job tool. tools/list carries the same tools ordered by
// name.
func (s *Server) Definitions() (json.RawMessage, int) { return s.DefinitionsFor(false) }

// DefinitionsFor is Definitions for an admin caller (admin true: the job
// tool too) or an ordinary one.
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

// AdminToolNames lists the admin-only tools (the job tool).
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
// every optional tool family registered (the code-graph arguments, the
// memory tools), for an ordinary caller and for an admin one (the job tool
// too),
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

// DefinitionSize is the size of one caller's tool definitions on a server
// with some of the optional families.
type DefinitionSize struct {
	Graph, Memory bool // the code-graph arguments, the memory tools
	Admin         bool // an admin caller: the job tool too
	Tools         int
	Bytes, Tokens int // as Definitions counts them
}

// DefinitionSizes returns the sizes of the definitions of a server
// configured as o, for every combination of the optional families (none,
// code graph, memory, both) and, for each, both callers (ordinary, then
// admin); the last is FullDefinitions' admin figure. No store is opened. Errors:
// invalid options.
func DefinitionSizes(o Options) ([]DefinitionSize, error) {
	var out []DefinitionSize
	for _, fam := range []struct{ graph, memory bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		oo := o
		oo.Graph = nil
		if fam.graph {
			oo.Graph = graph.NewStore(graph.FromFragments(nil)) // registration only
		}
		s, err := New(nil, oo, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		if fam.memory {
			s.registerMemoryTools()
		}
		for _, admin := range []bool{false, true} {
			defs, tokens := s.DefinitionsFor(admin)
			n := len(s.ToolNames())
			if admin {
				n += len(s.AdminToolNames())
			}
			out = append(out, DefinitionSize{Graph: fam.graph, Memory: fam.memory, Admin: admin, Tools: n, Bytes: len(defs), Tokens: tokens})
		}
	}
	return out, nil
}
