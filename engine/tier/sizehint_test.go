package tier

import (
	"math/rand/v2"
	"testing"
)

// TestDocFieldsSize checks docFieldsSize against what appendDocFields
// writes, over documents with and without each optional field.
func TestDocFieldsSize(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	str := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return string(b)
	}
	for i := 0; i < 500; i++ {
		d := &Document{SourceURI: str(r.IntN(300)), Namespace: str(r.IntN(20)), Trust: Trust(r.IntN(3))}
		for j := r.IntN(4); j > 0; j-- {
			d.ACL = append(d.ACL, str(r.IntN(200)))
		}
		if r.IntN(2) == 0 {
			d.Metadata = map[string]string{}
			for j := r.IntN(6); j > 0; j-- {
				d.Metadata[str(1+r.IntN(10))] = str(r.IntN(400))
			}
		} else if r.IntN(2) == 0 {
			d.EncodedMetadata = AppendMetadataEntry(AppendMetadataCount(nil, 1), "k", str(r.IntN(300)))
		}
		if r.IntN(2) == 0 {
			d.Vector = make([]float32, r.IntN(200))
		}
		if got, want := docFieldsSize(d), len(appendDocFields(nil, d)); got != want {
			t.Fatalf("doc %d: docFieldsSize %d, appendDocFields wrote %d", i, got, want)
		}
	}
	for _, v := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<63 - 1, 1<<64 - 1} {
		if got, want := uvarintSize(v), len(appendUvarintForTest(v)); got != want {
			t.Fatalf("uvarintSize(%d) = %d, want %d", v, got, want)
		}
	}
}

func appendUvarintForTest(v uint64) []byte {
	var b []byte
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
