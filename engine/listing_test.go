package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// listModel is the brute-force reference of a collection's listing: the
// live documents' namespace and ACL.
type listModel map[string]contract.Document

// page is the reference page: the ids > after that p may read, ascending,
// at most limit.
func (m listModel) page(p *contract.Principal, after string, limit int) []string {
	var ids []string
	for id, d := range m {
		if id > after && (p == nil || p.CanRead(d.Namespace, d.ACL)) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids
}

// TestListDocumentsReference pages through a collection under random
// namespaces and ACLs for several principals, with writes (upserts that
// move documents between namespaces and ACLs, deletes), flushes,
// compactions and an archive between pages, and compares every page with
// the brute-force reference at that moment.
func TestListDocumentsReference(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 2})
	rng := rand.New(rand.NewPCG(16, 4))
	nss := []string{"t1/", "t1/x/", "t2/", "t3/", ""}
	acls := [][]string{nil, nil, {"alice"}, {"bob"}, {"g1"}, {"alice", "g2"}, {"nobody"}, {"carol", "g1"}}
	principals := []*contract.Principal{
		nil,
		{Name: "alice", Namespaces: []string{"t1/"}},
		{Name: "bob", Groups: []string{"g1"}, Namespaces: []string{"t2/", "t1/x/"}},
		{Name: "carol", Groups: []string{"g2", "g1"}, Namespaces: []string{"*"}},
		{Name: "dave", Namespaces: []string{"t3/", "t3/"}},
		{Name: "eve"},
	}
	m := listModel{}
	write := func(n int) {
		var docs []contract.Document
		seen := map[string]bool{}
		for range n {
			id := fmt.Sprintf("d%04d", rng.IntN(600))
			if seen[id] {
				continue
			}
			seen[id] = true
			d := doc(id, "text "+id, []float32{rng.Float32() + 0.1, rng.Float32()})
			d.Namespace = nss[rng.IntN(len(nss))]
			d.ACL = acls[rng.IntN(len(acls))]
			docs = append(docs, d)
		}
		mustUpsert(t, c, docs...)
		for _, d := range docs {
			m[d.ID] = d
		}
		if rng.IntN(3) == 0 {
			var del []string
			for id := range m {
				if rng.IntN(20) == 0 {
					del = append(del, id)
				}
			}
			sort.Strings(del)
			if _, err := c.Delete(ctx, del); err != nil {
				t.Fatal(err)
			}
			for _, id := range del {
				delete(m, id)
			}
		}
	}
	write(300)
	archived := false
	for round := range 12 {
		switch round % 4 {
		case 1:
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		case 2:
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := c.Compact(ctx); err != nil {
				t.Fatal(err)
			}
		case 3:
			if !archived && len(c.WarmSegments()) > 0 {
				if _, err := c.Archive(ctx, ArchiveOptions{}); err != nil {
					t.Fatal(err)
				}
				archived = true
			}
		}
		for pi, p := range principals {
			after := ""
			for pages := 0; ; pages++ {
				limit := 1 + rng.IntN(40)
				want := m.page(p, after, limit)
				got, err := c.ListDocuments(ctx, p, after, limit)
				if err != nil {
					t.Fatal(err)
				}
				gotIDs := make([]string, len(got))
				for i, d := range got {
					gotIDs[i] = d.ID
					md := m[d.ID]
					full, err := c.Get(ctx, d.ID)
					if err != nil {
						t.Fatal(err)
					}
					if d.Namespace != md.Namespace || d.VersionHash != full.VersionHash || d.Trust != full.Trust ||
						!d.Timestamp.Equal(full.Timestamp) || d.SourceURI != full.SourceURI {
						t.Fatalf("round %d principal %d: listed %+v, stored %+v", round, pi, d, full)
					}
				}
				if !slices.Equal(gotIDs, want) {
					t.Fatalf("round %d principal %d page %d after %q limit %d:\n got %v\nwant %v", round, pi, pages, after, limit, gotIDs, want)
				}
				if len(got) < limit {
					break
				}
				after = gotIDs[len(gotIDs)-1]
				if rng.IntN(4) == 0 {
					write(10) // the cursor stays valid across writes
				}
			}
		}
		write(80)
	}
	if !archived {
		t.Fatal("no archive was made: the cold listing is untested")
	}
	if _, err := c.ListDocuments(ctx, nil, "", 0); err == nil {
		t.Fatal("limit 0 accepted")
	}
	if _, err := c.ListDocuments(ctx, nil, "", MaxListLimit+1); err == nil {
		t.Fatal("limit above MaxListLimit accepted")
	}
}

// TestListDocumentsScale: with 20,000 documents (2,000 under -short) of
// one principal and one of another, the second's page examines a handful
// of listing entries, hot and warm alike.
func TestListDocumentsScale(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 2})
	alice := &contract.Principal{Name: "alice", Namespaces: []string{"alice/"}}
	bob := &contract.Principal{Name: "bob", Namespaces: []string{"bob/"}}
	n := 20000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(20000, 1))
	for i := 0; i < n; i += 1000 {
		var docs []contract.Document
		for j := i; j < i+1000; j++ {
			d := doc(fmt.Sprintf("a%06d", j), fmt.Sprintf("alice %x %x", rng.Uint64(), rng.Uint64()), []float32{1, rng.Float32()})
			d.Namespace = "alice/"
			docs = append(docs, d)
		}
		mustUpsert(t, c, docs...)
	}
	b := doc("m-bob", "bob text", []float32{1, 2})
	b.Namespace = "bob/"
	mustUpsert(t, c, b)
	check := func(stage string) {
		t.Helper()
		sn := c.store.Snapshot()
		defer sn.Close()
		for _, limit := range []int{1, 10} {
			got, examined, err := c.listPage(ctx, sn, bob, "", limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].ID != "m-bob" || examined > 4 {
				t.Fatalf("%s: bob's page limit %d = %v, examined %d entries", stage, limit, got, examined)
			}
			got, examined, err = c.listPage(ctx, sn, alice, "a000100", limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != limit || got[0].ID != "a000101" || examined > limit+4 {
				t.Fatalf("%s: alice's page limit %d = %v, examined %d entries", stage, limit, got, examined)
			}
		}
	}
	check("hot")
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("warm")
}

// TestListDocumentsConcurrentWrites pages through a collection while
// writers add and delete other documents and a flush runs: every page is
// ascending with no id repeated, and every document live throughout is
// listed exactly once.
func TestListDocumentsConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 2})
	p := &contract.Principal{Name: "alice", Namespaces: []string{"t/"}}
	var stable []contract.Document
	for i := range 400 {
		d := doc(fmt.Sprintf("s%04d", i), fmt.Sprintf("stable %d", i), []float32{1, float32(i)})
		d.Namespace = "t/"
		stable = append(stable, d)
	}
	mustUpsert(t, c, stable...)
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		rng := rand.New(rand.NewPCG(3, 3))
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			d := doc(fmt.Sprintf("s%04d-x%d", rng.IntN(400), i), "churn", []float32{1, 2})
			d.Namespace = []string{"t/", "u/"}[i%2]
			if _, err := c.Upsert(ctx, []contract.Document{d}); err != nil {
				errc <- err
				return
			}
			if i%3 == 0 {
				if _, err := c.Delete(ctx, []string{d.ID}); err != nil {
					errc <- err
					return
				}
			}
			if i == 200 {
				if err := c.Flush(ctx); err != nil {
					errc <- err
					return
				}
			}
		}
	}()
	for round := range 5 {
		seen := map[string]bool{}
		after := ""
		for {
			page, err := c.ListDocuments(ctx, p, after, 7)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range page {
				if d.ID <= after || seen[d.ID] || d.Namespace != "t/" {
					t.Fatalf("round %d: %q listed after %q (seen %v, namespace %q)", round, d.ID, after, seen[d.ID], d.Namespace)
				}
				seen[d.ID] = true
				after = d.ID
			}
			if len(page) < 7 {
				break
			}
		}
		for _, d := range stable {
			if !seen[d.ID] {
				t.Fatalf("round %d: stable document %s not listed", round, d.ID)
			}
		}
	}
	close(done)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
