package static

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// builtinTable is the shipped table (tools/embedtable, `make embedder`),
// zstd-compressed.
//
//go:embed glove6b-sif.stt.zst
var builtinTable []byte

// BuiltinName is the file name of the shipped table, used in errors.
const BuiltinName = "engine/embed/static/glove6b-sif.stt.zst"

var builtin struct {
	once sync.Once
	e    *Embedder
	err  error
}

// Builtin returns the Embedder over the shipped table (GloVe 6B 100-d
// with SIF weights; see the package doc). The table is decompressed and
// decoded once per process, on first use (a few tens of ms, about 6 MB of
// memory).
func Builtin() (*Embedder, error) {
	builtin.once.Do(func() {
		t, err := DecodeZstd(builtinTable, BuiltinName)
		if err != nil {
			builtin.err = err
			return
		}
		builtin.e = New(t)
	})
	return builtin.e, builtin.err
}

// BuiltinModel is the model name of the Builtin table, known without
// decoding it.
func BuiltinModel() string {
	e, err := Builtin()
	if err != nil {
		return ""
	}
	return e.Model()
}

// MaxTableBytes bounds a decompressed table (DecodeZstd).
const MaxTableBytes = 256 << 20

// DecodeZstd decompresses a zstd-compressed table (at most MaxTableBytes
// decompressed) and decodes it (Decode). A zstd error is reported as a
// corrupt table at offset 0 of the compressed input.
func DecodeZstd(z []byte, path string) (*Table, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxTableBytes))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	raw, err := dec.DecodeAll(z, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: zstd: %w", path, err)
	}
	return Decode(raw, path)
}

// EncodeZstd encodes t (Encode) and compresses it with zstd at its best
// compression level.
func EncodeZstd(t *Table) ([]byte, error) {
	raw, err := Encode(t)
	if err != nil {
		return nil, err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	return enc.EncodeAll(raw, nil), nil
}
