package gbs

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{2, 8, 64} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		got := append([]complex128(nil), x...)
		f := newFFT(n)
		f.transform(got, false)
		for k := 0; k < n; k++ {
			var want complex128
			for j, v := range x {
				want += v * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n)))
			}
			if cmplx.Abs(got[k]-want) > 1e-9 {
				t.Fatalf("n=%d k=%d: %v, want %v", n, k, got[k], want)
			}
		}
		f.transform(got, true)
		for i := range got {
			if cmplx.Abs(got[i]/complex(float64(n), 0)-x[i]) > 1e-12 {
				t.Fatalf("n=%d: inverse does not return the input at %d", n, i)
			}
		}
	}
}
