package datasets

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"unsafe"
)

// Elem is the element type of a TEXMEX vector file: float32 (.fvecs),
// int32 (.ivecs) or uint8 (.bvecs).
type Elem interface {
	float32 | int32 | uint8
}

// Matrix is an n×d row-major matrix: row i is Data[i*D : (i+1)*D].
type Matrix[T Elem] struct {
	N, D int
	Data []T
}

// Row returns row i (a sub-slice of Data, not a copy).
func (m Matrix[T]) Row(i int) []T { return m.Data[i*m.D : (i+1)*m.D : (i+1)*m.D] }

func elemSize[T Elem]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

func decodeElems[T Elem](dst []T, src []byte) {
	switch d := any(dst).(type) {
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case []int32:
		for i := range d {
			d[i] = int32(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case []uint8:
		copy(d, src)
	}
}

func encodeElems[T Elem](dst []byte, src []T) {
	switch s := any(src).(type) {
	case []float32:
		for i, v := range s {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case []int32:
		for i, v := range s {
			binary.LittleEndian.PutUint32(dst[4*i:], uint32(v))
		}
	case []uint8:
		copy(dst, s)
	}
}

// VecsReader streams records of a TEXMEX vector file. Memory is bounded by
// one record (at most MaxDim elements). Use it as
//
//	r := NewFvecsReader(f, path)
//	for r.Next() { v := r.Vec(); ... }
//	if err := r.Err(); err != nil { ... }
//
// Errors are *CorruptError (errors.Is ErrCorrupt) for a truncated header or
// record, a dimension <= 0 or > MaxDim, or a dimension that differs from the
// first record's; I/O errors are wrapped.
type VecsReader[T Elem] struct {
	r    *bufio.Reader
	name string
	rec  int64 // records returned so far
	off  int64 // byte offset of the next record
	dim  int
	vec  []T
	buf  []byte
	hdr  [4]byte
	err  error
}

func newVecsReader[T Elem](r io.Reader, name string) *VecsReader[T] {
	return &VecsReader[T]{r: bufio.NewReaderSize(r, 1<<16), name: name}
}

// NewFvecsReader streams .fvecs records (int32 LE d, then d float32 LE).
// name is used in error messages.
func NewFvecsReader(r io.Reader, name string) *VecsReader[float32] {
	return newVecsReader[float32](r, name)
}

// NewIvecsReader streams .ivecs records (int32 LE d, then d int32 LE).
func NewIvecsReader(r io.Reader, name string) *VecsReader[int32] {
	return newVecsReader[int32](r, name)
}

// NewBvecsReader streams .bvecs records (int32 LE d, then d uint8).
func NewBvecsReader(r io.Reader, name string) *VecsReader[uint8] {
	return newVecsReader[uint8](r, name)
}

// Next reads the next record. It returns false at a clean end of input or on
// error (see Err).
func (r *VecsReader[T]) Next() bool {
	if r.err != nil {
		return false
	}
	hdr := r.hdr[:]
	n, err := io.ReadFull(r.r, hdr)
	if err == io.EOF && n == 0 {
		return false
	}
	if err != nil {
		r.fail(err, "truncated dimension header (%d of 4 bytes)", n)
		return false
	}
	d := int64(int32(binary.LittleEndian.Uint32(hdr)))
	if d <= 0 || d > MaxDim {
		r.err = corruptf(r.name, r.rec, 0, r.off, "dimension %d out of range [1, %d]", d, MaxDim)
		return false
	}
	if r.rec > 0 && int(d) != r.dim {
		r.err = corruptf(r.name, r.rec, 0, r.off, "dimension %d differs from first record's %d", d, r.dim)
		return false
	}
	if r.rec == 0 {
		r.dim = int(d)
		r.vec = make([]T, d)
		r.buf = make([]byte, int(d)*elemSize[T]())
	}
	n, err = io.ReadFull(r.r, r.buf)
	if err != nil {
		r.fail(err, "truncated record body (%d of %d bytes)", n, len(r.buf))
		return false
	}
	decodeElems(r.vec, r.buf)
	r.rec++
	r.off += 4 + int64(len(r.buf))
	return true
}

func (r *VecsReader[T]) fail(err error, format string, args ...any) {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		r.err = corruptf(r.name, r.rec, 0, r.off, format, args...)
		return
	}
	r.err = fmt.Errorf("datasets: %s: record %d: byte offset %d: %w", r.name, r.rec, r.off, err)
}

// Vec returns the current record; it is overwritten by the next call to Next.
func (r *VecsReader[T]) Vec() []T { return r.vec }

// Dim returns the dimension of the records (0 before the first record).
func (r *VecsReader[T]) Dim() int { return r.dim }

// Count returns the number of records read so far.
func (r *VecsReader[T]) Count() int64 { return r.rec }

// Err returns the first error encountered, or nil after a clean end.
func (r *VecsReader[T]) Err() error { return r.err }

// ReadAll reads every remaining record into a contiguous n×d matrix.
func (r *VecsReader[T]) ReadAll() (Matrix[T], error) {
	var m Matrix[T]
	for r.Next() {
		m.Data = append(m.Data, r.vec...)
		m.N++
	}
	m.D = r.dim
	if r.err != nil {
		return Matrix[T]{}, r.err
	}
	return m, nil
}

func readVecsFile[T Elem](path string) (Matrix[T], error) {
	f, err := os.Open(path)
	if err != nil {
		return Matrix[T]{}, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	return newVecsReader[T](f, path).ReadAll()
}

// ReadFvecs reads a whole .fvecs file into memory as an n×d matrix.
func ReadFvecs(path string) (Matrix[float32], error) { return readVecsFile[float32](path) }

// ReadIvecs reads a whole .ivecs file into memory as an n×d matrix.
func ReadIvecs(path string) (Matrix[int32], error) { return readVecsFile[int32](path) }

// ReadBvecs reads a whole .bvecs file into memory as an n×d matrix.
func ReadBvecs(path string) (Matrix[uint8], error) { return readVecsFile[uint8](path) }

// VecsWriter writes records of a fixed dimension in TEXMEX format through a
// buffer; call Flush at the end.
type VecsWriter[T Elem] struct {
	w   *bufio.Writer
	dim int
	buf []byte
	n   int64
}

func newVecsWriter[T Elem](w io.Writer, dim int) (*VecsWriter[T], error) {
	if dim <= 0 || dim > MaxDim {
		return nil, fmt.Errorf("datasets: writer dimension %d out of range [1, %d]", dim, MaxDim)
	}
	vw := &VecsWriter[T]{w: bufio.NewWriterSize(w, 1<<16), dim: dim, buf: make([]byte, 4+dim*elemSize[T]())}
	binary.LittleEndian.PutUint32(vw.buf, uint32(dim))
	return vw, nil
}

// NewFvecsWriter returns a writer of dim-dimensional float32 records.
func NewFvecsWriter(w io.Writer, dim int) (*VecsWriter[float32], error) {
	return newVecsWriter[float32](w, dim)
}

// NewIvecsWriter returns a writer of dim-dimensional int32 records.
func NewIvecsWriter(w io.Writer, dim int) (*VecsWriter[int32], error) {
	return newVecsWriter[int32](w, dim)
}

// NewBvecsWriter returns a writer of dim-dimensional uint8 records.
func NewBvecsWriter(w io.Writer, dim int) (*VecsWriter[uint8], error) {
	return newVecsWriter[uint8](w, dim)
}

// Write appends one record; len(v) must equal the writer's dimension.
func (w *VecsWriter[T]) Write(v []T) error {
	if len(v) != w.dim {
		return fmt.Errorf("datasets: record %d has %d elements, writer dimension is %d", w.n, len(v), w.dim)
	}
	encodeElems(w.buf[4:], v)
	if _, err := w.w.Write(w.buf); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	w.n++
	return nil
}

// Count returns the number of records written.
func (w *VecsWriter[T]) Count() int64 { return w.n }

// Flush writes buffered data to the underlying writer.
func (w *VecsWriter[T]) Flush() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	return nil
}

func writeVecsFile[T Elem](path string, m Matrix[T]) error {
	if m.N < 0 || len(m.Data) != m.N*m.D {
		return fmt.Errorf("datasets: %s: matrix %d×%d has %d elements", path, m.N, m.D, len(m.Data))
	}
	return WriteFileAtomic(path, func(f io.Writer) error {
		if m.N == 0 {
			return nil
		}
		w, err := newVecsWriter[T](f, m.D)
		if err != nil {
			return err
		}
		for i := 0; i < m.N; i++ {
			if err := w.Write(m.Row(i)); err != nil {
				return err
			}
		}
		return w.Flush()
	})
}

// WriteFvecs writes m to path atomically (temp file, fsync, rename).
func WriteFvecs(path string, m Matrix[float32]) error { return writeVecsFile(path, m) }

// WriteIvecs writes m to path atomically (temp file, fsync, rename).
func WriteIvecs(path string, m Matrix[int32]) error { return writeVecsFile(path, m) }

// WriteBvecs writes m to path atomically (temp file, fsync, rename).
func WriteBvecs(path string, m Matrix[uint8]) error { return writeVecsFile(path, m) }

// WriteFileAtomic creates path by writing to a temporary file in the same
// directory, fsyncing it, renaming it over path and fsyncing the directory.
// On any error the temporary file is removed and path is untouched.
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // best effort: some file systems refuse directory fsync
		d.Close()
	}
	return nil
}
