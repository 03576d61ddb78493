package mcp

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
)

// Ceilings and defaults of Options.
const (
	// MaxTopK is the hard ceiling of a search or find_definition page: a
	// configured Options.MaxTopK above it is clamped to it.
	MaxTopK = 50
	// DefaultTopK is a page's size when the model gives no top_k.
	DefaultTopK = 10
	// DefaultTokenBudget is the token budget of one tool result's framed
	// text (search, find_definition, read, list, repo_map), counted as
	// staging counts (contract.DefaultBytesPerToken bytes per token).
	DefaultTokenBudget = 2000
	// DefaultMaxTokensPerHit is S_max of one search hit's body.
	DefaultMaxTokensPerHit = 400
	// DefaultDeadline is one tool call's time budget.
	DefaultDeadline = 2 * time.Second
	// DefaultListLimit and MaxListLimit are list's page sizes.
	DefaultListLimit = 100
	MaxListLimit     = 500
)

// Options configures a Server: everything a model may not choose. Tool
// arguments carry only the query, mode, filter, top_k, cursor and the
// span or directory to show; the scope, ceilings, deadline and principal
// below are filled in by the Server and no argument can widen them.
type Options struct {
	// Collection is the collection the tools search and read. Default
	// "code" (the collection `searchd index` writes).
	Collection string
	// Roots are the directories (absolute) that read, list and repo_map
	// are confined to, compared after resolving symbolic links on both
	// sides; a file must also be indexed (have documents in Collection
	// that the caller may read) to be read or listed. A file://
	// source URI of a document alone never widens them. Empty: read, list
	// and repo_map find nothing. Default none.
	Roots []string
	// Namespace, when set, is the namespace prefix every query is
	// confined to (contract.Scope.Namespace), on top of the caller's
	// principal. Default "" (the principal's namespaces).
	Namespace string
	// Principal is who a caller without credentials of its own runs as:
	// the stdio transport's caller. nil is the trusted embedded caller
	// (every namespace). Over HTTP each request's API key gives its
	// principal (HTTPHandler). Default nil.
	Principal *contract.Principal
	// MaxTopK is the largest top_k a call may ask for (1..MaxTopK; a
	// larger value is clamped to MaxTopK). Default MaxTopK.
	MaxTopK int
	// TokenBudget is the token budget of one result's framed text (≥ 100).
	// Default DefaultTokenBudget.
	TokenBudget int
	// MaxTokensPerHit is S_max of one search hit (≥ 10). Default
	// DefaultMaxTokensPerHit.
	MaxTokensPerHit int
	// Deadline is one tool call's time budget: the search's
	// contract.Query.Budget and the call's context deadline (> 0). Default
	// DefaultDeadline.
	Deadline time.Duration
	// Jobs, when set, is the job runner behind the admin-only job tool
	// (index, flush, compact, archive and promote jobs, followed and
	// cancelled by id; jobs.go); jobs work on Collection, and index only
	// under Roots.
	// nil: no job tool. Default nil.
	Jobs Jobs
	// Admin makes the caller without credentials of its own (the stdio
	// transport's, Options.Principal) an admin: it sees and may call the
	// job tool. Over HTTP each request's API key says. Default false.
	Admin bool
	// Graph, when set, is the code graph of Collection (package
	// ingest/codegraph builds it): the tools expand, callers and callees
	// answer over its current view. nil: no graph tools. Default nil.
	Graph *graph.Store
}

// EnsureDefaults fills zero fields and clamps MaxTopK to MaxTopK.
func (o *Options) EnsureDefaults() {
	if o.Collection == "" {
		o.Collection = "code"
	}
	if o.MaxTopK == 0 || o.MaxTopK > MaxTopK {
		o.MaxTopK = MaxTopK
	}
	if o.TokenBudget == 0 {
		o.TokenBudget = DefaultTokenBudget
	}
	if o.MaxTokensPerHit == 0 {
		o.MaxTokensPerHit = DefaultMaxTokensPerHit
	}
	if o.Deadline == 0 {
		o.Deadline = DefaultDeadline
	}
}

// Validate reports every problem with o (call after EnsureDefaults).
func (o *Options) Validate() error {
	var errs []error
	for _, r := range o.Roots {
		if !filepath.IsAbs(r) {
			errs = append(errs, fmt.Errorf("mcp: option Roots: %q is not an absolute path", r))
		}
	}
	if o.MaxTopK < 1 {
		errs = append(errs, fmt.Errorf("mcp: option MaxTopK = %d, want 1..%d", o.MaxTopK, MaxTopK))
	}
	if o.TokenBudget < 100 {
		errs = append(errs, fmt.Errorf("mcp: option TokenBudget = %d, want ≥ 100", o.TokenBudget))
	}
	if o.MaxTokensPerHit < 10 {
		errs = append(errs, fmt.Errorf("mcp: option MaxTokensPerHit = %d, want ≥ 10", o.MaxTokensPerHit))
	}
	if o.Deadline <= 0 {
		errs = append(errs, fmt.Errorf("mcp: option Deadline = %v, want > 0", o.Deadline))
	}
	if o.Namespace != "" && strings.TrimSpace(o.Namespace) != o.Namespace {
		errs = append(errs, fmt.Errorf("mcp: option Namespace %q has surrounding spaces", o.Namespace))
	}
	return errors.Join(errs...)
}
