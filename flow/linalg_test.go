package flow

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// rowLoopMulRows is mulRows as it was before blocking.
func rowLoopMulRows(dst, x []float64, r, d int, a []float64, k int) {
	for i := 0; i < r; i++ {
		di := dst[i*k : i*k+k]
		clear(di)
		for l, v := range x[i*d : i*d+d] {
			if v != 0 {
				floats.AddScaled(di, v, a[l*k:l*k+k])
			}
		}
	}
}

// The blocked products accumulate each element over the inner index in
// increasing order, as the plain row-by-row loops do: the same operations
// in the same order, hence the same bits (this is not a comparison of two
// summation orders).
func TestBlockedProductsMatchRowLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][3]int{{37, 300, 130}, {5, 7, 3}, {40, 1000, 128}} {
		r, d, k := sz[0], sz[1], sz[2]
		x := make([]float64, r*d)
		a := make([]float64, d*k)
		p := make([]float64, r*k)
		for i := range x {
			x[i] = rng.NormFloat64()
			if i%7 == 0 {
				x[i] = 0 // the loops skip zeros
			}
		}
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range p {
			p[i] = rng.NormFloat64()
		}
		got := make([]float64, r*k)
		mulRows(got, x, r, d, a, k)
		want := make([]float64, r*k)
		rowLoopMulRows(want, x, r, d, a, k)
		for i, v := range want {
			if got[i] != v {
				t.Fatalf("%v: mulRows[%d] = %v, want %v", sz, i, got[i], v)
			}
		}
		at := transpose(a, d, k)
		dst := make([]float64, r*d)
		copy(dst, x)
		addMulRowsT(dst, r, d, p, k, at)
		for i := 0; i < r; i++ {
			want := make([]float64, d)
			copy(want, x[i*d:(i+1)*d])
			for l := 0; l < k; l++ {
				if v := p[i*k+l]; v != 0 {
					floats.AddScaled(want, v, at[l*d:l*d+d])
				}
			}
			for c := range want {
				if dst[i*d+c] != want[c] {
					t.Fatalf("%v: addMulRowsT[%d][%d] = %v, want %v", sz, i, c, dst[i*d+c], want[c])
				}
			}
		}
	}
}

func BenchmarkMulRows1000(b *testing.B) { benchMulRows(b, mulRows) }

func BenchmarkMulRows1000RowLoop(b *testing.B) { benchMulRows(b, rowLoopMulRows) }

func benchMulRows(b *testing.B, mul func(dst, x []float64, r, d int, a []float64, k int)) {
	r, d := 256, 1000
	x := make([]float64, r*d)
	a := make([]float64, d*d)
	for i := range x {
		x[i] = float64(i%13) - 6
	}
	for i := range a {
		a[i] = float64(i%17) - 8
	}
	dst := make([]float64, r*d)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mul(dst, x, r, d, a, d)
	}
}

// mulRowsUpper skips the zeros below an upper triangular factor's
// diagonal and otherwise adds the same terms in the same order as
// mulRows: the same values (a sum of exact zeros aside, whose sign the
// skipped terms could change).
func TestMulRowsUpperMatchesMulRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][2]int{{37, 300}, {5, 7}, {300, 64}, {20, 1000}} {
		r, d := sz[0], sz[1]
		x := make([]float64, r*d)
		for i := range x {
			if i%5 != 0 {
				x[i] = rng.NormFloat64()
			}
		}
		a := make([]float64, d*d)
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				a[i*d+j] = rng.NormFloat64()
			}
		}
		if !upperTriangular(a, d) || (d > 1 && upperTriangular(transpose(a, d, d), d)) {
			t.Fatalf("%v: upperTriangular is wrong", sz)
		}
		got, want := make([]float64, r*d), make([]float64, r*d)
		mulRowsUpper(got, x, r, d, a)
		mulRows(want, x, r, d, a, d)
		for i, v := range want {
			if got[i] != v {
				t.Fatalf("%v: mulRowsUpper[%d] = %v, mulRows %v", sz, i, got[i], v)
			}
		}
	}
}
