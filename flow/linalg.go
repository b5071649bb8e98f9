package flow

import "gonum.org/v1/gonum/floats"

// The products below are small (d and k are at most a few hundred) and
// are called on chunks of rows from parallel tasks. They are written with
// gonum's assembly axpy and dot kernels rather than blas64.Gemm because
// Gemm starts goroutines of its own above a size threshold, which would
// defeat the Threads setting. Each output element is accumulated in a
// fixed order, so the results do not depend on how rows are chunked.

// mulRows sets dst (r×k) = x (r×d) · a (d×k), all row-major.
func mulRows(dst, x []float64, r, d int, a []float64, k int) {
	for i := 0; i < r; i++ {
		di := dst[i*k : i*k+k]
		clear(di)
		xi := x[i*d : i*d+d]
		for l, v := range xi {
			if v != 0 {
				floats.AddScaled(di, v, a[l*k:l*k+k])
			}
		}
	}
}

// addMulRowsT adds p (r×k) · aᵀ to dst (r×d), where a is d×k row-major.
// at must hold aᵀ (k×d row-major); it lets the inner loop run over
// contiguous memory.
func addMulRowsT(dst []float64, r, d int, p []float64, k int, at []float64) {
	for i := 0; i < r; i++ {
		di := dst[i*d : i*d+d]
		pi := p[i*k : i*k+k]
		for l, v := range pi {
			if v != 0 {
				floats.AddScaled(di, v, at[l*d:l*d+d])
			}
		}
	}
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
