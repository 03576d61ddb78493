package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stratasearch/strata/engine/memory"
)

// allToolsServer is a Server with every optional tool family enabled:
// the graph tools, the memory tools and the job tools.
func allToolsServer(t *testing.T) *Server {
	t.Helper()
	root, db := fixture(t)
	st := graphFixture(t, root)
	js := jobServer(t, db, t.TempDir(), root)
	t.Cleanup(func() { js.Close() })
	s := newServer(t, db, root, func(o *Options) { o.Graph = st; o.Jobs = js })
	col, err := db.CreateCollection("memory", memory.CollectionOptions(4))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := memory.Open(context.Background(), col, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnableMemory(MemoryOptions{Store: ms, Subject: "u"}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDefinitionsBudgetAllTools: with the graph, memory and job tools all
// registered, the definitions an ordinary caller sees stay within
// MaxDefinitionTokens, and FullDefinitions reports the same figures. The
// admin caller's set (the seven job tools added) is logged, not bounded.
func TestDefinitionsBudgetAllTools(t *testing.T) {
	s := allToolsServer(t)
	if n := len(s.ToolNames()); n != 12 {
		t.Fatalf("%d ordinary tools, want 12 (5 core, 3 graph, 4 memory): %v", n, s.ToolNames())
	}
	defs, tokens := s.Definitions()
	adefs, atokens := s.DefinitionsFor(true)
	t.Logf("ordinary caller: %d tools, %d bytes, %d tokens; admin: %d tools, %d bytes, %d tokens",
		len(s.ToolNames()), len(defs), tokens, len(s.ToolNames())+len(s.AdminToolNames()), len(adefs), atokens)
	if tokens > MaxDefinitionTokens {
		t.Errorf("the ordinary caller's definitions cost %d tokens, ceiling %d", tokens, MaxDefinitionTokens)
	}
	// FullDefinitions (searchd mcp --describe) registers the same set
	// without a store.
	fdefs, ftokens, fadmin, fatokens, err := FullDefinitions(Options{Roots: []string{"/r"}})
	if err != nil {
		t.Fatal(err)
	}
	if ftokens != tokens || len(fdefs) != len(defs) || fatokens != atokens || len(fadmin) != len(adefs) {
		t.Errorf("FullDefinitions: %d tokens (%d bytes), admin %d (%d bytes); the server: %d (%d), admin %d (%d)",
			ftokens, len(fdefs), fatokens, len(fadmin), tokens, len(defs), atokens, len(adefs))
	}
}

// TestSchemasNoDuplicateKeys: no JSON object in any tool's input or output
// schema repeats a key (a repeated key is silently the last one to most
// parsers, so the schema would not say what its text shows).
func TestSchemasNoDuplicateKeys(t *testing.T) {
	s := allToolsServer(t)
	for _, tl := range s.tools {
		for what, sch := range map[string]any{"input": tl.def.InputSchema, "output": tl.def.OutputSchema} {
			if err := noDuplicateKeys(sch.(json.RawMessage)); err != nil {
				t.Errorf("%s %s schema: %v", tl.def.Name, what, err)
			}
		}
	}
}

func noDuplicateKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key := k.(string)
				if seen[key] {
					return fmt.Errorf("key %q repeated", key)
				}
				seen[key] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	return walk()
}
