package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/testenv/s3gw"
	"github.com/stratasearch/strata/vfs/objstore"
)

// TestShardFanOut: 16 shards (documents split by ShardOf), each
// published by its own writer under its own prefix of one gateway and
// served by its own reader; a dense query fanned out to all 16 and
// merged (MergeTopK) returns exactly the hits, ids and scores, of one
// collection holding every document. Segments below IVFMinRows vectors
// are scanned exactly (SegmentIndex "ivfpq" → flat), so both sides are
// exact.
func TestShardFanOut(t *testing.T) {
	g := s3gw.Start(t)
	ctx := context.Background()
	const shards, docs, k = 16, 192, 10
	newSt := func(prefix string) *objstore.Store {
		st, err := objstore.New(objstore.Config{Endpoint: g.Endpoint, AccessKey: s3gw.AccessKey, SecretKey: s3gw.SecretKey,
			Bucket: "strata", Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	opts := engine.CollectionOptions{Dim: testDim, Metric: "l2", SegmentIndex: "ivfpq"}
	whole := newDBT(t)
	wc, err := whole.db.CreateCollection("docs", opts)
	if err != nil {
		t.Fatal(err)
	}
	parts := make([][]contract.Document, shards)
	var all []contract.Document
	for i := 0; i < docs; i++ {
		d := doc(i, 11)
		all = append(all, d)
		s := ShardOf(d.ID, shards)
		parts[s] = append(parts[s], d)
	}
	if _, err := wc.Upsert(ctx, all); err != nil {
		t.Fatal(err)
	}
	if err := wc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	root := ShardMap{Version: 1}
	readers := make([]*Reader, shards)
	for s := 0; s < shards; s++ {
		if len(parts[s]) == 0 {
			t.Fatalf("shard %d empty", s)
		}
		d := newDBT(t)
		c, err := d.db.CreateCollection("docs", opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Upsert(ctx, parts[s]); err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		prefix := fmt.Sprintf("cluster/shard-%02d", s)
		st := newSt(prefix)
		if err := st.EnsureBucket(ctx); err != nil {
			t.Fatal(err)
		}
		w, err := OpenWriter(ctx, st, d.db, WriterOptions{LeaseTTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		v, err := w.Publish(ctx)
		if err != nil {
			t.Fatal(err)
		}
		root.Prefixes = append(root.Prefixes, prefix)
		root.Epochs = append(root.Epochs, v)
		readers[s] = openReader(t, st)
	}
	rootSt := newSt("cluster")
	if err := PublishShardMap(ctx, rootSt, root); err != nil {
		t.Fatal(err)
	}
	b, _, err := rootSt.Get(ctx, "root/00000000000000000001.json")
	var got ShardMap
	if err != nil || json.Unmarshal(b, &got) != nil || len(got.Prefixes) != shards {
		t.Fatalf("root manifest: %v", err)
	}
	for qi := 0; qi < 10; qi++ {
		q := contract.Query{Vector: doc(5000+qi, 3).Vector, Mode: contract.Dense, TopK: k}
		want, err := wc.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var lists [][]contract.Envelope
		for s, r := range readers {
			v := r.Acquire()
			if v.Version != got.Epochs[s] {
				t.Fatalf("shard %d serves version %d, root says %d", s, v.Version, got.Epochs[s])
			}
			res, err := mustCol(t, v.DB, "docs").Search(ctx, q)
			v.Release()
			if err != nil {
				t.Fatal(err)
			}
			lists = append(lists, res.Hits)
		}
		merged := MergeTopK(lists, k)
		if len(merged) != len(want.Hits) {
			t.Fatalf("query %d: %d merged hits, %d from one collection", qi, len(merged), len(want.Hits))
		}
		for i := range merged {
			if merged[i].DocID != want.Hits[i].DocID || merged[i].Score != want.Hits[i].Score {
				t.Fatalf("query %d rank %d: merged %s %v, one collection %s %v", qi, i, merged[i].DocID, merged[i].Score,
					want.Hits[i].DocID, want.Hits[i].Score)
			}
		}
	}
}
