package datasets

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// IDX magic numbers (big-endian): two zero bytes, the element type 0x08
// (unsigned byte), and the number of dimensions.
const (
	IDXMagicLabels = 0x00000801 // 1-D: n labels
	IDXMagicImages = 0x00000803 // 3-D: n × rows × cols pixels
)

// IDXImages is a decoded idx3-ubyte image file: N images of Rows×Cols
// pixels, flattened row-major into an N×(Rows·Cols) float32 matrix holding
// the raw byte values 0..255 (as ann-benchmarks does: no scaling).
type IDXImages struct {
	Rows, Cols int
	Matrix[float32]
}

// OpenMaybeGzip opens path and returns a reader that transparently
// decompresses gzip input (detected by the magic bytes 1f 8b, whatever the
// file extension). Close closes both layers.
func OpenMaybeGzip(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	r, err := maybeGunzip(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{r, f}, nil
}

func maybeGunzip(r io.Reader, name string) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &CorruptError{Kind: corruptKind, Path: name, Reason: "bad gzip header", Err: err}
		}
		return &gzipErrReader{zr: zr, name: name}, nil
	}
	return br, nil
}

// gzipErrReader converts gzip decoding errors into *CorruptError.
type gzipErrReader struct {
	zr   *gzip.Reader
	name string
	off  int64
}

func (g *gzipErrReader) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	g.off += int64(n)
	if err != nil && err != io.EOF && isGzipCorrupt(err) {
		return n, &CorruptError{Kind: corruptKind, Path: g.name, Offset: g.off, Reason: "gzip stream (offset counts decompressed bytes)", Err: err}
	}
	return n, err
}

func isGzipCorrupt(err error) bool {
	var ce flate.CorruptInputError
	var ie flate.InternalError
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, gzip.ErrHeader) || errors.As(err, &ce) || errors.As(err, &ie)
}

type idxHeader struct {
	magic uint32
	dims  []int
	off   int64
}

func readIDXHeader(r io.Reader, name string, want uint32) (idxHeader, error) {
	var h idxHeader
	var b [4]byte
	if n, err := io.ReadFull(r, b[:]); err != nil {
		return h, idxIOErr(name, 0, err, "truncated magic (%d of 4 bytes)", n)
	}
	h.magic = binary.BigEndian.Uint32(b[:])
	if h.magic != want {
		return h, corruptf(name, -1, 0, 0, "magic %#08x, want %#08x", h.magic, want)
	}
	nd := int(h.magic & 0xff)
	h.off = 4
	for i := 0; i < nd; i++ {
		if n, err := io.ReadFull(r, b[:]); err != nil {
			return h, idxIOErr(name, h.off, err, "truncated dimension %d (%d of 4 bytes)", i, n)
		}
		v := binary.BigEndian.Uint32(b[:])
		if v > 1<<31-1 {
			return h, corruptf(name, -1, 0, h.off, "dimension %d = %d too large", i, v)
		}
		h.dims = append(h.dims, int(v))
		h.off += 4
	}
	return h, nil
}

func idxIOErr(name string, off int64, err error, format string, args ...any) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return corruptf(name, -1, 0, off, format, args...)
	}
	return fmt.Errorf("datasets: %s: byte offset %d: %w", name, off, err)
}

// DecodeIDXImages decodes an idx3-ubyte stream (magic 0x00000803, then
// big-endian uint32 n, rows, cols, then n·rows·cols bytes). gzip input is
// detected and decompressed. Byte offsets in errors count decompressed
// bytes. Trailing bytes after the last image are an error.
func DecodeIDXImages(r io.Reader, name string) (IDXImages, error) {
	r, err := maybeGunzip(r, name)
	if err != nil {
		return IDXImages{}, err
	}
	h, err := readIDXHeader(r, name, IDXMagicImages)
	if err != nil {
		return IDXImages{}, err
	}
	n, rows, cols := h.dims[0], h.dims[1], h.dims[2]
	if rows == 0 || cols == 0 || int64(rows)*int64(cols) > MaxIDXItemBytes {
		off := int64(8) // the row count; the column count is at 12
		if rows != 0 && cols == 0 {
			off = 12
		}
		return IDXImages{}, corruptf(name, -1, 0, off, "image size %d×%d out of range (1..%d pixels)", rows, cols, MaxIDXItemBytes)
	}
	d := rows * cols
	out := IDXImages{Rows: rows, Cols: cols}
	out.D = d
	// Do not trust n for the allocation: grow as data actually arrives.
	out.Data = make([]float32, 0, min(n, (1<<20)/d)*d) // at most 4 MiB up front
	buf := make([]byte, d)
	off := h.off
	for i := 0; i < n; i++ {
		if k, err := io.ReadFull(r, buf); err != nil {
			return IDXImages{}, idxIOErr2(name, int64(i), off, err, "truncated image (%d of %d bytes; header says %d images)", k, d, n)
		}
		for _, p := range buf {
			out.Data = append(out.Data, float32(p))
		}
		off += int64(d)
	}
	out.N = n
	if err := expectEOF(r, name, off); err != nil {
		return IDXImages{}, err
	}
	return out, nil
}

func idxIOErr2(name string, rec, off int64, err error, format string, args ...any) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return corruptf(name, rec, 0, off, format, args...)
	}
	return fmt.Errorf("datasets: %s: record %d: byte offset %d: %w", name, rec, off, err)
}

func expectEOF(r io.Reader, name string, off int64) error {
	var one [1]byte
	n, err := io.ReadFull(r, one[:])
	if n > 0 {
		return corruptf(name, -1, 0, off, "trailing data after the last item")
	}
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return fmt.Errorf("datasets: %s: byte offset %d: %w", name, off, err)
	}
	return nil
}

// DecodeIDXLabels decodes an idx1-ubyte stream (magic 0x00000801, then
// big-endian uint32 n, then n label bytes), gzip detected transparently.
func DecodeIDXLabels(r io.Reader, name string) ([]uint8, error) {
	r, err := maybeGunzip(r, name)
	if err != nil {
		return nil, err
	}
	h, err := readIDXHeader(r, name, IDXMagicLabels)
	if err != nil {
		return nil, err
	}
	n := h.dims[0]
	out := make([]uint8, 0, min(n, 1<<20))
	buf := make([]byte, 1<<16)
	off := h.off
	for len(out) < n {
		chunk := buf[:min(len(buf), n-len(out))]
		k, err := io.ReadFull(r, chunk)
		out = append(out, chunk[:k]...)
		if err != nil {
			return nil, idxIOErr2(name, int64(len(out)), off+int64(k), err, "truncated labels (%d of %d)", len(out), n)
		}
		off += int64(k)
	}
	if err := expectEOF(r, name, off); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadIDXImages reads an idx3-ubyte(.gz) file. See DecodeIDXImages.
func ReadIDXImages(path string) (IDXImages, error) {
	f, err := os.Open(path)
	if err != nil {
		return IDXImages{}, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	return DecodeIDXImages(f, path)
}

// ReadIDXLabels reads an idx1-ubyte(.gz) file. See DecodeIDXLabels.
func ReadIDXLabels(path string) ([]uint8, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	return DecodeIDXLabels(f, path)
}
