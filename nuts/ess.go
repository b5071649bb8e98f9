package nuts

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// ESS returns the effective sample size of a scalar quantity observed along
// several chains (one series per chain, all of the same length), as Stan
// computes it: autocovariances by FFT, combined across chains with the
// between-chain variance (so chains stuck in different places lower the
// ESS), summed in pairs up to Geyer's initial positive sequence and made
// monotone (Geyer's initial monotone sequence estimator).
//
// The Monte Carlo standard error of the mean of the quantity is
// sd/sqrt(ESS). ESS may exceed the number of draws for antithetic chains,
// as NUTS often produces; it is capped at n log10(n) for n draws in total.
func ESS(chains [][]float64) (float64, error) {
	m := len(chains)
	if m == 0 {
		return 0, errors.New("nuts: ESS of no chains")
	}
	n := len(chains[0])
	if n < 4 {
		return 0, fmt.Errorf("nuts: ESS needs at least 4 draws per chain, have %d", n)
	}
	for c, x := range chains {
		if len(x) != n {
			return 0, fmt.Errorf("nuts: ESS: chain %d has %d draws, chain 0 has %d", c, len(x), n)
		}
		for i, v := range x {
			if !isFinite(v) {
				return 0, fmt.Errorf("nuts: ESS: chain %d draw %d is %v", c, i, v)
			}
		}
	}

	ac := newAutocov(n)
	acov := make([][]float64, m)
	chainMean := make([]float64, m)
	var meanVar float64
	for c, x := range chains {
		acov[c], chainMean[c] = ac.compute(x)
		meanVar += acov[c][0] * float64(n) / float64(n-1)
	}
	meanVar /= float64(m)
	varPlus := meanVar * float64(n-1) / float64(n)
	if m > 1 {
		varPlus += variance(chainMean)
	}
	if !(varPlus > 0) {
		return 0, errors.New("nuts: ESS of a constant quantity is undefined")
	}

	// rho(t) = 1 - (W - mean_c acov_c(t)) / var⁺ combines within- and
	// between-chain variation (Gelman et al., BDA3 eq. 11.7).
	rhoAt := func(t int) float64 {
		var s float64
		for c := range acov {
			s += acov[c][t]
		}
		return 1 - (meanVar-s/float64(m))/varPlus
	}
	rho := make([]float64, n)
	rhoEven, rhoOdd := 1.0, rhoAt(1)
	rho[0], rho[1] = rhoEven, rhoOdd
	// Sum pairs while they are positive (Geyer's initial positive
	// sequence). Stopping at n-4 keeps the last pair as a bias
	// correction term for antithetic chains.
	t := 1
	for t < n-4 && rhoEven+rhoOdd > 0 {
		rhoEven = rhoAt(t + 1)
		rhoOdd = rhoAt(t + 2)
		if rhoEven+rhoOdd >= 0 {
			rho[t+1] = rhoEven
			rho[t+2] = rhoOdd
		}
		t += 2
	}
	maxT := t
	if rhoEven > 0 {
		rho[maxT+1] = rhoEven
	}
	// Make the pair sums monotone (initial monotone sequence).
	for t := 1; t <= maxT-3; t += 2 {
		if rho[t+1]+rho[t+2] > rho[t-1]+rho[t] {
			rho[t+1] = (rho[t-1] + rho[t]) / 2
			rho[t+2] = rho[t+1]
		}
	}
	total := float64(m * n)
	tau := -1 + rho[maxT+1]
	for _, r := range rho[:maxT] {
		tau += 2 * r
	}
	tau = math.Max(tau, 1/math.Log10(total))
	return total / tau, nil
}

// autocov computes biased autocovariances of series of one length by FFT,
// reusing its transform and buffers.
type autocov struct {
	n     int
	fft   *fourier.FFT
	seq   []float64
	coeff []complex128
}

func newAutocov(n int) *autocov {
	// Zero-pad to at least 2n so the circular correlation equals the
	// linear one; a power of two keeps the transform fast.
	size := 1
	for size < 2*n {
		size *= 2
	}
	return &autocov{n: n, fft: fourier.NewFFT(size), seq: make([]float64, size), coeff: make([]complex128, size/2+1)}
}

// compute returns acov(t) = (1/n) Σ_i (x_i - x̄)(x_{i+t} - x̄) for
// t = 0..n-1, and the mean x̄.
func (a *autocov) compute(x []float64) ([]float64, float64) {
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for i := range a.seq {
		a.seq[i] = 0
	}
	for i, v := range x {
		a.seq[i] = v - mean
	}
	a.fft.Coefficients(a.coeff, a.seq)
	for i, c := range a.coeff {
		a.coeff[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	a.fft.Sequence(a.seq, a.coeff)
	// The unnormalized round trip multiplies by the transform length.
	scale := 1 / (float64(len(a.seq)) * float64(a.n))
	out := make([]float64, a.n)
	for t := range out {
		out[t] = a.seq[t] * scale
	}
	return out, mean
}

// variance is the unbiased sample variance.
func variance(x []float64) float64 {
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - mean) * (v - mean)
	}
	return s / float64(len(x)-1)
}
