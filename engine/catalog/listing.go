package catalog

import (
	"container/heap"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// Listing is an ordered index of the ids one row set holds (a warm
// segment, a cold archive or a MemTable), grouped by read class so that a
// principal's listing starts at its cursor inside the classes it may read
// and never walks another tenant's ids:
//
//   - all: every id (the trusted caller's listing);
//   - per namespace, open: the ids with an empty ACL;
//   - per namespace and ACL entry: the ids whose ACL names that entry.
//
// A class only nominates ids: it holds every id that ever had a version of
// that class in the row set, whether or not that version is live at a
// given snapshot; the reader checks the id's visible version (Merge). An
// id is kept once per class however many versions it has. Safe for
// concurrent use: Add (the MemTable's index) may run beside readers.
type Listing struct {
	mu   sync.RWMutex
	all  idList
	byNS map[string]*nsClasses
	nss  []string // sorted keys of byNS
}

type nsClasses struct {
	open idList
	acl  map[string]*idList
}

// idList is a sorted set of ids in blocks of at most maxBlock (insertion
// costs O(log n + maxBlock), a seek O(log n)).
type idList struct {
	blocks [][]string
}

const maxBlock = 512

// NewListing returns an empty listing.
func NewListing() *Listing { return &Listing{byNS: map[string]*nsClasses{}} }

// BuildListing returns the listing of docs (an immutable row set), in
// O(n log n).
func BuildListing(docs []*tier.Document) *Listing {
	l := NewListing()
	all := make([]string, 0, len(docs))
	type entry struct{ ns, tok, id string }
	var open, acl []entry
	for _, d := range docs {
		all = append(all, d.ID)
		if len(d.ACL) == 0 {
			open = append(open, entry{d.Namespace, "", d.ID})
			continue
		}
		for _, a := range d.ACL {
			if a != "" {
				acl = append(acl, entry{d.Namespace, a, d.ID})
			}
		}
	}
	slices.Sort(all)
	l.all.setSorted(all)
	group := func(es []entry, isOpen bool) {
		slices.SortFunc(es, func(a, b entry) int {
			if c := strings.Compare(a.ns, b.ns); c != 0 {
				return c
			}
			if c := strings.Compare(a.tok, b.tok); c != 0 {
				return c
			}
			return strings.Compare(a.id, b.id)
		})
		for i := 0; i < len(es); {
			j := i
			ids := []string{}
			for j < len(es) && es[j].ns == es[i].ns && es[j].tok == es[i].tok {
				ids = append(ids, es[j].id)
				j++
			}
			nc := l.ns(es[i].ns)
			if isOpen {
				nc.open.setSorted(ids)
			} else {
				il := &idList{}
				il.setSorted(ids)
				nc.acl[es[i].tok] = il
			}
			i = j
		}
	}
	group(open, true)
	group(acl, false)
	return l
}

// ns returns (creating) namespace ns's classes. Caller holds mu for writing.
func (l *Listing) ns(ns string) *nsClasses {
	nc := l.byNS[ns]
	if nc == nil {
		nc = &nsClasses{acl: map[string]*idList{}}
		l.byNS[ns] = nc
		i, _ := slices.BinarySearch(l.nss, ns)
		l.nss = slices.Insert(l.nss, i, ns)
	}
	return nc
}

// Add indexes one new version of doc.
func (l *Listing) Add(doc *tier.Document) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.insert(doc.ID)
	nc := l.ns(doc.Namespace)
	if len(doc.ACL) == 0 {
		nc.open.insert(doc.ID)
		return
	}
	for _, a := range doc.ACL {
		if a == "" {
			continue
		}
		il := nc.acl[a]
		if il == nil {
			il = &idList{}
			nc.acl[a] = il
		}
		il.insert(doc.ID)
	}
}

// listBatchMin is the least number of documents AddBatch indexes by
// sorting and merging (fewer: one Add each).
const listBatchMin = 64

// AddBatch indexes one new version of each of docs: the same listing as
// Add of each, in O(k log k) for k class entries plus, for a class
// that already holds n ids with n < 8k, one merged rebuild of it (O(n)).
// The ids of a class are sorted once and laid out in blocks together,
// instead of being inserted one at a time (each insert grows its block,
// and a full block is split into two copies).
func (l *Listing) AddBatch(docs []*tier.Document) {
	if len(docs) < listBatchMin {
		for _, d := range docs {
			l.Add(d)
		}
		return
	}
	type class struct{ ns, tok string } // tok "": the open class
	counts := map[class]int{}
	for _, d := range docs {
		if len(d.ACL) == 0 {
			counts[class{d.Namespace, ""}]++
			continue
		}
		for _, a := range d.ACL {
			if a != "" {
				counts[class{d.Namespace, a}]++
			}
		}
	}
	ids := make(map[class][]string, len(counts))
	for k, n := range counts {
		ids[k] = make([]string, 0, n)
	}
	all := make([]string, len(docs))
	for i, d := range docs {
		all[i] = d.ID
		if len(d.ACL) == 0 {
			k := class{d.Namespace, ""}
			ids[k] = append(ids[k], d.ID)
			continue
		}
		for _, a := range d.ACL {
			if a != "" {
				k := class{d.Namespace, a}
				ids[k] = append(ids[k], d.ID)
			}
		}
	}
	slices.Sort(all)
	for _, s := range ids {
		slices.Sort(s)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.addSorted(all)
	for k, s := range ids {
		nc := l.ns(k.ns)
		if k.tok == "" {
			nc.open.addSorted(s)
			continue
		}
		il := nc.acl[k.tok]
		if il == nil {
			il = &idList{}
			nc.acl[k.tok] = il
		}
		il.addSorted(s)
	}
}

// Classes returns cursors over the classes holding every id whose version
// p may read (p nil: the class of all ids), each positioned after after.
// It costs O(c · log n) for c classes: the namespaces p may name, times
// (1 + the entries p matches in an ACL).
func (l *Listing) Classes(p *contract.Principal, after string) []*Cursor {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if p == nil {
		return []*Cursor{l.cursor(&l.all, after)}
	}
	var nss []string
	for _, a := range p.Namespaces {
		if a == "*" {
			nss = l.nss
			break
		}
		if a == "" {
			continue
		}
		for i, _ := slices.BinarySearch(l.nss, a); i < len(l.nss) && strings.HasPrefix(l.nss[i], a); i++ {
			nss = append(nss, l.nss[i])
		}
	}
	var out []*Cursor
	seen := map[string]bool{}
	for _, ns := range nss {
		if seen[ns] || !p.AllowsNamespace(ns) {
			continue
		}
		seen[ns] = true
		nc := l.byNS[ns]
		out = append(out, l.cursor(&nc.open, after))
		for _, tok := range append([]string{p.Name}, p.Groups...) {
			if il := nc.acl[tok]; il != nil && tok != "" {
				out = append(out, l.cursor(il, after))
			}
		}
	}
	return out
}

func (l *Listing) cursor(il *idList, after string) *Cursor {
	return &Cursor{l: l, il: il, last: after, batch: 16}
}

// Cursor walks one class of a Listing in ascending id order. Not safe for
// concurrent use; the Listing may change under it (ids added behind the
// cursor are not seen, ids added ahead of it may be).
type Cursor struct {
	l     *Listing
	il    *idList
	last  string // ids ≤ last are behind the cursor
	buf   []string
	batch int
	done  bool
}

// Next returns the cursor's next id, or false at the end of the class.
func (c *Cursor) Next() (string, bool) {
	if len(c.buf) == 0 && !c.done {
		c.l.mu.RLock()
		c.buf = c.il.after(c.last, c.batch, c.buf[:0])
		c.l.mu.RUnlock()
		if len(c.buf) < c.batch {
			c.done = true
		}
		c.batch = min(c.batch*4, 4096)
	}
	if len(c.buf) == 0 {
		return "", false
	}
	id := c.buf[0]
	c.buf = c.buf[1:]
	c.last = id
	return id, true
}

func (il *idList) setSorted(ids []string) {
	ids = slices.Compact(ids)
	il.blocks = nil
	for len(ids) > 0 {
		n := min(len(ids), maxBlock/2)
		il.blocks = append(il.blocks, ids[:n:n])
		ids = ids[n:]
	}
}

// addSorted adds ids (sorted, duplicates allowed): one insert each when
// they are few next to the list (under an eighth of it), otherwise one
// merge of the list and ids, laid out again by setSorted (the list's old
// blocks become garbage; setSorted's blocks are views of the merged
// array).
func (il *idList) addSorted(ids []string) {
	n := 0
	for _, b := range il.blocks {
		n += len(b)
	}
	if n == 0 {
		il.setSorted(ids)
		return
	}
	if 8*len(ids) < n {
		for _, id := range ids {
			il.insert(id)
		}
		return
	}
	out := make([]string, 0, n+len(ids))
	j := 0
	for _, b := range il.blocks {
		for _, id := range b {
			for j < len(ids) && ids[j] < id {
				out = append(out, ids[j])
				j++
			}
			out = append(out, id)
		}
	}
	out = append(out, ids[j:]...)
	il.setSorted(out) // compacts: an id of ids already in the list is kept once
}

// block returns the index of the first block whose last id is ≥ id
// (len(blocks) when none).
func (il *idList) block(id string) int {
	return sort.Search(len(il.blocks), func(i int) bool {
		b := il.blocks[i]
		return b[len(b)-1] >= id
	})
}

func (il *idList) insert(id string) {
	bi := il.block(id)
	if bi == len(il.blocks) {
		if bi == 0 {
			il.blocks = append(il.blocks, []string{id})
			return
		}
		bi-- // append to the last block
	}
	b := il.blocks[bi]
	i, found := slices.BinarySearch(b, id)
	if found {
		return
	}
	// Readers copy ids out under the read lock (after), so a block may
	// change in place.
	b = slices.Insert(b, i, id)
	if len(b) > maxBlock {
		h := len(b) / 2
		lo := slices.Clone(b[:h])
		hi := slices.Clone(b[h:])
		il.blocks = slices.Insert(il.blocks, bi+1, hi)
		il.blocks[bi] = lo
		return
	}
	il.blocks[bi] = b
}

// after appends to dst up to n ids greater than last, ascending.
func (il *idList) after(last string, n int, dst []string) []string {
	bi := il.block(last)
	for ; bi < len(il.blocks) && len(dst) < n; bi++ {
		b := il.blocks[bi]
		i, found := slices.BinarySearch(b, last)
		if found {
			i++
		}
		for ; i < len(b) && len(dst) < n; i++ {
			dst = append(dst, b[i])
		}
		last = "" // later blocks are wholly after last
	}
	return dst
}

// Merge walks cursors together in ascending id order, calling visit once
// per distinct id (however many cursors hold it) until visit returns
// false or every cursor is exhausted. It returns the number of cursor
// entries examined.
func Merge(cursors []*Cursor, visit func(id string) bool) int {
	h := mergeHeap{}
	examined := 0
	for _, c := range cursors {
		if id, ok := c.Next(); ok {
			examined++
			h = append(h, mergeHead{id, c})
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		id := h[0].id
		for len(h) > 0 && h[0].id == id {
			if next, ok := h[0].c.Next(); ok {
				examined++
				h[0].id = next
				heap.Fix(&h, 0)
			} else {
				heap.Pop(&h)
			}
		}
		if !visit(id) {
			break
		}
	}
	return examined
}

type mergeHead struct {
	id string
	c  *Cursor
}

type mergeHeap []mergeHead

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return h[i].id < h[j].id }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(mergeHead)) }
func (h *mergeHeap) Pop() any          { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

// ListingCache keeps the listings of one collection's immutable row sets
// (warm segments and cold archives, by id), built on first use. Safe for
// concurrent use.
type ListingCache struct {
	mu   sync.Mutex
	warm map[uint64]cachedListing
	cold map[uint64]cachedListing
}

type cachedListing struct {
	first *tier.Document // identity check: the row set's first document
	l     *Listing
}

// NewListingCache returns an empty cache.
func NewListingCache() *ListingCache {
	return &ListingCache{warm: map[uint64]cachedListing{}, cold: map[uint64]cachedListing{}}
}

// Get returns the listings of a snapshot's warm segments and cold
// archives (in that order), building missing ones; listings of row sets
// no longer in the snapshot are dropped.
func (lc *ListingCache) Get(warm []tier.WarmSegment, cold []tier.ColdArchive) []*Listing {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	out := make([]*Listing, 0, len(warm)+len(cold))
	get := func(m map[uint64]cachedListing, live map[uint64]bool, id uint64, docs []*tier.Document) {
		live[id] = true
		var first *tier.Document
		if len(docs) > 0 {
			first = docs[0]
		}
		cl, ok := m[id]
		if !ok || cl.first != first {
			cl = cachedListing{first: first, l: BuildListing(docs)}
			m[id] = cl
		}
		out = append(out, cl.l)
	}
	liveW, liveC := map[uint64]bool{}, map[uint64]bool{}
	for _, w := range warm {
		get(lc.warm, liveW, w.ID, w.Docs)
	}
	for _, a := range cold {
		get(lc.cold, liveC, a.ID, a.Docs)
	}
	for id := range lc.warm {
		if !liveW[id] {
			delete(lc.warm, id)
		}
	}
	for id := range lc.cold {
		if !liveC[id] {
			delete(lc.cold, id)
		}
	}
	return out
}
