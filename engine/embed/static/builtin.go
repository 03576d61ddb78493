package static

import (
	"context"
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

// BuiltinModel and BuiltinDim are the model name and dimension of the
// Builtin table (TestBuiltin checks them against the decoded table).
const (
	BuiltinModel = "glove6b-sif-100d-v1"
	BuiltinDim   = 100
)

// Lazy is an embed.Embedder over the Builtin table that decodes it on its
// first Embed call, so registering it costs nothing until a text is
// embedded. Model and Dim are BuiltinModel and BuiltinDim.
type Lazy struct{}

// Embed embeds texts with Builtin (see Embedder.Embed); it fails only if
// the shipped table does not decode or ctx is cancelled.
func (Lazy) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e, err := Builtin()
	if err != nil {
		return nil, err
	}
	return e.Embed(ctx, texts)
}

// Dim returns BuiltinDim.
func (Lazy) Dim() int { return BuiltinDim }

// Model returns BuiltinModel.
func (Lazy) Model() string { return BuiltinModel }

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
