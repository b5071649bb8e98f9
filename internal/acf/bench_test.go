package acf

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// BenchmarkFFT times the complex transform at the lengths autocorrelation
// uses; BenchmarkGonumFFT the real-input gonum transform that nuts and
// ensemble used before, for comparison (it does half the work per length).
func BenchmarkFFT(b *testing.B) {
	for _, n := range []int{1 << 12, 1 << 16, 1 << 20} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := NewFFT(n)
			x := make([]complex128, n)
			rng := rand.New(rand.NewPCG(1, 1))
			for i := range x {
				x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
			}
			for b.Loop() {
				f.Transform(x, false)
			}
		})
	}
}

func BenchmarkGonumFFT(b *testing.B) {
	for _, n := range []int{1 << 12, 1 << 16, 1 << 20} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := fourier.NewFFT(n)
			x := make([]float64, n)
			c := make([]complex128, n/2+1)
			rng := rand.New(rand.NewPCG(1, 1))
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			for b.Loop() {
				f.Coefficients(c, x)
			}
		})
	}
}

// BenchmarkSums times the autocovariance sums of 8 chains of 2^15 draws
// at all lags, the work of one diagnostic of one coordinate.
func BenchmarkSums(b *testing.B) {
	const chains, n = 8, 1 << 15
	rng := rand.New(rand.NewPCG(1, 1))
	xs := make([][]float64, chains)
	for i := range xs {
		xs[i] = make([]float64, n)
		for j := range xs[i] {
			xs[i][j] = rng.NormFloat64()
		}
	}
	s := NewSums(n, n)
	for b.Loop() {
		s.Reset()
		for _, x := range xs {
			s.Add(x, 0, 1, 1)
		}
		s.Lags()
	}
}
