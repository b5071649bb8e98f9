package acf

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

const eps = 0x1p-52

func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{2, 4, 8, 64, 256} {
		x := make([]complex128, n)
		var big float64
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
			big = math.Max(big, cmplx.Abs(x[i]))
		}
		got := append([]complex128(nil), x...)
		f := NewFFT(n)
		f.Transform(got, false)
		// The direct sum of n terms, each with a twiddle rounded to
		// about eps (the angle reduced mod n exactly first), is off by
		// up to about n eps max|x|; the FFT by log2(n) eps ||x||_2,
		// which is below that. A factor 8 covers the constants.
		tol := 8 * eps * float64(n) * big
		for k := 0; k < n; k++ {
			var want complex128
			for j, v := range x {
				want += v * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k%n)/float64(n)))
			}
			if cmplx.Abs(got[k]-want) > tol {
				t.Fatalf("n=%d k=%d: %v, want %v (tol %g)", n, k, got[k], want, tol)
			}
		}
		f.Transform(got, true)
		for i := range got {
			if cmplx.Abs(got[i]/complex(float64(n), 0)-x[i]) > tol {
				t.Fatalf("n=%d: inverse does not return the input at %d", n, i)
			}
		}
	}
}

// directSum is Σ_i w_i Σ_j (x_ij - mu_i)(x_i,j+t - mu_i), the O(n²) way.
func directSum(xs [][]float64, mu, w []float64, lag int) float64 {
	var s float64
	for i, x := range xs {
		var c float64
		for j := 0; j+lag < len(x); j++ {
			c += (x[j] - mu[i]) * (x[j+lag] - mu[i])
		}
		s += w[i] * c
	}
	return s
}

// Each autocovariance sum must match the direct one. The transforms round
// each output to about log2(size) eps times the norm of their input
// (Higham 2002, §24.1); through the power spectrum and the inverse
// transform (Parseval) the lag sums are off by a few log2(size) eps times
// Σ_i |w_i| ||x_i - mu_i||², the scale of the lag-0 value. The tolerance
// is 16 log2(size) eps of that scale.
func TestSumsMatchDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, tc := range []struct{ n, pad, series int }{
		{1, 1, 1}, {2, 2, 3}, {37, 37, 5}, {64, 64, 4}, {100, 7, 6}, {300, 300, 1},
	} {
		xs := make([][]float64, tc.series)
		mu := make([]float64, tc.series)
		w1 := make([]float64, tc.series)
		w2 := make([]float64, tc.series)
		s := NewSums(tc.n, tc.pad)
		var scale1, scale2 float64
		for i := range xs {
			xs[i] = make([]float64, tc.n)
			for j := range xs[i] {
				// AR(1) series about different levels.
				xs[i][j] = 3*float64(i) + rng.NormFloat64()
				if j > 0 {
					xs[i][j] += 0.8 * (xs[i][j-1] - 3*float64(i))
				}
			}
			for _, v := range xs[i] {
				mu[i] += v
			}
			mu[i] = mu[i]/float64(tc.n) + 0.1*float64(i) // not always the mean
			w1[i], w2[i] = rng.Float64(), 1
			var ss float64
			for _, v := range xs[i] {
				ss += (v - mu[i]) * (v - mu[i])
			}
			scale1 += w1[i] * ss
			scale2 += w2[i] * ss
			s.Add(xs[i], mu[i], w1[i], w2[i])
		}
		a1, a2 := s.Lags()
		size := NewSums(tc.n, tc.pad).f.Len()
		if want := min(tc.n, size-tc.n); len(a1) != want || s.Len() != want {
			t.Fatalf("%+v: %d lags, want %d", tc, len(a1), want)
		}
		tol := 16 * math.Log2(float64(size)) * eps
		for lag := range a1 {
			d1, d2 := directSum(xs, mu, w1, lag), directSum(xs, mu, w2, lag)
			if math.Abs(a1[lag]-d1) > tol*scale1 || math.Abs(a2[lag]-d2) > tol*scale2 {
				t.Fatalf("%+v lag %d: %v, %v; direct %v, %v", tc, lag, a1[lag], a2[lag], d1, d2)
			}
		}
	}
}

// Merged partial sums equal one accumulator's, to rounding.
func TestSumsMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const n = 50
	all, a, b := NewSums(n, n), NewSums(n, n), NewSums(n, n)
	var scale float64
	for i := range 5 {
		x := make([]float64, n)
		for j := range x {
			x[j] = rng.NormFloat64()
			scale += x[j] * x[j]
		}
		all.Add(x, 0, 1, 2)
		if i < 3 {
			a.Add(x, 0, 1, 2)
		} else {
			b.Add(x, 0, 1, 2)
		}
	}
	a.Merge(b)
	w1, w2 := all.Lags()
	g1, g2 := a.Lags()
	tol := 16 * math.Log2(2*n) * eps * 2 * scale
	for lag := range w1 {
		if math.Abs(g1[lag]-w1[lag]) > tol || math.Abs(g2[lag]-w2[lag]) > tol {
			t.Fatalf("lag %d: merged %v, %v; one %v, %v", lag, g1[lag], g2[lag], w1[lag], w2[lag])
		}
	}
	a.Reset()
	if z, _ := a.Lags(); z[0] != 0 {
		t.Errorf("after Reset lag 0 is %v, want 0", z[0])
	}
}

// The AR(1) process with coefficient phi has rho(t) = phi^t and
// tau = (1+phi)/(1-phi).
func ar1Rho(phi float64, n int) []float64 {
	rho := make([]float64, n)
	for t := range rho {
		rho[t] = math.Pow(phi, float64(t))
	}
	return rho
}

func TestSokalTime(t *testing.T) {
	phi := 0.9
	tau, ok := SokalTime(ar1Rho(phi, 1000), 5)
	exact := (1 + phi) / (1 - phi)
	// The window M >= 5 tau ~ 95 truncates phi^M ~ 5e-5 of the sum.
	if !ok || math.Abs(tau-exact) > 2*exact*math.Pow(phi, 5*exact) {
		t.Errorf("tau %v (ok %v), want %v", tau, ok, exact)
	}
	if tau, ok := SokalTime(ar1Rho(phi, 20), 5); ok || tau >= exact {
		t.Errorf("short rho: tau %v ok %v, want an underestimate and not ok", tau, ok)
	}
}

func TestGeyerTime(t *testing.T) {
	for _, phi := range []float64{0.5, 0.9, -0.5} {
		got, done := GeyerTime(ar1Rho(phi, 400), 400)
		if exact := (1 + phi) / (1 - phi); !done || math.Abs(got-exact) > 1e-12 {
			t.Errorf("phi %v: tau %v (done %v), want %v", phi, got, done, exact)
		}
	}
	// The pair (rho2, rho3) = (-0.9, 0.1) is negative: the sum stops
	// before it, tau = 2 (rho0 + rho1) - 1 = 2.
	if got, _ := GeyerTime([]float64{1, 0.5, -0.9, 0.1, 0.3, 0.3, 0, 0}, 8); got != 2 {
		t.Errorf("truncated sum: tau %v, want 2", got)
	}
	// The pair sum 1 of (rho2, rho3) exceeds the 0.5 before it and is
	// lowered to it: tau = -1 + 2 (1 - 0.5 + 0.25 + 0.25) = 1.
	if got, _ := GeyerTime([]float64{1, -0.5, 0.5, 0.5, 0, 0, 0, 0, 0, 0}, 10); got != 1 {
		t.Errorf("monotone sequence: tau %v", got)
	}
	// The first lags of a longer series: more are needed while the pairs
	// stay positive, none once a negative pair ended the sum.
	if _, done := GeyerTime([]float64{1, 0.5, 0.4, 0.3}, 100); done {
		t.Error("GeyerTime reported done without a negative pair")
	}
	if got, done := GeyerTime([]float64{1, 0.5, -0.9, 0.1}, 100); !done || got != 2 {
		t.Errorf("negative pair within the lags: tau %v done %v, want 2 true", got, done)
	}
}
