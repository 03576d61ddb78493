package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
)

func TestFlushCompactStatsList(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 2})
	var want []string
	for i := range 57 {
		id := fmt.Sprintf("d%03d", i)
		want = append(want, id)
		mustUpsert(t, c, doc(id, "alpha beta "+id, []float32{1, float32(i + 1)}))
	}
	if _, err := c.Delete(ctx, []string{"d000", "d010"}); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(want, func(s string) bool { return s == "d000" || s == "d010" })
	sort.Strings(want)

	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	if st.LiveDocs != len(want) || st.WarmSegments != 1 || st.Flushes != 1 || st.Err != "" || st.DurableEpoch != st.Epoch {
		t.Fatalf("stats after flush: %+v (want %d live, 1 segment)", st, len(want))
	}
	// Pages of 10 concatenate to every live id exactly once, in order.
	var got []string
	after := ""
	for {
		page, err := c.List(ctx, after, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		got = append(got, page...)
		after = page[len(page)-1]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List pages = %v, want %v", got, want)
	}
	if _, err := c.List(ctx, "", 0); err == nil {
		t.Fatal("List limit 0 accepted")
	}
	// Delete a third of the warm rows, then compaction drops them.
	var del []string
	for i := 1; i < 57; i += 3 {
		del = append(del, fmt.Sprintf("d%03d", i))
	}
	if _, err := c.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	st = c.Stats()
	if st.Compactions < 1 || st.LiveDocs != len(want)-len(del)+countIn(del, []string{"d010"}) {
		t.Fatalf("stats after compaction: %+v", st)
	}
	if st.WarmRows != uint64(st.LiveDocs) {
		t.Fatalf("compacted warm rows %d, live %d: dead rows left", st.WarmRows, st.LiveDocs)
	}
	if err := c.db.Err(); err != nil {
		t.Fatal(err)
	}
}

func countIn(xs, set []string) int {
	n := 0
	for _, x := range xs {
		if slices.Contains(set, x) {
			n++
		}
	}
	return n
}
