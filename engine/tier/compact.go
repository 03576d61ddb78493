package tier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// Warm-segment compaction is incremental: every compaction merges a
// bounded number of segments (at most Options.CompactFanIn) into one, so
// its work is bounded by the sizes of the segments it picks, never by
// the whole collection. The merge policy is size-tiered, after Lucene's
// TieredMergePolicy and Cassandra's size-tiered compaction:
//
//   - Sizes are file sizes; for the tier bounds they are floored at
//     compactFloorBytes (so the tiny segments of small flushes form one
//     tier instead of one tier each).
//   - Segments sorted by size fall into tiers: a tier starts at its
//     smallest segment and holds every next one up to compactTierRatio
//     times that size.
//   - First, at SlowdownSegments warm segments or more (write
//     backpressure ahead), the CompactFanIn smallest segments are merged
//     whatever their tiers: one such merge lowers the count by
//     CompactFanIn − 1.
//   - Else a segment whose dead fraction ρ_dead (rows dead at every
//     epoch ≥ the oldest pinned epoch P) exceeds θ_compact
//     (CompactDeadFraction), or that has no rows, is rewritten alone
//     without those rows.
//   - Else a tier holding more than CompactMaxSegments segments is due:
//     its CompactFanIn smallest segments are merged. The smallest due
//     tier goes first (cheapest, and the one flushes fill).
//
// With F = CompactFanIn and T = CompactMaxSegments, a row is rewritten
// about log_F(N / flush size) times (write amplification O(log N)), and
// the warm tier holds at most about T segments per tier, i.e.
// T·log_F(N / flush size) + T segments.
//
// Background compaction (Options.AutoCompact) runs in compactLanes
// goroutines beside the flushes: a flush never waits for a merge to be
// built, only for a merge's final swap, and a merge never waits for a
// flush's build to finish before it starts. Two merges never share an
// input. While one merge runs, a second one starts only if its inputs
// are smaller than the running merge's, so a long merge of large
// segments never keeps the small segments that flushes produce from being
// merged: the segment count (and with it the write stalls at
// StopSegments) stays bounded by the cost of merging small segments,
// independent of the collection size.
//
// Each merge builds its output with writes and queries going on, then
// takes the maintenance lock (so no flush, archive or backup is between
// its steps), holds writes while deaths that happened meanwhile are
// carried over, and commits one manifest edit {remove inputs, add
// output, its tombstones ≤ the durable epoch}. An input that an Archive
// moved to the cold tier meanwhile makes the merge give up its output.

const (
	// compactFloorBytes: segments smaller than this count as this large
	// when they are put in tiers (Lucene's floorSegmentMB).
	compactFloorBytes = 8 << 10
	// compactTierRatio: a tier spans sizes within this factor of its
	// smallest segment.
	compactTierRatio = 2
	// compactLanes is the number of background merges that may run at
	// once (see the rule above).
	compactLanes = 2
)

// compactor tracks the running merges (zero value ready to use).
type compactor struct {
	mu      sync.Mutex
	busy    map[*warmSegment]bool // inputs of running merges and index builds
	running map[*mergePlan]bool
	// indexing holds the running deferred index builds (deferred.go):
	// they reserve their segment in busy like a merge, so a merge never
	// takes it meanwhile and no build takes a merge's input, but they do
	// not count as merge lanes.
	indexing map[*mergePlan]bool
	changed  chan struct{} // closed (and replaced) when a merge or index build ends
}

// mergePlan is one merge: its inputs (in the view's order) and their
// total size in bytes.
type mergePlan struct {
	inputs []*warmSegment
	bytes  uint64
	P      uint64 // rows dead at every epoch ≥ P are dropped
	// index: a deferred index build (deferred.go) of its one input:
	// threads picks the goroutines of each build step.
	index   bool
	threads func() (int, error)
	// committed: the index build's manifest edit is done (runMerge counts
	// it in IndexBuilds once the inputs are released).
	committed bool
}

// wait returns a channel closed when a running merge ends (caller holds
// c.mu).
func (c *compactor) waitCh() chan struct{} {
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

// done releases p's inputs and the references reserve took (outside
// c.mu: the last reference frees the segment, file I/O), then runs
// after (if non-nil), and only then wakes the waiters (waitCh): a waiter
// sees everything the merge or index build did, its count included.
func (c *compactor) done(p *mergePlan, after func()) {
	c.mu.Lock()
	for _, sg := range p.inputs {
		delete(c.busy, sg)
	}
	delete(c.running, p)
	delete(c.indexing, p)
	ch := c.changed
	c.changed = nil
	c.mu.Unlock()
	for _, sg := range p.inputs {
		sg.unref()
	}
	if after != nil {
		after()
	}
	if ch != nil {
		close(ch)
	}
}

// segSize is a segment's size for tiering.
func segSize(sg *warmSegment) uint64 { return max(sg.meta.SizeBytes, compactFloorBytes) }

// mostlyDead reports whether sg has no rows or a dead fraction at P above
// theta.
func mostlyDead(sg *warmSegment, P uint64, theta float64) bool {
	if sg.meta.Rows == 0 {
		return true
	}
	lim := theta * float64(sg.meta.Rows)
	sg.deadMu.RLock()
	nd := len(sg.dead)
	sg.deadMu.RUnlock()
	if float64(nd) <= lim { // dead at P ⊆ dead at all
		return false
	}
	return float64(sg.deadRows(P)) > lim
}

// pickMode selects the rules of pickMerge.
type pickMode int

const (
	// pickBackground: the dead-fraction rule, the tier rule, and the
	// count rule at SlowdownSegments; at most compactLanes merges, a
	// second one only smaller than the running one.
	pickBackground pickMode = iota
	// pickExplicit (Store.Compact): the count rule while more than target
	// segments exist (the newest segments when target is 1), and the
	// dead-fraction rule for segments in only (nil: all); no lane limit.
	pickExplicit
)

// pickMerge chooses the next merge among the segments of the current
// view that no running merge holds, and reserves them. It returns nil
// when nothing is due (wait: a running merge may make something due).
func (s *Store) pickMerge(mode pickMode, only map[*warmSegment]bool, target int) (p *mergePlan, wait bool) {
	P := s.OldestPinnedEpoch()
	c := &s.compactor
	c.mu.Lock()
	v := s.currentView() // under c.mu: as in pickIndex (deferred.go)
	defer v.unref()
	defer c.mu.Unlock()
	wait = len(c.running) > 0 || len(c.indexing) > 0
	if s.closed.Load() {
		return nil, false
	}
	if mode == pickBackground && len(c.running) >= compactLanes {
		return nil, wait
	}
	var free []*warmSegment
	for _, sg := range v.segs {
		if !c.busy[sg] {
			free = append(free, sg)
		}
	}
	bySize := slices.Clone(free)
	sort.SliceStable(bySize, func(i, j int) bool { return bySize[i].meta.SizeBytes < bySize[j].meta.SizeBytes })
	fanIn := s.o.CompactFanIn
	// The count rule first (it relieves write stalls, and its merge drops
	// its inputs' dead rows too), then dead fractions, then tiers.
	var inputs []*warmSegment
	if n := len(v.segs); len(bySize) >= 2 &&
		((mode == pickBackground && s.o.StopSegments >= 0 && n >= s.o.SlowdownSegments) ||
			(mode == pickExplicit && n > target)) {
		inputs = bySize[:min(len(bySize), fanIn)]
		if mode == pickExplicit && target == 1 {
			// Merging everything: the newest segments first, so each
			// output takes its inputs' place at the end of the id order
			// and the final segment holds the rows in the order the
			// segments had (as one merge of all of them would).
			inputs = free[len(free)-min(len(free), fanIn):]
		}
	}
	for _, sg := range free {
		if inputs != nil {
			break
		}
		if (only == nil || only[sg]) && mostlyDead(sg, P, s.o.CompactDeadFraction) {
			inputs = []*warmSegment{sg}
		}
	}
	if inputs == nil && mode == pickBackground {
		for i := 0; i < len(bySize); {
			j := i + 1
			for j < len(bySize) && segSize(bySize[j]) <= compactTierRatio*segSize(bySize[i]) {
				j++
			}
			if j-i > s.o.CompactMaxSegments {
				inputs = bySize[i : i+min(j-i, fanIn)]
				break
			}
			i = j
		}
	}
	if inputs == nil {
		return nil, wait
	}
	p = &mergePlan{P: P}
	for _, sg := range v.segs { // keep the view's (segment id) order
		if slices.Contains(inputs, sg) {
			p.inputs = append(p.inputs, sg)
			p.bytes += sg.meta.SizeBytes
		}
	}
	if mode == pickBackground {
		for r := range c.running {
			if p.bytes >= r.bytes {
				return nil, wait
			}
		}
	}
	c.reserve(p, false)
	return p, wait
}

// reserve marks p's inputs busy and p running, as a merge or (index) as
// a deferred index build (caller holds c.mu and a view holding p's
// inputs). It takes a reference on each input, which done drops, so an
// input that leaves the view meanwhile (Archive) stays open, mapped and
// readable until the merge or build has finished with it.
func (c *compactor) reserve(p *mergePlan, index bool) {
	if c.busy == nil {
		c.busy = map[*warmSegment]bool{}
		c.running = map[*mergePlan]bool{}
		c.indexing = map[*mergePlan]bool{}
	}
	for _, sg := range p.inputs {
		if c.busy[sg] {
			panic("tier: a segment reserved by two merges or index builds")
		}
		c.busy[sg] = true
		sg.ref()
	}
	if index {
		c.indexing[p] = true
	} else {
		c.running[p] = true
	}
}

// Compact rewrites warm segments: every segment whose dead fraction
// ρ_dead (rows dead at every epoch ≥ the oldest pinned one) exceeds
// CompactDeadFraction is rewritten without those rows, and when more
// than CompactMaxSegments segments exist, all of them are merged into
// one, the CompactFanIn newest at a time (so the rows keep the segments'
// order). Each merge is one bounded
// step (compact.go) with its own manifest edit: the surviving rows
// (with their e_birth and any later e_death) go into one new segment
// with a rebuilt vector index, one manifest edit removes the inputs and
// adds it, and the inputs' files are deleted once no Snapshot uses them.
// Queries and writes continue throughout; writes wait only for each
// final swap. Compact also waits for running background merges whose
// outputs it may need to merge further. Then the cold archives are
// compacted (CompactArchives).
func (s *Store) Compact(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := s.compactSegments(ctx); err != nil {
		return err
	}
	s.maintMu.Lock()
	defer s.maintMu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	return s.compactArchivesLocked(ctx)
}

// compactSegments is the warm part of Compact.
func (s *Store) compactSegments(ctx context.Context) error {
	v := s.currentView()
	only := map[*warmSegment]bool{} // the dead-fraction rule: once per segment
	for _, sg := range v.segs {
		only[sg] = true
	}
	target := s.o.CompactMaxSegments
	if len(v.segs) > target {
		target = 1 // too many: merge them all, CompactFanIn at a time
	}
	v.unref()
	// Each count-rule merge lowers the count by ≥ 1; flushes meanwhile
	// may raise it: stop after a bounded number of steps.
	for steps := 2*len(only) + 2; steps > 0; steps-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.Err(); err != nil {
			return err
		}
		if s.closed.Load() {
			return ErrClosed
		}
		p, wait := s.pickMerge(pickExplicit, only, target)
		if p == nil {
			if !wait {
				return nil
			}
			s.compactor.mu.Lock()
			ch := s.compactor.waitCh()
			running := len(s.compactor.running) + len(s.compactor.indexing)
			s.compactor.mu.Unlock()
			if running > 0 {
				select {
				case <-ch:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			followIndexBuilds(s, only)
			continue
		}
		for _, sg := range p.inputs {
			delete(only, sg)
		}
		if err := s.runMerge(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// followIndexBuilds puts into only the segments that deferred index
// builds (deferred.go) made from segments in only, in their place: an
// explicit Compact that waited for such a build applies its rules to the
// indexed copy (a Purge's rows dead since the build started included).
func followIndexBuilds(s *Store, only map[*warmSegment]bool) {
	ids := map[uint64]*warmSegment{}
	for sg := range only {
		ids[sg.meta.ID] = sg
	}
	v := s.currentView()
	defer v.unref()
	for _, sg := range v.segs {
		if old, ok := ids[sg.indexedFrom]; ok && sg.indexedFrom != 0 {
			delete(only, old)
			only[sg] = true
		}
	}
}

// errMergeInputGone: an input of a merge left the warm tier (Archive)
// before the merge committed; its output is dropped.
var errMergeInputGone = errors.New("tier: merge input no longer a warm segment")

// runMerge builds p's output segment and commits it, then releases p.
func (s *Store) runMerge(ctx context.Context, p *mergePlan) error {
	defer func() {
		// The inputs' files are deleted in done if no view holds them; an
		// index build is counted once everything it does is done.
		s.compactor.done(p, func() {
			if p.index && p.committed {
				s.indexBuilds.Add(1)
			}
		})
		s.kickCompact()
		s.kickIndex() // a merge that did not commit leaves its flat inputs pending
	}()
	err := s.merge(ctx, p)
	if errors.Is(err, errMergeInputGone) {
		return nil
	}
	return err
}

// rewriteSrc is where a row of a rewritten segment comes from.
type rewriteSrc struct {
	sg  *warmSegment
	row uint32
}

func (s *Store) merge(ctx context.Context, p *mergePlan) error {
	type src = rewriteSrc
	var rows []segRow
	var srcs []src
	bo := s.buildOptions()
	// While a Flush waits for deferred index builds (deferred.go), every
	// merge's HNSW build uses every core from its next step on (a Flush
	// may be waiting for this one).
	bo.boost = func() bool { return s.indexUrgent.Load() > 0 }
	if p.index {
		bo.threadsAt = func() (int, error) {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			return p.threads()
		}
	}
	lm, lexMerge := bo.lexical.(LexicalMerger)
	var lexSecs [][]byte
	var lexPaths []string
	var lexDel []*roaring.Bitmap
	for _, sg := range p.inputs {
		del := roaring.New()
		for r := range sg.docs {
			if sg.death[r].Load() > p.P {
				rows = append(rows, segRow{doc: sg.docs[r], birth: sg.birth[r]})
				srcs = append(srcs, src{sg, uint32(r)})
			} else {
				del.Add(uint32(r))
			}
		}
		lexMerge = lexMerge && sg.lex != nil
		lexSecs, lexPaths, lexDel = append(lexSecs, sg.lex), append(lexPaths, sg.path), append(lexDel, del)
	}
	if p.index && len(p.inputs) == 1 && p.inputs[0].lex != nil && p.inputs[0].lexSpan == nil && len(rows) == len(p.inputs[0].docs) {
		// Every row kept in its place: the BM25 section is the same (a
		// lazily fetched one, lexSpan, is merged: its bytes may be absent).
		bo.lexicalBytes = p.inputs[0].lex
	} else if lexMerge && len(rows) > 0 {
		// Merge the inputs' BM25 sections without their dropped rows
		// (same row order as rows), instead of re-analysing.
		lb, err := lm.MergeLexical(lexSecs, lexPaths, lexDel)
		if err != nil {
			return fmt.Errorf("tier: compaction lexical merge: %w", err)
		}
		bo.lexicalBytes = lb
	}
	if p.index && s.o.TestingIndexHook != nil {
		s.o.TestingIndexHook("build")
	}
	id := s.allocSegmentID()
	var seg *warmSegment
	if len(rows) > 0 {
		var err error
		if seg, err = s.buildSegmentFile(ctx, id, rows, bo); err != nil {
			return err
		}
	}
	if p.index && s.o.TestingIndexHook != nil {
		s.o.TestingIndexHook("commit")
	}
	if err := s.commitRewrite(ctx, p.inputs, id, seg, srcs); err != nil {
		return err
	}
	if p.index {
		if seg != nil {
			seg.indexedFrom = p.inputs[0].meta.ID
		}
		p.committed = true
		return nil
	}
	s.compactions.Add(1)
	s.mergedRows.Add(int64(len(rows)))
	for {
		m := s.maxMergeInputs.Load()
		if int64(len(p.inputs)) <= m || s.maxMergeInputs.CompareAndSwap(m, int64(len(p.inputs))) {
			break
		}
	}
	return nil
}

// commitRewrite replaces the segments inputs by seg (id; nil: no rows
// survived), whose row i is srcs[i], in one manifest edit, as a merge's
// or a deferred index build's last step: under the maintenance lock and
// with writes held, every death of a source row (those that happened
// during the build included) is carried over to its new row, and the
// edit {remove inputs, add seg, its tombstones ≤ the durable epoch}
// commits; later deaths are rebuilt by WAL replay by id. The inputs'
// files are deleted once no view holds them. An input no longer in the
// view (archived meanwhile) drops seg with errMergeInputGone; so does a
// closed store (ErrClosed) or a done ctx.
func (s *Store) commitRewrite(ctx context.Context, inputs []*warmSegment, id uint64, seg *warmSegment, srcs []rewriteSrc) error {
	drop := func() {
		if seg != nil {
			seg.obsolete.Store(true)
			seg.free()
		}
	}
	s.maintMu.Lock()
	defer s.maintMu.Unlock()
	if s.closed.Load() {
		drop()
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		drop()
		return err
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	cur := s.cur
	for _, sg := range inputs {
		if !containsSeg(cur.segs, sg) {
			drop()
			return errMergeInputGone
		}
	}
	// Writes are held: carry every death (including those that happened
	// during the build) over to the new rows. Deaths after the durable
	// epoch are not persisted here: WAL replay rebuilds them by id.
	D := s.manifest.State().DurableEpoch
	edit := Edit{NextSegmentID: s.segmentIDCounter(id)}
	for _, sg := range inputs {
		edit.Remove = append(edit.Remove, sg.meta.ID)
	}
	if seg != nil {
		edit.Add = []SegmentMeta{seg.meta}
		for i, sr := range srcs {
			d := sr.sg.death[sr.row].Load()
			if d == epochLive {
				continue
			}
			seg.setDeath(uint32(i), d)
			if d <= D {
				edit.Tombstones = append(edit.Tombstones, Tombstone{Segment: id, Row: uint32(i), Death: d})
			}
		}
	}
	if err := s.manifest.Apply(edit); err != nil {
		drop()
		if s.manifest.Err() != nil {
			return fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		return err
	}
	var segs []*warmSegment
	for _, sg := range cur.segs {
		if !containsSeg(inputs, sg) {
			segs = append(segs, sg)
		}
	}
	if seg != nil {
		segs = append(segs, seg)
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].meta.ID < segs[j].meta.ID })
	for _, sg := range inputs {
		sg.obsolete.Store(true)
	}
	s.swapView(cur.derive(segs, cur.cold))
	return nil
}

// allocSegmentID reserves a segment or archive id that no manifest entry
// and no other running build uses (merges build beside flushes, so the
// manifest's counter alone would hand one id out twice).
func (s *Store) allocSegmentID() uint64 {
	s.idMu.Lock()
	defer s.idMu.Unlock()
	id := max(s.manifest.State().NextSegmentID, s.idNext, 1)
	s.idNext = id + 1
	return id
}

// segmentIDCounter is the NextSegmentID of an edit committing id: past
// id and every id reserved so far, so the counter never goes back.
func (s *Store) segmentIDCounter(id uint64) uint64 {
	s.idMu.Lock()
	defer s.idMu.Unlock()
	return max(s.idNext, id+1)
}

// kickCompact wakes the background merge lanes.
func (s *Store) kickCompact() {
	if s.compactKick == nil {
		return
	}
	select {
	case s.compactKick <- struct{}{}:
	default:
	}
}

// compactLane is one background merge goroutine (AutoCompact): it runs
// merges while pickMerge finds one, then waits for a kick (a flush, the
// end of a merge, or a stalled write).
func (s *Store) compactLane(done *sync.WaitGroup) {
	defer done.Done()
	for {
		select {
		case <-s.bgStop:
			return
		case <-s.compactKick:
		}
		for !s.closed.Load() && s.Err() == nil {
			p, _ := s.pickMerge(pickBackground, nil, 0)
			if p == nil {
				break
			}
			s.kickCompact() // another lane may take a smaller merge
			if err := s.runMerge(s.compactCtx, p); err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, context.Canceled) {
				s.o.Logger.Warn("tier: background compaction failed", "err", err)
				break
			}
		}
	}
}

// waitMerges waits until no merge and no deferred index build runs
// (Close, after s.closed is set: pickMerge and pickIndex start none once
// it is).
func (s *Store) waitMerges() {
	for {
		c := &s.compactor
		c.mu.Lock()
		if len(c.running) == 0 && len(c.indexing) == 0 {
			c.mu.Unlock()
			return
		}
		ch := c.waitCh()
		c.mu.Unlock()
		<-ch
	}
}
