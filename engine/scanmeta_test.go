package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// scanned is one version as the test compares it.
type scanned struct {
	ID, SourceURI, Namespace string
	Trust                    contract.Trust
	ACL                      []string
	Verifiable               bool
	Metadata                 map[string]contract.Value // the asked-for keys present
}

// scanMetaRef is ScanMeta's reference: IDs, then GetVerifiable of each,
// keeping only the asked-for metadata keys.
func scanMetaRef(t *testing.T, sn *Snapshot, keys []string) map[string]scanned {
	t.Helper()
	out := map[string]scanned{}
	for _, id := range sn.IDs() {
		d, ver, err := sn.GetVerifiable(context.Background(), id)
		if err != nil {
			t.Fatalf("GetVerifiable(%s): %v", id, err)
		}
		m := scanned{ID: d.ID, SourceURI: d.SourceURI, Namespace: d.Namespace, Trust: d.Trust, ACL: d.ACL, Verifiable: ver}
		for _, k := range keys {
			if v, ok := d.Metadata[k]; ok {
				if m.Metadata == nil {
					m.Metadata = map[string]contract.Value{}
				}
				m.Metadata[k] = v
			}
		}
		out[id] = m
	}
	return out
}

func scanMetaAll(t *testing.T, sn *Snapshot, keys []string) map[string]scanned {
	t.Helper()
	out := map[string]scanned{}
	err := sn.ScanMeta(context.Background(), func(d *DocMeta) bool {
		if _, dup := out[d.ID]; dup {
			t.Fatalf("ScanMeta reported %s twice", d.ID)
		}
		m := scanned{ID: d.ID, SourceURI: d.SourceURI, Namespace: d.Namespace, Trust: d.Trust, ACL: d.ACL, Verifiable: d.Verifiable}
		for _, k := range keys {
			v, ok, err := d.Value(k)
			if err != nil {
				t.Fatalf("%s: Value(%q): %v", d.ID, k, err)
			}
			if ok {
				if m.Metadata == nil {
					m.Metadata = map[string]contract.Value{}
				}
				m.Metadata[k] = v
			}
		}
		out[d.ID] = m
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffMeta(t *testing.T, step string, got, want map[string]scanned) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: ScanMeta %d versions, IDs+GetVerifiable %d", step, len(got), len(want))
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		g, w := got[id], want[id]
		if len(g.ACL) == 0 && len(w.ACL) == 0 {
			g.ACL, w.ACL = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: %s:\n ScanMeta   %+v\n reference  %+v", step, id, g, w)
		}
	}
}

// TestSnapshotScanMeta: over a seeded sequence of upserts (with and
// without VerifiableSources), deletes, flushes and an archive, ScanMeta at
// each step reports exactly the versions and metadata that IDs and
// GetVerifiable give (the MemTable, warm segments and the cold archive
// alike), a snapshot pinned earlier keeps its own set after later writes,
// reserved keys are never reported, and f returning false stops the scan.
func TestSnapshotScanMeta(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(17, 1))
	keys := []string{"symbol", "names", "kind", "absent", reservedMetaPrefix + "verifiable"}
	mk := func(i int) contract.Document {
		id := fmt.Sprintf("d%02d", i)
		d := doc(id, fmt.Sprintf("content %d %d", i, rng.IntN(1000)), []float32{rng.Float32(), rng.Float32()})
		d.SourceURI = fmt.Sprintf("file:///src/f%d.go#L%d-L%d", i%5, i+1, i+3)
		d.Namespace = []string{"", "tenant-a/", "tenant-b/x/"}[rng.IntN(3)]
		if rng.IntN(3) == 0 {
			d.ACL = []string{"alice", "group:eng"}[:1+rng.IntN(2)]
		}
		if rng.IntN(4) == 0 {
			d.Trust = contract.Derived
		}
		d.Metadata = map[string]contract.Value{"lang": contract.String("go")}
		if rng.IntN(2) == 0 {
			d.Metadata["symbol"] = contract.String(fmt.Sprintf("Sym%d", i))
			d.Metadata["kind"] = contract.String("func")
			d.Metadata["names"] = contract.Strings(fmt.Sprintf("Sym%d", i), "Ünïcode \"q\"")
		}
		return d
	}
	var pinned *Snapshot
	var pinnedWant map[string]scanned
	for step := range 40 {
		switch r := rng.IntN(10); {
		case r < 6:
			var batch []contract.Document
			for _, i := range rng.Perm(30)[:1+rng.IntN(4)] {
				batch = append(batch, mk(i))
			}
			var err error
			if rng.IntN(2) == 0 {
				_, err = c.Upsert(ctx, batch, VerifiableSources())
			} else {
				_, err = c.Upsert(ctx, batch)
			}
			if err != nil {
				t.Fatal(err)
			}
		case r < 8:
			if _, err := c.Delete(ctx, []string{fmt.Sprintf("d%02d", rng.IntN(30))}); err != nil {
				t.Fatal(err)
			}
		case r < 9:
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		default:
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Archive(ctx, ArchiveOptions{}); err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
		}
		sn, err := c.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		diffMeta(t, fmt.Sprintf("step %d", step), scanMetaAll(t, sn, keys), scanMetaRef(t, sn, keys))
		if step == 10 {
			pinned, pinnedWant = sn, scanMetaRef(t, sn, keys)
			continue
		}
		sn.Close()
	}
	if len(c.Archives()) == 0 {
		t.Fatal("the sequence archived nothing: the cold tier is not covered")
	}
	diffMeta(t, "pinned snapshot", scanMetaAll(t, pinned, keys), pinnedWant)
	n := 0
	if err := pinned.ScanMeta(ctx, func(*DocMeta) bool { n++; return n < 2 }); err != nil || (len(pinnedWant) >= 2 && n != 2) {
		t.Fatalf("stop after 2: called %d times, err %v", n, err)
	}
	pinned.Close()
	if err := pinned.ScanMeta(ctx, func(*DocMeta) bool { return true }); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
	sn, _ := c.Snapshot()
	defer sn.Close()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := sn.ScanMeta(cctx, func(*DocMeta) bool { return true }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
