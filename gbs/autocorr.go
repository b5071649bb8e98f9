package gbs

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// autocorrWindow is the constant c of the automatic window M >= c tau(M)
// (Sokal 1989; emcee uses the same).
const autocorrWindow = 5

// shortChainFactor: a chain shorter than this many autocorrelation times
// gives an unreliable tau (emcee's default tolerance).
const shortChainFactor = 50

// IntegratedTime returns the integrated autocorrelation time of a series
// stored as nchains chains of equal length one after the other in x.
//
// It computes tau twice and returns the larger: from the autocorrelation
// function averaged over chains (each chain about its own mean), and from
// the chains concatenated into one series (about the overall mean). The
// second also sees differences between the chains' means, which the first
// cannot, so the larger is the safer error bar. short reports that the
// chains are shorter than 50 tau, where tau itself is unreliable.
func IntegratedTime(x []float64, nchains int) (tau float64, short bool) {
	if nchains < 1 || len(x)%nchains != 0 {
		panic("gbs: IntegratedTime: length not a multiple of the number of chains")
	}
	m := len(x) / nchains
	if m < 2 {
		return 1, true
	}
	acf := make([]float64, m)
	var used int
	buf := newACF(m)
	for c := 0; c < nchains; c++ {
		if buf.compute(x[c*m:(c+1)*m], true) {
			for t, v := range buf.out[:m] {
				acf[t] += v
			}
			used++
		}
	}
	tau = 1
	if used > 0 {
		for t := range acf {
			acf[t] /= float64(used)
		}
		tau = windowedTime(acf)
	}
	if nchains > 1 {
		all := newACF(len(x))
		if all.compute(x, true) {
			// Beyond the chain length the concatenated ACF mixes lags across
			// chain boundaries; the window stays within one chain's length.
			tau = math.Max(tau, windowedTime(all.out[:m]))
		}
	}
	return tau, float64(m) < shortChainFactor*tau
}

// windowedTime sums the autocorrelation function up to the first lag M with
// M >= c tau(M).
func windowedTime(acf []float64) float64 {
	sum := 0.0
	for t, v := range acf {
		if t == 0 {
			sum = 1
		} else {
			sum += 2 * v
		}
		if float64(t) >= autocorrWindow*sum {
			return math.Max(sum, 1e-12)
		}
	}
	return math.Max(sum, 1e-12)
}

// acfBuffer computes normalized autocorrelation functions by FFT, reusing
// its buffers across series of the same length.
type acfBuffer struct {
	fft  *fourier.FFT
	pad  []float64
	coef []complex128
	out  []float64
}

func newACF(n int) *acfBuffer {
	size := 1
	for size < 2*n {
		size <<= 1
	}
	return &acfBuffer{
		fft:  fourier.NewFFT(size),
		pad:  make([]float64, size),
		coef: make([]complex128, size/2+1),
		out:  make([]float64, size),
	}
}

// compute fills b.out[:n] with the autocorrelation of x about its mean,
// normalized to 1 at lag 0. It returns false for a constant series, whose
// autocorrelation is undefined (and whose error contribution is zero).
func (b *acfBuffer) compute(x []float64, center bool) bool {
	mean := 0.0
	if center {
		for _, v := range x {
			mean += v
		}
		mean /= float64(len(x))
	}
	for i, v := range x {
		b.pad[i] = v - mean
	}
	for i := len(x); i < len(b.pad); i++ {
		b.pad[i] = 0
	}
	b.fft.Coefficients(b.coef, b.pad)
	for i, c := range b.coef {
		b.coef[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	b.fft.Sequence(b.out, b.coef)
	if !(b.out[0] > 0) {
		return false
	}
	inv := 1 / b.out[0]
	for i := range b.out[:len(x)] {
		b.out[i] *= inv
	}
	return true
}
