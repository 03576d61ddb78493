package ingest

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// TestReadAllSized: readAllSized returns what io.ReadAll does whatever
// the size hint (exact, short, long, zero), with one-byte and
// error-returning readers (fixed seed).
func TestReadAllSized(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 100000} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.IntN(256))
		}
		for _, hint := range []int64{int64(n), 0, int64(n / 2), int64(n) + 7, -1} {
			for _, wrap := range []func(io.Reader) io.Reader{
				func(x io.Reader) io.Reader { return x }, iotest.OneByteReader, iotest.DataErrReader} {
				got, err := readAllSized(wrap(bytes.NewReader(data)), hint)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("n=%d hint=%d: got %d bytes, err %v", n, hint, len(got), err)
				}
			}
		}
	}
	boom := errors.New("boom")
	if _, err := readAllSized(io.MultiReader(bytes.NewReader([]byte("abc")), iotest.ErrReader(boom)), 3); !errors.Is(err, boom) {
		t.Fatalf("error not passed through: %v", err)
	}
}
