package flow

import "gonum.org/v1/gonum/floats"

// The products below are small (d and k are at most a few hundred) and
// are called on chunks of rows from parallel tasks. They are written with
// gonum's assembly axpy and dot kernels rather than blas64.Gemm because
// Gemm starts goroutines of its own above a size threshold, which would
// defeat the Threads setting. Each output element is accumulated in a
// fixed order, so the results do not depend on how rows are chunked.

// Row and inner-dimension blocks of the products: a block of blockInner
// rows of a (at most 64 KiB for k <= 256) stays in cache while it serves
// blockRows rows of x; without blocking every row of x streamed all of a
// (8 MB at d = 1000) through the cache. Each output element still
// accumulates over the inner index in increasing order, so the results
// are bitwise those of the unblocked loops.
const (
	blockRows       = 16
	blockInnerBytes = 64 << 10
)

// innerBlock returns the inner block length for rows of k values.
func innerBlock(k int) int { return max(8, blockInnerBytes/(8*max(k, 1))) }

// mulRows sets dst (r×k) = x (r×d) · a (d×k), all row-major: the sum
// below with the roles of the dimensions exchanged (a is the transpose of
// a k×d matrix).
func mulRows(dst, x []float64, r, d int, a []float64, k int) {
	clear(dst[:r*k])
	addMulRowsT(dst, r, k, x, d, a)
}

// addMulRowsT adds p (r×k) · aᵀ to dst (r×d), where a is d×k row-major.
// at must hold aᵀ (k×d row-major); it lets the inner loop run over
// contiguous memory.
func addMulRowsT(dst []float64, r, d int, p []float64, k int, at []float64) {
	lb := innerBlock(d)
	for i0 := 0; i0 < r; i0 += blockRows {
		i1 := min(i0+blockRows, r)
		for l0 := 0; l0 < k; l0 += lb {
			l1 := min(l0+lb, k)
			for i := i0; i < i1; i++ {
				di := dst[i*d : i*d+d]
				for l, v := range p[i*k+l0 : i*k+l1] {
					if v != 0 {
						floats.AddScaled(di, v, at[(l0+l)*d:(l0+l)*d+d])
					}
				}
			}
		}
	}
}

// mulRowsUpper is mulRows for a square a (d×d) that is upper triangular
// (zero below the diagonal), such as the transpose of a Cholesky factor
// or of its inverse: row l of a adds into the columns l..d-1 of dst only,
// half the work, each element's sum in the same order as mulRows's.
func mulRowsUpper(dst, x []float64, r, d int, a []float64) {
	clear(dst[:r*d])
	lb := innerBlock(d)
	for i0 := 0; i0 < r; i0 += blockRows {
		i1 := min(i0+blockRows, r)
		for l0 := 0; l0 < d; l0 += lb {
			l1 := min(l0+lb, d)
			for i := i0; i < i1; i++ {
				di := dst[i*d : i*d+d]
				for l, v := range x[i*d+l0 : i*d+l1] {
					if v != 0 {
						c := l0 + l
						floats.AddScaled(di[c:], v, a[c*d+c:(c+1)*d])
					}
				}
			}
		}
	}
}

// upperTriangular reports whether the d×d row-major a is zero below its
// diagonal.
func upperTriangular(a []float64, d int) bool {
	for i := 1; i < d; i++ {
		for _, v := range a[i*d : i*d+i] {
			if v != 0 {
				return false
			}
		}
	}
	return true
}

// transpose returns aᵀ (c×r) of the r×c row-major matrix a.
func transpose(a []float64, r, c int) []float64 {
	t := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			t[j*r+i] = a[i*c+j]
		}
	}
	return t
}
