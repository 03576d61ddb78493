package contract

import (
	"fmt"
	"runtime"
	"testing"
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
