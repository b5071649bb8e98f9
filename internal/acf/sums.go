package acf

// Sums accumulates two weighted sums of the autocovariance sums
//
//	A_s(t) = Σ_i w_s,i Σ_{j<n-t} (x_i,j - μ_i)(x_i,j+t - μ_i),  s = 1, 2,
//
// over real series x_i of one length n, each about a centre μ_i the caller
// chooses (usually its mean). By linearity of the transform it sums the
// weighted power spectra and transforms back once per Lags; two series
// share one complex transform (one as the real part, one as the imaginary),
// and the two sums share the inverse transform (a real symmetric spectrum
// has a real inverse, so one sum goes in the real part, one in the
// imaginary). Two weightings cost nothing over one: gbs uses the second for
// autocovariances about the overall mean while the first sums normalized
// autocorrelations.
//
// Series are zero-padded to a power-of-two length of at least n+pad, which
// makes the lags below min(n, size-n) exact; pad = n gives all lags.
type Sums struct {
	n, lags int
	f       *FFT
	z       []complex128
	acc     []complex128
	// A series waiting for a partner to share its transform.
	pending        bool
	pendW1, pendW2 float64
}

// NewSums returns an empty accumulator for series of length n >= 1, padded
// by at least pad >= 0 zeros.
func NewSums(n, pad int) *Sums {
	if n < 1 || pad < 0 {
		panic("acf: NewSums: need n >= 1 and pad >= 0")
	}
	size := 2
	for size < n+pad {
		size <<= 1
	}
	return &Sums{
		n:    n,
		lags: min(n, size-n),
		f:    NewFFT(size),
		z:    make([]complex128, size),
		acc:  make([]complex128, size),
	}
}

// Len returns the number of exact lags Lags returns.
func (s *Sums) Len() int { return s.lags }

// Reset empties the sums.
func (s *Sums) Reset() {
	clear(s.acc)
	clear(s.z)
	s.pending = false
}

// Add adds the autocovariance sums of x - mu, of length n, with weight w1
// to the first sum and w2 to the second.
func (s *Sums) Add(x []float64, mu, w1, w2 float64) {
	if len(x) != s.n {
		panic("acf: Sums.Add: series length differs from the accumulator's")
	}
	if !s.pending {
		for j, v := range x {
			s.z[j] = complex(v-mu, 0)
		}
		s.pending, s.pendW1, s.pendW2 = true, w1, w2
		return
	}
	for j, v := range x {
		s.z[j] = complex(real(s.z[j]), v-mu)
	}
	s.flush(w1, w2)
}

// flush transforms the pending pair (the second series in the imaginary
// part, weights wb1 and wb2, zero when there is none) into the sums.
func (s *Sums) flush(wb1, wb2 float64) {
	size := len(s.z)
	s.f.Transform(s.z, false)
	wa1, wa2 := s.pendW1, s.pendW2
	z := s.z
	for k := 0; k < size; k++ {
		zk, zn := z[k], z[(size-k)&(size-1)]
		// Z = A + iB with A, B the spectra of the real series a, b:
		// A_k = (Z_k + conj Z_{-k})/2, B_k = (Z_k - conj Z_{-k})/(2i).
		ar, ai := 0.5*(real(zk)+real(zn)), 0.5*(imag(zk)-imag(zn))
		br, bi := 0.5*(imag(zk)+imag(zn)), -0.5*(real(zk)-real(zn))
		pa, pb := ar*ar+ai*ai, br*br+bi*bi
		s.acc[k] += complex(wa1*pa+wb1*pb, wa2*pa+wb2*pb)
	}
	clear(s.z)
	s.pending = false
}

// Merge adds the sums of o, an accumulator of the same n and pad, to s:
// partial sums from concurrent workers, merged in a fixed order, give
// results independent of the scheduling.
func (s *Sums) Merge(o *Sums) {
	if len(o.acc) != len(s.acc) || o.n != s.n {
		panic("acf: Sums.Merge: accumulators of different shapes")
	}
	o.finish()
	for k, v := range o.acc {
		s.acc[k] += v
	}
}

func (s *Sums) finish() {
	if s.pending {
		for j := range s.n {
			s.z[j] = complex(real(s.z[j]), 0)
		}
		s.flush(0, 0)
	}
}

// Lags returns A_1(t) and A_2(t) for t < Len into new slices. It may be
// called again after more Adds.
func (s *Sums) Lags() (a1, a2 []float64) {
	s.finish()
	copy(s.z, s.acc)
	s.f.Transform(s.z, true)
	inv := 1 / float64(len(s.z))
	a1, a2 = make([]float64, s.lags), make([]float64, s.lags)
	for t := range s.lags {
		a1[t] = real(s.z[t]) * inv
		a2[t] = imag(s.z[t]) * inv
	}
	clear(s.z)
	return a1, a2
}
