package contract

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stratasearch/strata/internal/testenv"
)

// TestValidateDocumentsAllocation: validating a batch of valid documents
// with vectors allocates a few dozen bytes a document (its location and
// the duplicate-id index), not an error location per field checked.
func TestValidateDocumentsAllocation(t *testing.T) {
	const n = 4000
	ds := make([]Document, n)
	for i := range ds {
		ds[i] = Document{ID: fmt.Sprint("d", i), Content: "c", Vector: []float32{1, 2, 3, 4}, Trust: Authoritative}
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	err := ValidateDocuments(ds, 4, ValidateOptions{})
	runtime.ReadMemStats(&ms1)
	if err != nil {
		t.Fatal(err)
	}
	per := (ms1.TotalAlloc - ms0.TotalAlloc) / n
	t.Logf("%d bytes a document", per)
	if per > 90 {
		t.Fatalf("ValidateDocuments allocated %d bytes a document", per)
	}
}

// TestBatchValidatorGrow: after Grow(n), n documents (ids repeated every
// 1,000th, an empty one) give the same errors, indexes and ids as
// without it, with fewer bytes allocated (the id table made once).
func TestBatchValidatorGrow(t *testing.T) {
	const n = 20000
	docs := make([]Document, n)
	for i := range docs {
		docs[i] = Document{ID: fmt.Sprint("d", i), Trust: Derived}
		if i%1000 == 999 {
			docs[i].ID = docs[i-500].ID
		}
	}
	docs[7].ID = ""
	run := func(grow bool) (*BatchValidator, uint64) {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		v := NewBatchValidator(0, ValidateOptions{})
		if grow {
			v.Grow(n)
		}
		for i := range docs {
			v.Add(&docs[i])
		}
		runtime.ReadMemStats(&b)
		return v, b.TotalAlloc - a.TotalAlloc
	}
	plain, aPlain := run(false)
	grown, aGrown := run(true)
	if fmt.Sprint(plain.Errors()) != fmt.Sprint(grown.Errors()) || len(grown.Errors()) != n/1000+1 {
		t.Fatalf("errors differ: %d and %d", len(plain.Errors()), len(grown.Errors()))
	}
	for _, d := range docs {
		i, ok := plain.Index(d.ID)
		j, ok2 := grown.Index(d.ID)
		if i != j || ok != ok2 {
			t.Fatalf("%q: index %d %v and %d %v", d.ID, i, ok, j, ok2)
		}
	}
	t.Logf("allocated %d bytes with Grow, %d without", aGrown, aPlain)
	if !testenv.Race && float64(aGrown) > 0.75*float64(aPlain) {
		t.Errorf("allocated %d bytes with Grow, %d without: want ≤ 0.75×", aGrown, aPlain)
	}
}
