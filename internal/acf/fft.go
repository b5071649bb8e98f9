package acf

import (
	"math"
	"math/bits"
	"sync"
)

// FFT is an in-place iterative radix-2 complex FFT of a fixed power-of-two
// length. It is safe for concurrent use: its tables are read only. gonum's FFTPACK port handles any length but is several times
// slower at the lengths autocorrelation needs (2^15 to 2^22), where this
// transform dominates the cost of the error estimate.
type FFT struct {
	n int
	// twiddle holds each stage's factors contiguously, so the butterfly
	// loop reads memory in order: stage with half-size h uses
	// twiddle[h-1 : 2h-1], e^{-iπk/h} for k < h.
	twiddle []complex128
	rev     []int32 // bit-reversal permutation
}

// fftCache keeps the tables of each length: they cost as much to build as
// a transform, and the same lengths recur across calls.
var fftCache sync.Map // int -> *FFT

// NewFFT returns the transform of length n, which must be a power of two
// of at least 2 (a programming error otherwise: it panics).
func NewFFT(n int) *FFT {
	if f, ok := fftCache.Load(n); ok {
		return f.(*FFT)
	}
	f := buildFFT(n)
	fftCache.Store(n, f)
	return f
}

func buildFFT(n int) *FFT {
	if n < 2 || n&(n-1) != 0 {
		panic("acf: FFT length must be a power of two >= 2")
	}
	f := &FFT{n: n, twiddle: make([]complex128, n-1), rev: make([]int32, n)}
	for h := 1; h < n; h <<= 1 {
		for k := 0; k < h; k++ {
			s, c := math.Sincos(-math.Pi * float64(k) / float64(h))
			f.twiddle[h-1+k] = complex(c, s)
		}
	}
	shift := 64 - bits.Len(uint(n-1))
	for i := range f.rev {
		f.rev[i] = int32(bits.Reverse64(uint64(i)) >> shift)
	}
	return f
}

// Len returns the length of the transform.
func (f *FFT) Len() int { return f.n }

// Transform replaces x, of length Len, by its discrete Fourier transform
// X_k = Σ_j x_j e^{-2πijk/n}; inverse selects the unnormalized inverse
// transform (a factor n larger than the inverse), computed as conj(F(conj x)).
func (f *FFT) Transform(x []complex128, inverse bool) {
	if len(x) != f.n {
		panic("acf: FFT.Transform: length differs from the transform's")
	}
	if inverse {
		conjugate(x)
	}
	for i, j := range f.rev {
		if int(j) > i {
			x[i], x[j] = x[j], x[i]
		}
	}
	for i := 0; i < f.n; i += 2 {
		x[i], x[i+1] = x[i]+x[i+1], x[i]-x[i+1]
	}
	for h := 2; h < f.n; h <<= 1 {
		w := f.twiddle[h-1 : 2*h-1]
		for start := 0; start < f.n; start += 2 * h {
			a, b := x[start:start+h], x[start+h:start+2*h]
			for k, wk := range w {
				t := wk * b[k]
				a[k], b[k] = a[k]+t, a[k]-t
			}
		}
	}
	if inverse {
		conjugate(x)
	}
}

func conjugate(x []complex128) {
	for i, v := range x {
		x[i] = complex(real(v), -imag(v))
	}
}
