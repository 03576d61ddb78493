//go:build !cgo

package lang

import (
	"errors"
	"testing"
)

// Without cgo every supported language reports ErrUnavailable (ingestion
// then keeps its structural chunker) and an unknown one ErrUnsupported.
func TestParseWithoutCgo(t *testing.T) {
	if Available() {
		t.Fatal("Available without cgo")
	}
	for _, tag := range Languages() {
		if _, err := Parse(tag, []byte("x")); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Parse(%s) = %v, want ErrUnavailable", tag, err)
		}
		if _, err := Query(tag); err != nil {
			t.Errorf("Query(%s): %v", tag, err)
		}
	}
	if _, err := Parse("markdown", nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Parse(markdown) = %v, want ErrUnsupported", err)
	}
}
