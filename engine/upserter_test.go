package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// randomBatch is a seeded batch of 1–6 documents over ids d0..d9, with
// the problems Upsert must refuse or handle now and then: an empty or
// repeated id, a vector of the wrong dimension or all zeros (cosine), a
// reserved metadata key, an indexed field of the wrong type, a namespace
// a principal may not write, a secret to redact, a version hash given.
func randomBatch(rng *rand.Rand, round int) []contract.Document {
	n := 1 + rng.IntN(6)
	docs := make([]contract.Document, n)
	for i := range docs {
		d := contract.Document{ID: fmt.Sprint("d", rng.IntN(10)), Trust: contract.Authoritative,
			Content: fmt.Sprintf("round %d doc %d words here", round, i), Namespace: []string{"a/", "a/x/", "b/"}[rng.IntN(3)]}
		switch rng.IntN(40) {
		case 0:
			d.ID = ""
		case 1:
			d.Content += " key AKIAIOSFODNN7EXAMPLE"
		case 2:
			d.VersionHash = VersionHashString("given")
		}
		if rng.IntN(3) > 0 {
			d.Vector = []float32{float32(rng.IntN(5)) + 1, float32(rng.NormFloat64()), 0.5, 1}
			switch rng.IntN(30) {
			case 0:
				d.Vector = d.Vector[:3]
			case 1:
				d.Vector = []float32{0, 0, 0, 0}
			}
		}
		if rng.IntN(2) == 0 {
			d.Metadata = map[string]contract.Value{"n": contract.Number(float64(rng.IntN(100))), "s": contract.String("v")}
			switch rng.IntN(30) {
			case 0:
				d.Metadata["n"] = contract.String("not a number")
			case 1:
				d.Metadata["\x00strata.x"] = contract.Bool(true)
			}
		}
		if rng.IntN(4) == 0 {
			d.ACL = []string{"alice"}
		}
		docs[i] = d
	}
	return docs
}

// TestUpserterMatchesUpsertDocs: Upsert (which streams every batch
// through an Upserter into an encoded WAL payload) gives the same epochs,
// the same errors and the same stored documents as upsertDocs, the
// whole-batch path (a tier.Batch of every document, tier.Apply), on 300
// seeded batches with principals, preconditions (right and wrong) and
// VerifiableSources, and after both collections are reopened (replay).
func TestUpserterMatchesUpsertDocs(t *testing.T) {
	ctx := context.Background()
	o := CollectionOptions{Dim: 4, Metric: "cosine", Sync: "none", Redact: "auto",
		IndexedFields: map[string]FieldType{"n": FieldNumber}}
	dbA, dirA := newDB(t)
	dbB, dirB := newDB(t)
	cA, err := dbA.CreateCollection("c", o)
	if err != nil {
		t.Fatal(err)
	}
	cB, err := dbB.CreateCollection("c", o)
	if err != nil {
		t.Fatal(err)
	}
	pa := &contract.Principal{Name: "alice", Namespaces: []string{"a/"}}
	rng := rand.New(rand.NewPCG(16, 5))
	same := func(when string, cA, cB *Collection) {
		t.Helper()
		for k := range 10 {
			id := fmt.Sprint("d", k)
			a, errA := cA.Get(ctx, id)
			b, errB := cB.Get(ctx, id)
			a.Timestamp = b.Timestamp // stamped at different instants
			if fmt.Sprint(errA) != fmt.Sprint(errB) || !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: %s: streamed %+v %v, whole batch %+v %v", when, id, a, errA, b, errB)
			}
		}
	}
	okN, errN := 0, 0
	for round := range 300 {
		docs := randomBatch(rng, round)
		var opts []WriteOption
		if rng.IntN(3) == 0 {
			opts = append(opts, As(pa))
			if rng.IntN(2) == 0 { // every namespace one pa may write
				for i := range docs {
					docs[i].Namespace = "a/"
				}
			}
		}
		if rng.IntN(3) == 0 {
			want := map[string]string{}
			for range 1 + rng.IntN(3) {
				id := fmt.Sprint("d", rng.IntN(10))
				if rng.IntN(3) > 0 {
					id = docs[rng.IntN(len(docs))].ID // most name the batch's ids
				}
				h := ""
				if d, err := cB.Get(ctx, id); err == nil && rng.IntN(3) == 0 {
					h = d.VersionHash
				}
				want[id] = h
			}
			opts = append(opts, IfMatch(want))
		}
		if rng.IntN(5) == 0 {
			opts = append(opts, VerifiableSources())
			docs[0].SourceURI = "file:///src/a.go#L1-L2"
		}
		var wo writeOpts
		for _, f := range opts {
			f(&wo)
		}
		eA, errA := cA.Upsert(ctx, docs, opts...)
		eB, _, errB := cB.upsertDocs(ctx, docs, wo)
		if eA != eB || fmt.Sprint(errA) != fmt.Sprint(errB) || reflect.TypeOf(errA) != reflect.TypeOf(errB) {
			t.Fatalf("round %d: streamed %d %v, whole batch %d %v", round, eA, errA, eB, errB)
		}
		var ve *contract.ValidationError
		if errors.As(errA, &ve) != errors.As(errB, &ve) {
			t.Fatalf("round %d: error kinds differ: %v / %v", round, errA, errB)
		}
		if errA == nil {
			okN++
		} else {
			errN++
		}
		same(fmt.Sprint("round ", round), cA, cB)
	}
	if okN < 50 || errN < 50 {
		t.Fatalf("%d batches applied, %d refused: the workload does not exercise both", okN, errN)
	}
	for _, db := range []*DB{dbA, dbB} {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	rA, err := Open(dirA, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rA.Close()
	rB, err := Open(dirB, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rB.Close()
	if cA, err = rA.Collection("c"); err != nil {
		t.Fatal(err)
	}
	if cB, err = rB.Collection("c"); err != nil {
		t.Fatal(err)
	}
	same("reopened", cA, cB)
}
