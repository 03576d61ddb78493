package memory

import (
	"context"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"
)

// DefaultNearDupJaccard is Policy.NearDupJaccard's default, measured on
// the memgen stream (seed 1): restatements ≥ 0.62, different facts
// ≤ 0.47 (bench/results/notes/memory.md "Near-duplicate threshold"). The
// vector cosine rule has no default: it is off (Policy.NearDupCosine).
const DefaultNearDupJaccard = 0.5

// MinHash parameters: numHashes = bands × rows; a pair of Jaccard J
// becomes a candidate with probability 1 − (1 − J^rows)^bands (J = 0.5:
// 0.87, J = 0.3: 0.23 with 16 bands of 4 rows; every candidate is then
// checked with the exact Jaccard of the shingle sets, so the result
// does not depend on the hashing beyond which pairs are compared).
const (
	mhBands   = 16
	mhRows    = 4
	numHashes = mhBands * mhRows
)

// mhParams are the fixed (a, b) of h_i(x) = a_i·x + b_i (mod 2^64),
// from splitmix64 with seed 1: signatures are the same in every process.
var mhParams = func() [numHashes][2]uint64 {
	var p [numHashes][2]uint64
	x := uint64(1)
	next := func() uint64 {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
	for i := range p {
		p[i] = [2]uint64{next() | 1, next()}
	}
	return p
}()

// Shingles returns the record-text shingle set: the lower-cased word
// (letters and digits) unigrams and bigrams of s, as 64-bit FNV-1a
// hashes, sorted and distinct.
func Shingles(s string) []uint64 {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := make([]uint64, 0, 2*len(words))
	h := func(parts ...string) uint64 {
		f := fnv.New64a()
		for i, p := range parts {
			if i > 0 {
				_, _ = f.Write([]byte{0})
			}
			_, _ = f.Write([]byte(p))
		}
		return f.Sum64()
	}
	for i, w := range words {
		out = append(out, h(w))
		if i+1 < len(words) {
			out = append(out, h(w, words[i+1]))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Jaccard is |a ∩ b| / |a ∪ b| of two sorted distinct sets (0 for two
// empty sets).
func Jaccard(a, b []uint64) float64 {
	i, j, inter := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

func minhash(sh []uint64) [numHashes]uint64 {
	var sig [numHashes]uint64
	for i := range sig {
		sig[i] = math.MaxUint64
	}
	for _, x := range sh {
		for i, p := range mhParams {
			if v := p[0]*x + p[1]; v < sig[i] {
				sig[i] = v
			}
		}
	}
	return sig
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// nearDup reports whether two records are near-duplicates under the
// policy: shingle Jaccard ≥ NearDupJaccard, or, with the cosine rule on
// and both with vectors, cosine ≥ NearDupCosine.
func (s *Store) nearDup(a, b *Record, sa, sb []uint64) bool {
	if Jaccard(sa, sb) >= s.o.Policy.NearDupJaccard {
		return true
	}
	return s.o.Policy.NearDupCosine > 0 && len(a.Vector) > 0 && len(b.Vector) > 0 &&
		cosine(a.Vector, b.Vector) >= s.o.Policy.NearDupCosine
}

// ConsolidateReport says what one consolidation pass merged.
type ConsolidateReport struct {
	// Merged maps each merged record to its canonical record.
	Merged map[string]string `json:"merged"`
	// Compared is the number of candidate pairs checked exactly.
	Compared int `json:"compared"`
}

// Consolidate merges near-duplicates among subject's active records of
// the same kind and key (subject "" = every subject), deterministically:
// candidate pairs come from MinHash LSH over Shingles (16 bands × 4
// rows) plus, with the cosine rule on (Policy.NearDupCosine) and for
// records with vectors in groups of at most 512, every pair; a pair is merged when nearDup holds; each connected cluster keeps
// one canonical record (best evidence, then grounded, then trusted, then
// the earliest recorded, then the smallest id) and the others become
// Merged with MergedInto set (kept for history and Rollback, never
// recalled). Keyed facts are resolved at write time (Remember), so a key
// holds one active record here. With Options.AppendOnly it merges nothing.
func (s *Store) Consolidate(ctx context.Context, subject string) (ConsolidateReport, error) {
	rep := ConsolidateReport{Merged: map[string]string{}}
	if s.o.AppendOnly {
		return rep, nil
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	subjects := []string{subject}
	if subject == "" {
		subjects = subjects[:0]
		for k := range s.subj {
			subjects = append(subjects, k)
		}
		slices.Sort(subjects)
	}
	ov := s.newOverlay()
	for _, sub := range subjects {
		groups := map[[2]string][]*Record{}
		for _, r := range s.subj[sub] {
			if r.Status == Active {
				g := [2]string{string(r.Kind), r.Key}
				groups[g] = append(groups[g], r)
			}
		}
		gkeys := make([][2]string, 0, len(groups))
		for g := range groups {
			gkeys = append(gkeys, g)
		}
		slices.SortFunc(gkeys, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
		for _, g := range gkeys {
			rs := groups[g]
			if len(rs) < 2 {
				continue
			}
			slices.SortFunc(rs, func(a, b *Record) int { return strings.Compare(a.ID, b.ID) })
			rep.Compared += s.mergeGroup(ov, rs, rep.Merged)
		}
	}
	if err := s.commit(ctx, ov); err != nil {
		return ConsolidateReport{}, err
	}
	return rep, nil
}

// mergeGroup clusters rs (sorted by id) and merges each cluster into its
// canonical record; it returns the number of pairs compared.
func (s *Store) mergeGroup(ov *overlay, rs []*Record, merged map[string]string) int {
	n := len(rs)
	sh := make([][]uint64, n)
	for i, r := range rs {
		sh[i] = Shingles(r.Content)
	}
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	seen := map[[2]int]bool{}
	compared := 0
	try := func(i, j int) {
		if i > j {
			i, j = j, i
		}
		if i == j || seen[[2]int{i, j}] {
			return
		}
		seen[[2]int{i, j}] = true
		compared++
		if s.nearDup(rs[i], rs[j], sh[i], sh[j]) {
			if a, b := find(i), find(j); a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	buckets := map[[2]uint64][]int{}
	for i := range rs {
		if len(sh[i]) == 0 {
			continue
		}
		sig := minhash(sh[i])
		for b := 0; b < mhBands; b++ {
			f := fnv.New64a()
			for r := 0; r < mhRows; r++ {
				v := sig[b*mhRows+r]
				var buf [8]byte
				for k := range buf {
					buf[k] = byte(v >> (8 * k))
				}
				_, _ = f.Write(buf[:])
			}
			key := [2]uint64{uint64(b), f.Sum64()}
			for _, j := range buckets[key] {
				try(j, i)
			}
			buckets[key] = append(buckets[key], i)
		}
	}
	if n <= 512 && s.o.Policy.NearDupCosine > 0 {
		for i := 0; i < n; i++ {
			if len(rs[i].Vector) == 0 {
				continue
			}
			for j := i + 1; j < n; j++ {
				if len(rs[j].Vector) > 0 {
					try(i, j)
				}
			}
		}
	}
	clusters := map[int][]int{}
	for i := range rs {
		root := find(i)
		clusters[root] = append(clusters[root], i)
	}
	roots := make([]int, 0, len(clusters))
	for r, c := range clusters {
		if len(c) > 1 {
			roots = append(roots, r)
		}
	}
	slices.Sort(roots)
	for _, root := range roots {
		c := clusters[root]
		canon := c[0]
		for _, i := range c[1:] {
			if canonBetter(rs[i], rs[canon]) {
				canon = i
			}
		}
		for _, i := range c {
			if i == canon {
				continue
			}
			m := ov.mut(rs[i].ID)
			m.Status, m.MergedInto = Merged, rs[canon].ID
			merged[m.ID] = rs[canon].ID
			ov.log(Entry{Op: OpMerge, ID: m.ID, Provenance: m.Provenance, Target: rs[canon].ID,
				ContentHash: contentHash(m.Content)})
		}
	}
	return compared
}

// canonBetter orders a near-duplicate cluster's canonical candidates:
// best evidence, grounded, trusted, earliest recorded, earliest admitted
// (Seq), smallest id.
func canonBetter(a, b *Record) bool {
	if x, y := a.Evidence.Rank(), b.Evidence.Rank(); x != y {
		return x > y
	}
	if x, y := a.Grounded(), b.Grounded(); x != y {
		return x
	}
	if x, y := a.Trust != "external_unverified", b.Trust != "external_unverified"; x != y {
		return x
	}
	if c := a.RecordedAt.Compare(b.RecordedAt); c != 0 {
		return c < 0
	}
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.ID < b.ID
}
