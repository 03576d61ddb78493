package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
)

func tdoc(id, ns, content string, acl ...string) contract.Document {
	d := doc(id, content, []float32{1, 0.5})
	d.Namespace, d.ACL = ns, acl
	return d
}

var (
	alice = &contract.Principal{Name: "alice", Namespaces: []string{"a/"}}
	carol = &contract.Principal{Name: "carol", Groups: []string{"team"}, Namespaces: []string{"a/", "shared/"}}
)

// tenancyColl holds, written by the trusted caller: a/open (readable by
// every principal of a/), a/private (ACL alice), b/other (namespace b/).
func tenancyColl(t *testing.T) (*Collection, map[string]string) {
	t.Helper()
	c := newColl(t, CollectionOptions{Dim: 2, MultiTenant: true})
	mustUpsert(t, c, tdoc("a/open", "a/", "open"), tdoc("a/private", "a/", "private", "alice"), tdoc("b/other", "b/", "other"))
	h := map[string]string{}
	for _, id := range []string{"a/open", "a/private", "b/other"} {
		d, err := c.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		h[id] = d.VersionHash
	}
	return c, h
}

func content(t *testing.T, c *Collection, id string) string {
	t.Helper()
	d, err := c.Get(context.Background(), id)
	if errors.Is(err, ErrNotFound) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return d.Content
}

// TestUpsertAsPrincipal: an embedded caller writing As a principal gets
// the server's rules (forbidden namespace, unavailable ids, preconditions
// against what it can see), and a failed batch writes nothing.
func TestUpsertAsPrincipal(t *testing.T) {
	ctx := context.Background()
	c, h := tenancyColl(t)
	e0 := c.Epoch()
	// A namespace the principal may not name.
	_, err := c.Upsert(ctx, []contract.Document{tdoc("a/new", "a/", "x"), tdoc("b/new", "b/", "x")}, As(alice))
	var ns *NamespaceError
	if !errors.As(err, &ns) || !errors.Is(err, ErrNamespaceForbidden) || ns.Index != 1 || ns.Namespace != "b/" {
		t.Fatalf("forbidden namespace: %v", err)
	}
	// An id held in another namespace, and one held behind an ACL: the
	// same error, naming the batch position only.
	for _, tc := range []struct {
		p  *contract.Principal
		id string
	}{{alice, "b/other"}, {carol, "a/private"}} {
		_, err = c.Upsert(ctx, []contract.Document{tdoc("a/new", "a/", "x"), tdoc(tc.id, "a/", "takeover")}, As(tc.p))
		var ue *IDUnavailableError
		if !errors.As(err, &ue) || !errors.Is(err, ErrIDUnavailable) || ue.Index != 1 || ue.ID != tc.id {
			t.Fatalf("%s writes %s: %v", tc.p.Name, tc.id, err)
		}
		if errors.Is(err, ErrConflict) {
			t.Fatalf("unavailable is not a conflict: %v", err)
		}
	}
	// Preconditions against what the principal sees: a hidden document is
	// absent. Guessing its real hash fails like any other hash, and the
	// error's Current does not reveal it.
	_, err = c.Upsert(ctx, []contract.Document{tdoc("a/private", "a/", "x")}, As(carol), IfMatch(map[string]string{"a/private": h["a/private"]}))
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) || ce.Index != 0 || ce.Current != "" || ce.Expected != h["a/private"] {
		t.Fatalf("hidden + right hash: %v (%+v)", err, ce)
	}
	// Expecting "absent" passes the precondition, then the id is not
	// available.
	_, err = c.Upsert(ctx, []contract.Document{tdoc("a/private", "a/", "x")}, As(carol), IfMatch(map[string]string{"a/private": ""}))
	if !errors.Is(err, ErrIDUnavailable) {
		t.Fatalf("hidden + absent: %v", err)
	}
	if c.Epoch() != e0 {
		t.Fatal("a refused batch wrote")
	}
	for id, want := range map[string]string{"a/open": "open", "a/private": "private", "b/other": "other", "a/new": "<absent>"} {
		if got := content(t, c, id); got != want {
			t.Fatalf("%s = %q after refused writes", id, got)
		}
	}
	// Visible documents: a wrong hash reports the current one (the
	// principal may read it); the right one writes.
	_, err = c.Upsert(ctx, []contract.Document{tdoc("a/x", "a/", "x"), tdoc("a/open", "a/", "v2")}, As(carol), IfMatch(map[string]string{"a/open": VersionHash([]byte("nope"))}))
	if !errors.As(err, &ce) || ce.Index != 1 || ce.ID != "a/open" || ce.Current != h["a/open"] {
		t.Fatalf("visible + wrong hash: %v (%+v)", err, ce)
	}
	if _, err := c.Upsert(ctx, []contract.Document{tdoc("a/open", "a/", "v2")}, As(carol), IfMatch(map[string]string{"a/open": h["a/open"]})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, []contract.Document{tdoc("a/private", "a/", "alice v2", "alice")}, As(alice), IfMatch(map[string]string{"a/private": h["a/private"]})); err != nil {
		t.Fatal(err)
	}
	// The trusted caller sees and writes everything.
	if _, err := c.Upsert(ctx, []contract.Document{tdoc("b/other", "b/", "trusted")}, IfMatch(map[string]string{"b/other": h["b/other"]})); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"a/open": "v2", "a/private": "alice v2", "b/other": "trusted"} {
		if got := content(t, c, id); got != want {
			t.Fatalf("%s = %q", id, got)
		}
	}
}

// TestDeleteAsPrincipal: ids the principal cannot read are skipped as
// absent ones (not deleted, not counted); IfMatch on a delete compares
// against what it sees and refuses the whole batch.
func TestDeleteAsPrincipal(t *testing.T) {
	ctx := context.Background()
	c, h := tenancyColl(t)
	var n int
	e0 := c.Epoch()
	e, err := c.Delete(ctx, []string{"a/private", "b/other", "never"}, As(carol), CountInto(&n))
	if err != nil || n != 0 || e != e0 {
		t.Fatalf("delete of hidden and absent ids: epoch %d (was %d), count %d, %v", e, e0, n, err)
	}
	// A conditional delete with a stale hash removes nothing.
	_, err = c.Delete(ctx, []string{"a/open"}, As(carol), IfMatch(map[string]string{"a/open": VersionHash([]byte("old"))}))
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Index != 0 || ce.Current != h["a/open"] {
		t.Fatalf("conditional delete: %v", err)
	}
	// Mixed batch: only the readable document goes, counted once.
	if _, err := c.Delete(ctx, []string{"a/private", "a/open", "a/open", "never", "b/other"}, As(carol), CountInto(&n)); err != nil || n != 1 {
		t.Fatalf("mixed delete: %d, %v", n, err)
	}
	for id, want := range map[string]string{"a/open": "<absent>", "a/private": "private", "b/other": "other"} {
		if got := content(t, c, id); got != want {
			t.Fatalf("%s = %q", id, got)
		}
	}
	// The owner can delete its document; the trusted caller anything.
	if _, err := c.Delete(ctx, []string{"a/private"}, As(alice), IfMatch(map[string]string{"a/private": h["a/private"]}), CountInto(&n)); err != nil || n != 1 {
		t.Fatalf("owner delete: %d, %v", n, err)
	}
	if _, err := c.Delete(ctx, []string{"b/other", "never"}, CountInto(&n)); err != nil || n != 1 {
		t.Fatalf("trusted delete: %d, %v", n, err)
	}
	for _, id := range []string{"a/private", "b/other"} {
		if got := content(t, c, id); got != "<absent>" {
			t.Fatalf("%s = %q", id, got)
		}
	}
}

// TestTenancyCheckAndWriteAtomic: a delete As a principal never removes a
// version it could not read, whatever writes race with it. The trusted
// writer moves one id back and forth between a namespace the deleter
// reads and one it does not, and checks each private version is still
// there when it writes the next shared one: the deleter's check and
// delete are one step, so a check that saw the readable version cannot
// delete the private one written after it.
func TestTenancyCheckAndWriteAtomic(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 2, MultiTenant: true})
	const rounds = 300
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.Delete(ctx, []string{"x"}, As(carol)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	// Each shared write is conditional on the private version before it:
	// it fails if anyone removed or changed that version.
	prev := ""
	for i := 0; i < rounds; i++ {
		_, err := c.Upsert(ctx, []contract.Document{tdoc("x", "shared/", fmt.Sprint("shared ", i))}, IfMatch(map[string]string{"x": prev}))
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("round %d: a principal's delete removed a version it cannot read: %v", i, err)
		}
		time.Sleep(20 * time.Microsecond) // let the deleter see the shared version
		priv := tdoc("x", "b/", fmt.Sprint("private ", i))
		mustUpsert(t, c, priv)
		prev = VersionHash([]byte(priv.Content))
	}
	close(stop)
	wg.Wait()
}
