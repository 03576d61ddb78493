package tier

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"

	"github.com/stratasearch/strata/vfs"
)

const testDim = 8

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func testOptions(fs vfs.FS) Options {
	return Options{FS: fs, Dir: "/db", Dim: testDim, Logger: quietLog}
}

// genBatch deterministically generates batch number i (1-based) of a
// workload: 1–4 ops over a universe of 24 ids, mostly upserts.
func genBatch(seed uint64, i uint64) *Batch {
	rng := rand.New(rand.NewPCG(seed, i))
	b := &Batch{}
	n := 1 + rng.IntN(4)
	for j := 0; j < n; j++ {
		id := fmt.Sprintf("doc-%02d", rng.IntN(24))
		if rng.IntN(5) == 0 {
			b.Delete(id)
			continue
		}
		vec := make([]float32, testDim)
		for k := range vec {
			vec[k] = float32(rng.NormFloat64())
		}
		if rng.IntN(10) == 0 {
			vec = nil
		}
		b.Upsert(Document{ID: id, Content: fmt.Sprintf("%s written by batch %d op %d", id, i, j), Vector: vec,
			Metadata: map[string]string{"batch": fmt.Sprint(i)}, Namespace: "t/", Trust: TrustDerived,
			ACL: []string{"alice"}, UpdatedUnixNano: int64(i)})
	}
	return b
}

// model is the obviously-correct reference: the latest content per id.
type model map[string]Document

func (m model) apply(b *Batch) {
	for _, op := range b.Ops {
		if op.Kind == OpDelete {
			delete(m, op.Doc.ID)
		} else {
			m[op.Doc.ID] = op.Doc
		}
	}
}

func modelAt(seed uint64, epoch uint64) model {
	m := model{}
	for i := uint64(1); i <= epoch; i++ {
		m.apply(genBatch(seed, i))
	}
	return m
}

func sameVec(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkAgainst compares a snapshot with the model; it returns a
// description of the first difference, or "".
func checkAgainst(sn *Snapshot, m model) string {
	live := sn.LiveIDs()
	sort.Strings(live)
	var want []string
	for id := range m {
		want = append(want, id)
	}
	sort.Strings(want)
	if fmt.Sprint(live) != fmt.Sprint(want) {
		return fmt.Sprintf("live ids at epoch %d = %v, model %v", sn.Epoch(), live, want)
	}
	for id, d := range m {
		got, _, ok := sn.Get(id)
		if !ok {
			return fmt.Sprintf("%s missing", id)
		}
		if got.Content != d.Content || !sameVec(got.Vector, d.Vector) || got.Metadata["batch"] != d.Metadata["batch"] ||
			got.UpdatedUnixNano != d.UpdatedUnixNano || got.Namespace != d.Namespace || len(got.ACL) != 1 {
			return fmt.Sprintf("%s = %q, model %q", id, got.Content, d.Content)
		}
	}
	return ""
}
