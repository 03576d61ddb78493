package ivfpq

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/internal/cancel"
)

// Cold-tier code geometry: a code is ColdCodeSize bytes,
//
//	bytes 0..1   coarse centroid id, uint16 little-endian (Nlist ≤ 65536)
//	bytes 2..17  ColdM = 16 PQ codes of 8 bits, sub-quantizer order
//
// i.e. bytes per vector = 2 + M·nbits/8 = 2 + 16 = 18.
const (
	ColdCodeSize = 18
	ColdM        = 16
	ColdMaxNlist = 1 << 16
)

// ColdCodec encodes vectors into the 18-byte cold-tier codes of DESIGN.md
// (an IVF centroid id + 16 8-bit PQ codes, residual to the centroid by
// default) and scans such codes. It wraps a trained Index with M = 16,
// Nbits = 8 and Nlist ≤ 65536 whose lists are not used. Safe for
// concurrent use.
type ColdCodec struct {
	ix *Index
}

// TrainColdCodec trains a codec on x (n×Dim float32) with options o, whose
// M and Nbits must be 0 or 16 and 8 (they are set to those) and Nlist ≤
// 65536. Errors: ErrInvalidOptions, training errors.
func TrainColdCodec(x []float32, o Options) (*ColdCodec, error) {
	if (o.M != 0 && o.M != ColdM) || (o.Nbits != 0 && o.Nbits != 8) {
		return nil, fmt.Errorf("%w: cold codec needs M = %d and Nbits = 8, got M = %d, Nbits = %d", ErrInvalidOptions, ColdM, o.M, o.Nbits)
	}
	if o.OPQ {
		return nil, fmt.Errorf("%w: cold codec does not support OPQ", ErrInvalidOptions)
	}
	o.M, o.Nbits = ColdM, 8
	ix, err := New(o)
	if err != nil {
		return nil, err
	}
	if ix.opts.Nlist > ColdMaxNlist {
		return nil, fmt.Errorf("%w: cold codec needs Nlist ≤ %d, got %d", ErrInvalidOptions, ColdMaxNlist, ix.opts.Nlist)
	}
	if err := ix.Train(x); err != nil {
		return nil, err
	}
	return &ColdCodec{ix: ix}, nil
}

// NewColdCodec returns a codec over the quantizers of a trained index with
// M = 16, Nbits = 8 and Nlist ≤ 65536 (e.g. a warm segment's index, so
// demotion re-uses its training). The index's lists are ignored.
func NewColdCodec(ix *Index) (*ColdCodec, error) {
	o := ix.opts
	if !ix.IsTrained() {
		return nil, ErrNotTrained
	}
	if ix.rot != nil {
		return nil, fmt.Errorf("%w: cold codec does not support an OPQ-rotated index", ErrInvalidOptions)
	}
	if o.M != ColdM || o.Nbits != 8 || o.Nlist > ColdMaxNlist {
		return nil, fmt.Errorf("%w: cold codec needs M = %d, Nbits = 8, Nlist ≤ %d; index has M = %d, Nbits = %d, Nlist = %d",
			ErrInvalidOptions, ColdM, ColdMaxNlist, o.M, o.Nbits, o.Nlist)
	}
	return &ColdCodec{ix: ix}, nil
}

// Dim returns the vector dimension.
func (c *ColdCodec) Dim() int { return c.ix.opts.Dim }

// Index returns the underlying (list-less) index holding the quantizers.
func (c *ColdCodec) Index() *Index { return c.ix }

// WriteTo serialises the codec's quantizers (the Index file format).
func (c *ColdCodec) WriteTo(w io.Writer) (int64, error) { return c.ix.WriteTo(w) }

// OpenColdCodec opens a codec written by WriteTo (see Open for the data
// lifetime and the errors).
func OpenColdCodec(data []byte) (*ColdCodec, error) {
	ix, err := Open(data)
	if err != nil {
		return nil, err
	}
	return NewColdCodec(ix)
}

// Encode appends the codes of x (n×Dim float32, row-major) to dst and
// returns it: n×ColdCodeSize bytes (layout above). Each vector goes to its
// coarse centroid as in Index.Add. Errors: ErrDimension, NaN/Inf input.
func (c *ColdCodec) Encode(dst []byte, x []float32) ([]byte, error) {
	ix := c.ix
	d := ix.opts.Dim
	if len(x)%d != 0 {
		return dst, fmt.Errorf("%w: %d floats is not a multiple of Dim = %d", ErrDimension, len(x), d)
	}
	if !finite(x) {
		return dst, fmt.Errorf("%w: vectors contain NaN or Inf", ErrInvalidArgument)
	}
	n := len(x) / d
	assign := make([]int32, n)
	ix.assign(x, assign)
	codes := ix.encode(x, assign)
	for i := 0; i < n; i++ {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(assign[i]))
		dst = append(dst, codes[i*ColdM:(i+1)*ColdM]...)
	}
	return dst, nil
}

// Decode appends the reconstructions of codes (n×ColdCodeSize bytes) to
// dst (n×Dim float32): centroid + decoded residual (or the decoded vector
// when not encoding by residual). Errors: a length not a multiple of 18,
// a centroid id ≥ Nlist (ErrInvalidArgument).
func (c *ColdCodec) Decode(dst []float32, codes []byte) ([]float32, error) {
	ix := c.ix
	d := ix.opts.Dim
	if len(codes)%ColdCodeSize != 0 {
		return dst, fmt.Errorf("%w: %d code bytes is not a multiple of %d", ErrInvalidArgument, len(codes), ColdCodeSize)
	}
	for i := 0; i < len(codes); i += ColdCodeSize {
		l := int(binary.LittleEndian.Uint16(codes[i:]))
		if l >= ix.opts.Nlist {
			return dst, fmt.Errorf("%w: code %d names centroid %d ≥ Nlist %d", ErrInvalidArgument, i/ColdCodeSize, l, ix.opts.Nlist)
		}
		v := make([]float32, d)
		ix.pq.Decode(codes[i+2:i+ColdCodeSize], v)
		if ix.opts.byResidual() {
			for j := range v {
				v[j] += ix.coarse[l*d+j]
			}
		}
		dst = append(dst, v...)
	}
	return dst, nil
}

// ColdScanParams are per-call parameters of ColdCodec.Scan.
type ColdScanParams struct {
	// Nprobe limits the scan to codes whose centroid is among the Nprobe
	// nearest to the query (as Index.Search). 0 scans every code.
	Nprobe int
	// Vectors, if non-nil, are the exact vectors (n×Dim float32, row i of
	// code i; may be mmap'd): the best k·KFactor codes are reranked by exact
	// distance (KFactor 0 means 4).
	Vectors []float32
	KFactor int
	// Allow, if non-nil, restricts results to the code rows it holds.
	Allow *roaring.Bitmap
}

// Scan returns the k codes nearest to q (Dim float32) among codes
// (n×ColdCodeSize bytes), best first; Result.ID is the code's row index and
// Distance the ADC estimate (or the exact distance when reranked), with
// the Index's conventions (L2: squared L2; IP: −⟨q,x⟩). Codes are visited
// grouped by centroid, so each probed centroid's LUT is built once.
// Errors: ErrDimension, ErrInvalidArgument (bad lengths, centroid id ≥
// Nlist, k < 1). Cost: O(n + groups·16·256·Dsub + n·16).
func (c *ColdCodec) Scan(q []float32, codes []byte, k int, p ColdScanParams) ([]Result, error) {
	return c.ScanContext(context.Background(), q, codes, k, p)
}

// ScanContext is Scan that stops early when ctx is done: the code loop
// looks at ctx once per scanChunk (256) codes. A cancelled scan reranks
// (when asked) and returns the best of the codes it had scored, at most
// k, with ctx.Err(); a scan that completes returns exactly what Scan
// returns.
func (c *ColdCodec) ScanContext(ctx context.Context, q []float32, codes []byte, k int, p ColdScanParams) ([]Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	done := ctx.Done()
	ix := c.ix
	o := ix.opts
	d := o.Dim
	if len(q) != d {
		return nil, fmt.Errorf("%w: query has %d floats, want %d", ErrDimension, len(q), d)
	}
	if k < 1 || len(codes)%ColdCodeSize != 0 || p.KFactor < 0 || p.Nprobe < 0 {
		return nil, fmt.Errorf("%w: Scan needs k ≥ 1, codes a multiple of %d bytes, KFactor, Nprobe ≥ 0", ErrInvalidArgument, ColdCodeSize)
	}
	n := len(codes) / ColdCodeSize
	if p.Vectors != nil && len(p.Vectors) != n*d {
		return nil, fmt.Errorf("%w: %d exact vector floats for %d codes of Dim %d", ErrDimension, len(p.Vectors), n, d)
	}
	nprobe := o.Nlist
	if p.Nprobe > 0 {
		nprobe = min(p.Nprobe, o.Nlist)
	}
	lists, terms := ix.probe(q, nprobe, nil)
	probed := make([]int32, o.Nlist) // 1 + rank in lists, 0 = not probed
	for r, l := range lists {
		probed[l] = int32(r + 1)
	}
	// Counting sort of the code rows by centroid.
	start := make([]int32, o.Nlist+1)
	// (Both passes look at ctx every sortCheckRows rows: a few µs.)
	const sortCheckRows = 4096
	for i := 0; i < n; i++ {
		if i%sortCheckRows == 0 && cancel.Done(done) {
			return nil, ctx.Err()
		}
		l := int(binary.LittleEndian.Uint16(codes[i*ColdCodeSize:]))
		if l >= o.Nlist {
			return nil, fmt.Errorf("%w: code %d names centroid %d ≥ Nlist %d", ErrInvalidArgument, i, l, o.Nlist)
		}
		start[l+1]++
	}
	for l := 0; l < o.Nlist; l++ {
		start[l+1] += start[l]
	}
	order := make([]int32, n)
	fill := append([]int32(nil), start[:o.Nlist]...)
	for i := 0; i < n; i++ {
		if i%sortCheckRows == 0 && cancel.Done(done) {
			return nil, ctx.Err()
		}
		l := binary.LittleEndian.Uint16(codes[i*ColdCodeSize:])
		order[fill[l]] = int32(i)
		fill[l]++
	}
	refine := p.Vectors != nil
	kk := k
	if refine {
		kf := p.KFactor
		if kf == 0 {
			kf = 4
		}
		kk = k * kf
	}
	h := &topk{k: kk}
	lut := make([]float32, ColdM*256)
	perList := o.byResidual() && o.Metric == L2
	if !perList {
		ix.pq.LUT(q, o.Metric, lut)
	}
	r := make([]float32, d)
	var cerr error // ctx.Err() when the loop stopped early
	tick := 0
lists:
	for _, l := range lists {
		rows := order[start[l]:start[l+1]]
		if len(rows) == 0 {
			continue
		}
		var cterm float32
		if o.byResidual() && o.Metric == IP {
			cterm = terms[probed[l]-1]
		}
		if perList {
			copy(r, q)
			subtract(r, ix.coarse[l*d:(l+1)*d])
			ix.pq.LUT(r, L2, lut)
		}
		for _, row := range rows {
			if tick++; tick >= scanChunk {
				tick = 0
				if cancel.Done(done) {
					cerr = ctx.Err()
					break lists
				}
			}
			code := codes[int(row)*ColdCodeSize+2 : int(row+1)*ColdCodeSize]
			dv := cterm
			for j, cj := range code {
				dv += lut[j*256+int(cj)]
			}
			if h.full() && dv >= h.worst() {
				continue
			}
			if p.Allow == nil || p.Allow.Contains(uint32(row)) {
				h.push(dv, uint32(row))
			}
		}
	}
	if !refine {
		return h.sorted(), cerr
	}
	ids := h.ids(nil)
	res := make([]Result, len(ids))
	for i, id := range ids {
		v := p.Vectors[int(id)*d : int(id+1)*d]
		if o.Metric == IP {
			res[i] = Result{ID: id, Distance: -asm.Dot(q, v)}
		} else {
			res[i] = Result{ID: id, Distance: asm.L2Sq(q, v)}
		}
	}
	sortResults(res)
	return res[:min(k, len(res))], cerr
}
