package engine

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// Tenancy rules on writes. A write made As a principal (the server's API
// key) follows the rules a multi-tenant front needs, checked and applied
// as one atomic step under the collection's write lock (no other write of
// any id runs in between, whoever makes it):
//
//   - every document it upserts must be in a namespace the principal may
//     name (contract.Principal.AllowsNamespace), else NamespaceError;
//   - a stored document the principal cannot read (another namespace, or
//     an ACL that names neither it nor its groups) is, for that write,
//     exactly an absent one: an IfMatch expectation compares against ""
//     (ConflictError), an upsert of its id fails with IDUnavailableError
//     (ids are one key space per collection), and a Delete skips it
//     (neither deleted nor counted; no existence leak).
//
// A nil principal (no As) is the trusted embedded caller: no namespace or
// visibility check, every stored version visible.

// Errors of tenancy-checked and conditional writes; the typed errors
// below satisfy errors.Is with them.
var (
	// ErrIDUnavailable: an upsert As a principal names an id held by a
	// document the principal cannot read.
	ErrIDUnavailable = errors.New("engine: id not available to the principal")
	// ErrNamespaceForbidden: an upsert As a principal writes a namespace
	// the principal may not name.
	ErrNamespaceForbidden = errors.New("engine: namespace not allowed to the principal")
)

// ConflictError is the error of a write whose IfMatch expectation failed
// (errors.Is(err, ErrConflict)). Nothing of the batch was written.
type ConflictError struct {
	// Index is the position in the batch (Upsert: documents; Delete: ids)
	// of the first entry with ID, or -1 when ID is not in the batch.
	Index int
	// ID is the document id whose version differs.
	ID string
	// Expected is the version hash the caller expected ("" = absent).
	Expected string
	// Current is the version hash the writer sees now: "" when the id is
	// absent or, for a write As a principal, held by a document the
	// principal cannot read. Error does not include it (an error message
	// travels further than the caller that may see the version).
	Current string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%v: id %q: the stored version differs from the expected %q", ErrConflict, e.ID, e.Expected)
}

// Is reports target == ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// IDUnavailableError is the error of an upsert As a principal of an id held
// by a document the principal cannot read (errors.Is(err,
// ErrIDUnavailable)). It does not say where the id is held.
type IDUnavailableError struct {
	Index int // position in the batch
	ID    string
}

func (e *IDUnavailableError) Error() string {
	return fmt.Sprintf("%v: documents[%d] id %q", ErrIDUnavailable, e.Index, e.ID)
}

// Is reports target == ErrIDUnavailable.
func (e *IDUnavailableError) Is(target error) bool { return target == ErrIDUnavailable }

// NamespaceError is the error of an upsert As a principal of a document in
// a namespace the principal may not name (errors.Is(err,
// ErrNamespaceForbidden)).
type NamespaceError struct {
	Index     int // position in the batch
	Namespace string
	// Allowed are the principal's namespace prefixes.
	Allowed []string
}

func (e *NamespaceError) Error() string {
	return fmt.Sprintf("%v: documents[%d] namespace %q (allowed: %s)", ErrNamespaceForbidden, e.Index, e.Namespace, strings.Join(e.Allowed, " | "))
}

// Is reports target == ErrNamespaceForbidden.
func (e *NamespaceError) Is(target error) bool { return target == ErrNamespaceForbidden }

// As makes a write (Upsert, Delete) act for principal p under the tenancy
// rules above. A nil p is the trusted caller (the default).
func As(p *contract.Principal) WriteOption {
	return func(w *writeOpts) { w.principal = p }
}

// CountInto makes a Delete store in *n how many documents it deleted: the
// distinct ids that were live (and, As a principal, readable by it). It is
// set only when the Delete succeeds.
func CountInto(n *int) WriteOption {
	return func(w *writeOpts) { w.count = n }
}

// visibleVersion is what a writer sees of id in sn: the stored version
// hash ("" when absent or hidden) and whether a document the principal
// cannot read holds the id.
func visibleVersion(sn *tier.Snapshot, p *contract.Principal, id string) (hash string, hidden bool) {
	d, _, ok := sn.Get(id)
	if !ok {
		return "", false
	}
	if p != nil && !p.CanRead(d.Namespace, d.ACL) {
		return "", true
	}
	h, err := d.Hash()
	if err != nil {
		// Never equal to an expectation (those are "" or 64 hex
		// digits): the write fails with a ConflictError naming this.
		return "unreadable: " + err.Error(), false
	}
	return hex.EncodeToString(h[:]), false
}

// checkIfMatch compares every expectation with what the writer sees in
// sn: ids of the batch (ids, in order, first occurrence) first, then the
// others in sorted order. It returns the first failure.
func checkIfMatch(sn *tier.Snapshot, p *contract.Principal, ids []string, expected map[string]string) error {
	if len(expected) == 0 {
		return nil
	}
	done := make(map[string]bool, len(expected))
	check := func(i int, id string) error {
		want, ok := expected[id]
		if !ok || done[id] {
			return nil
		}
		done[id] = true
		if got, _ := visibleVersion(sn, p, id); got != want {
			return &ConflictError{Index: i, ID: id, Expected: want, Current: got}
		}
		return nil
	}
	for i, id := range ids {
		if err := check(i, id); err != nil {
			return err
		}
	}
	for _, id := range sortedKeys(expected) {
		if err := check(-1, id); err != nil {
			return err
		}
	}
	return nil
}
