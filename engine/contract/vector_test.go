package contract

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// FuzzVectorWire: on every input encoding/json accepts as a []float32
// without a null element, vectorWire decodes the same values (bit for
// bit); whatever vectorWire accepts, encoding/json accepts alike.
func FuzzVectorWire(f *testing.F) {
	for _, s := range []string{`[1,2,3]`, `[]`, ` [ 0.5 , -1e-7 ,3.4028234e38 ] `, `[1e39]`, `[1,null]`, `["1"]`, `[[1]]`,
		`[1,]`, `null`, `[-0]`, `[1.17549435e-38, 1e-46]`, `{}`, `[ ]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // strictUnmarshal never hands vectorWire invalid JSON
		}
		var ref []float32
		refErr := json.Unmarshal(data, &ref)
		var got vectorWire
		err := json.Unmarshal(data, &got)
		hasNull := bytes.Contains(data, []byte("null")) && !bytes.Equal(bytes.TrimSpace(data), []byte("null"))
		switch {
		case err == nil && refErr != nil:
			t.Fatalf("%s: accepted, encoding/json refuses: %v", data, refErr)
		case err != nil && refErr == nil && !hasNull:
			t.Fatalf("%s: refused (%v), encoding/json accepts %v", data, err, ref)
		case err == nil:
			if len(got) != len(ref) {
				t.Fatalf("%s: %v vs %v", data, got, ref)
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("%s: element %d %v vs %v", data, i, got[i], ref[i])
				}
			}
		}
	})
}
