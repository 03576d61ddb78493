package asm

// L2Sq returns the squared Euclidean distance Σ (a[i]-b[i])².
// a and b must have the same length d (any d ≥ 0); only len(a) is read.
func L2Sq(a, b []float32) float32 {
	b = b[:len(a)]
	return l2SqDirect(a, b)
}

// Dot returns the inner product Σ a[i]·b[i]. a and b must have the same length.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	return dotDirect(a, b)
}

// L2SqBatch computes out[i] = L2Sq(q, x[i*d:(i+1)*d]) for i in [0, len(out)).
// q: d float32; x: n×d float32, row-major, with n = len(out); len(x) ≥ n·d.
func L2SqBatch(q, x, out []float32) {
	if len(out) == 0 {
		return
	}
	x = x[:len(out)*len(q)]
	k.l2SqBatch(q, x, out)
}

// DotBatch computes out[i] = Dot(q, x[i*d:(i+1)*d]) for i in [0, len(out)).
// q: d float32; x: n×d float32, row-major, with n = len(out); len(x) ≥ n·d.
func DotBatch(q, x, out []float32) {
	if len(out) == 0 {
		return
	}
	x = x[:len(out)*len(q)]
	k.dotBatch(q, x, out)
}

// SumFloat32 returns Σ x[i]. It streams x once and is used as the
// memory-bandwidth probe (see Bandwidth).
func SumFloat32(x []float32) float32 { return k.sumFloat32(x) }

// manyTileBytes bounds the block of c rows that L2SqMany / DotMany stream
// against each x row: small enough to stay in a 512 KiB–1 MiB L2 together
// with the output, large enough to amortise the call.
const manyTileBytes = 192 << 10

// L2SqMany computes all squared distances between the rows of x and c:
// out[i*m+j] = L2Sq(x[i*d:(i+1)*d], c[j*d:(j+1)*d]) for i < n, j < m.
// x: n×d float32 row-major (n = len(x)/d), c: m×d row-major (m = len(c)/d),
// out: n×m row-major, len(out) ≥ n·m. d ≥ 1 (d ≤ 0 does nothing); trailing
// partial rows of x or c are ignored. This is the k-means assignment step.
// c is processed in tiles of about 192 KiB that stay in cache while every
// x row is scanned against them; on AVX-512 a 4×4 register-blocked kernel
// computes 16 row pairs per pass over a tile column, on AVX2 (for d a
// multiple of 4) a 2×4 one (DotMany: 3×4).
func L2SqMany(x, c []float32, d int, out []float32) {
	if d <= 0 {
		return
	}
	k.l2SqMany(x, c, d, out[:(len(x)/d)*(len(c)/d)])
}

// DotMany is L2SqMany for the inner product: out[i*m+j] = Dot(x_i, c_j).
func DotMany(x, c []float32, d int, out []float32) {
	if d <= 0 {
		return
	}
	k.dotMany(x, c, d, out[:(len(x)/d)*(len(c)/d)])
}

func l2SqManyBatch(x, c []float32, d int, out []float32) { manyBatch(x, c, d, out, k.l2SqBatch) }
func dotManyBatch(x, c []float32, d int, out []float32)  { manyBatch(x, c, d, out, k.dotBatch) }

// manyBatch is the many-to-many product as one batch call per x row and
// c tile. d ≥ 1, len(out) = n·m.
func manyBatch(x, c []float32, d int, out []float32, batch func(q, x, out []float32)) {
	n, m := len(x)/d, len(c)/d
	tile := max(1, manyTileBytes/(4*d))
	for j0 := 0; j0 < m; j0 += tile {
		j1 := min(m, j0+tile)
		ct := c[j0*d : j1*d]
		for i := 0; i < n; i++ {
			batch(x[i*d:(i+1)*d], ct, out[i*m+j0:i*m+j1])
		}
	}
}

// manyTiled runs a 4×mc tile kernel over x in groups of 4 rows and c in
// cache tiles of a multiple of 4 rows; leftover rows and columns go through
// batch. d ≥ 1, len(out) = n·m.
func manyTiled(x, c []float32, d int, out []float32,
	tile func(x, c []float32, d, mc int, out []float32, ldo int),
	batch func(q, x, out []float32)) {
	manyTiledRows(x, c, d, out, 4, tile, batch)
}

// manyTiledRows is manyTiled for a rows×mc tile kernel (x in groups of
// rows rows).
func manyTiledRows(x, c []float32, d int, out []float32, rows int,
	tile func(x, c []float32, d, mc int, out []float32, ldo int),
	batch func(q, x, out []float32)) {
	n, m := len(x)/d, len(c)/d
	m4 := m &^ 3
	ct := max(4, (manyTileBytes/(4*d))&^3)
	for j0 := 0; j0 < m4; j0 += ct {
		j1 := min(m4, j0+ct)
		cb := c[j0*d : j1*d]
		i := 0
		for ; i+rows <= n; i += rows {
			// The kernel writes out[i*m+j0 + r*m + j] for r < rows, j < j1-j0.
			tile(x[i*d:(i+rows)*d], cb, d, j1-j0, out[i*m+j0:(i+rows-1)*m+j1], m)
		}
		for ; i < n; i++ {
			batch(x[i*d:(i+1)*d], cb, out[i*m+j0:i*m+j1])
		}
	}
	if m4 < m {
		cr := c[m4*d : m*d]
		for i := 0; i < n; i++ {
			batch(x[i*d:(i+1)*d], cr, out[i*m+m4:i*m+m])
		}
	}
}
