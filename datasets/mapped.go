package datasets

import (
	"encoding/binary"
	"fmt"
	"github.com/stratasearch/strata/internal/mmap"
	"os"
	"unsafe"
)

// Mapped is a read-only, whole-file view of a TEXMEX vector file. On
// little-endian Linux and macOS the file is mmapped and Row returns slices
// that point into the mapping (zero copy); elsewhere the file is read and
// decoded into memory. Every record header is checked at open time.
//
// The file layout interleaves a 4-byte dimension before each row, so rows
// are not contiguous in the file: use Row, or Matrix for a contiguous n×d
// copy (what the batch distance kernels need). Slices returned by Row must
// not be used after Close.
type Mapped[T Elem] struct {
	n, d  int
	rec   int    // bytes per record: 4 + d*sizeof(T)
	b     []byte // file bytes (mapped or read); nil when decoded
	dec   Matrix[T]
	unmap func() error
}

// OpenFvecs opens a .fvecs file for random access. See Mapped.
func OpenFvecs(path string) (*Mapped[float32], error) { return openMapped[float32](path) }

// OpenIvecs opens a .ivecs file for random access. See Mapped.
func OpenIvecs(path string) (*Mapped[int32], error) { return openMapped[int32](path) }

// OpenBvecs opens a .bvecs file for random access. See Mapped.
func OpenBvecs(path string) (*Mapped[uint8], error) { return openMapped[uint8](path) }

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func openMapped[T Elem](path string) (*Mapped[T], error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	size := fi.Size()
	if size != int64(int(size)) {
		return nil, fmt.Errorf("datasets: %s: file too large (%d bytes)", path, size)
	}
	var b []byte
	unmap := func() error { return nil }
	if size > 0 {
		if littleEndian && mmap.Supported {
			b, unmap, err = mmap.MapFile(f)
		} else {
			b, err = os.ReadFile(path)
		}
		if err != nil {
			return nil, fmt.Errorf("datasets: %s: %w", path, err)
		}
	}
	m, err := newMapped[T](path, b)
	if err != nil {
		unmap()
		return nil, err
	}
	m.unmap = unmap
	if !littleEndian || !mmap.Supported {
		// Decode once so Row needs no unsafe view.
		m.dec = Matrix[T]{N: m.n, D: m.d, Data: make([]T, m.n*m.d)}
		for i := 0; i < m.n; i++ {
			decodeElems(m.dec.Row(i), b[i*m.rec+4:(i+1)*m.rec])
		}
		m.b = nil
	}
	return m, nil
}

// newMapped validates every record header of b.
func newMapped[T Elem](name string, b []byte) (*Mapped[T], error) {
	m := &Mapped[T]{b: b}
	if len(b) == 0 {
		return m, nil
	}
	es := elemSize[T]()
	var rec int64
	for off := 0; off < len(b); rec++ {
		if len(b)-off < 4 {
			return nil, corruptf(name, rec, 0, int64(off), "truncated dimension header (%d of 4 bytes)", len(b)-off)
		}
		d := int64(int32(binary.LittleEndian.Uint32(b[off:])))
		if d <= 0 || d > MaxDim {
			return nil, corruptf(name, rec, 0, int64(off), "dimension %d out of range [1, %d]", d, MaxDim)
		}
		if rec == 0 {
			m.d = int(d)
			m.rec = 4 + m.d*es
		} else if int(d) != m.d {
			return nil, corruptf(name, rec, 0, int64(off), "dimension %d differs from first record's %d", d, m.d)
		}
		if len(b)-off < m.rec {
			return nil, corruptf(name, rec, 0, int64(off), "truncated record body (%d of %d bytes)", len(b)-off-4, m.rec-4)
		}
		off += m.rec
	}
	m.n = int(rec)
	return m, nil
}

// Len returns the number of vectors n.
func (m *Mapped[T]) Len() int { return m.n }

// Dim returns the dimension d (0 for an empty file).
func (m *Mapped[T]) Dim() int { return m.d }

// Row returns vector i (d elements), 0 <= i < Len().
func (m *Mapped[T]) Row(i int) []T {
	if m.b == nil {
		return m.dec.Row(i)
	}
	off := i*m.rec + 4
	_ = m.b[off+m.rec-5] // bounds check
	return unsafe.Slice((*T)(unsafe.Pointer(&m.b[off])), m.d)
}

// Matrix returns a contiguous n×d copy of all vectors.
func (m *Mapped[T]) Matrix() Matrix[T] {
	out := Matrix[T]{N: m.n, D: m.d, Data: make([]T, 0, m.n*m.d)}
	for i := 0; i < m.n; i++ {
		out.Data = append(out.Data, m.Row(i)...)
	}
	return out
}

// Close releases the mapping. It is safe to call more than once.
func (m *Mapped[T]) Close() error {
	u := m.unmap
	m.unmap = nil
	m.b = nil
	m.dec = Matrix[T]{}
	m.n = 0
	if u == nil {
		return nil
	}
	if err := u(); err != nil {
		return fmt.Errorf("datasets: munmap: %w", err)
	}
	return nil
}
