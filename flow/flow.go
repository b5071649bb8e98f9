package flow

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Flow is a fitted normalizing flow: a bijection x ↦ z of ℝ^d (or of a
// box onto ℝ^d) with tractable Jacobian, and the density
//
//	log q(x) = Σ_j log φ(z_j) + log|det ∂z/∂x|
//
// that it pulls back from the standard normal. A Flow is immutable after
// Fit or UnmarshalBinary and safe for concurrent use.
type Flow struct {
	d        int
	bounds   *bounds // nil: unbounded
	wt       *whitening
	layers   []layer
	warnings []string
	threads  int // 0: GOMAXPROCS

	// heldOut[l] is the held-out mean log-likelihood after l layers
	// (heldOut[0]: whitening only); empty without validation. Kept for
	// diagnostics and tests; not serialized.
	heldOut []float64
}

// layer is x ↦ x - A Aᵀx + A ψ(Aᵀx) for an orthonormal d×k frame A and k
// monotone maps ψ_c; its log-Jacobian is Σ_c log ψ_c'(a_cᵀx).
type layer struct {
	k   int
	a   []float64 // d×k
	at  []float64 // k×d, Aᵀ
	psi []spline
}

// Dim returns the dimension d.
func (f *Flow) Dim() int { return f.d }

// Layers returns the number of Gaussianizing layers after the bounds and
// whitening maps (0 means q is the whitening Gaussian, pushed through the
// bounds layer if any).
func (f *Flow) Layers() int { return len(f.layers) }

// Warnings returns the documented fallbacks taken during the fit, such as
// merged duplicate points or a whitening-only flow for too few points.
func (f *Flow) Warnings() []string { return append([]string(nil), f.warnings...) }

// LogProb writes log q at the len(dst) row-major points x into dst
// (len(x) must be len(dst)·Dim()). Points outside the bounds, or with an
// infinite coordinate, get -Inf; points with a NaN coordinate get NaN.
func (f *Flow) LogProb(dst, x []float64) {
	n := len(dst)
	f.checkLen("LogProb", len(x), n)
	f.run(n, func(lo, hi int, s *scratch) {
		z := s.z[:(hi-lo)*f.d]
		ld := s.ld[:hi-lo]
		f.forwardRows(z, ld, x[lo*f.d:hi*f.d], hi-lo, s)
		for i := range ld {
			v := ld[i]
			for _, zj := range z[i*f.d : (i+1)*f.d] {
				v += logPhi(zj)
			}
			if math.IsNaN(v) && !math.IsNaN(ld[i]) {
				// Overflow in a finite, in-bounds point too large for
				// float64 arithmetic: its density is zero to precision.
				v = math.Inf(-1)
			}
			dst[lo+i] = v
		}
	})
}

// Forward maps the len(logdet) row-major points x to z (Gaussianized
// space) and writes log|det ∂z/∂x| per point into logdet. Points outside
// the support get NaN coordinates and logdet -Inf; NaN inputs give NaN.
func (f *Flow) Forward(z, logdet, x []float64) {
	n := len(logdet)
	f.checkLen("Forward", len(x), n)
	f.checkLen("Forward", len(z), n)
	f.run(n, func(lo, hi int, s *scratch) {
		f.forwardRows(z[lo*f.d:hi*f.d], logdet[lo:hi], x[lo*f.d:hi*f.d], hi-lo, s)
	})
}

// Inverse maps the len(logdet) row-major points z back to x and writes
// log|det ∂x/∂z| per point into logdet. It is the exact inverse of
// Forward (to rounding) everywhere, far tails included.
func (f *Flow) Inverse(x, logdet, z []float64) {
	n := len(logdet)
	f.checkLen("Inverse", len(x), n)
	f.checkLen("Inverse", len(z), n)
	f.run(n, func(lo, hi int, s *scratch) {
		f.inverseRows(x[lo*f.d:hi*f.d], logdet[lo:hi], z[lo*f.d:hi*f.d], hi-lo, s)
	})
}

// Sample draws len(logq) points from q into dst (row-major, len(dst) must
// be len(logq)·Dim()) and writes their log q into logq. All randomness
// comes from rng, drawn sequentially, so the draws depend on rng alone.
func (f *Flow) Sample(dst, logq []float64, rng *rand.Rand) {
	n := len(logq)
	f.checkLen("Sample", len(dst), n)
	z := make([]float64, n*f.d)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	f.run(n, func(lo, hi int, s *scratch) {
		ld := logq[lo:hi]
		zz := z[lo*f.d : hi*f.d]
		base := s.ld[:hi-lo]
		for i := range base {
			var v float64
			for _, zj := range zz[i*f.d : (i+1)*f.d] {
				v += logPhi(zj)
			}
			base[i] = v
		}
		f.inverseRows(dst[lo*f.d:hi*f.d], ld, zz, hi-lo, s)
		for i := range ld {
			ld[i] = base[i] - ld[i]
		}
	})
}

func (f *Flow) checkLen(op string, got, n int) {
	if got != n*f.d {
		panic(fmt.Sprintf("flow: %s: slice of length %d, want %d points × d = %d", op, got, n, f.d))
	}
}

// scratch is the per-task working memory of the row-wise maps.
type scratch struct {
	z, buf, p, q []float64
	ld           []float64
	flag         []int8
}

func (f *Flow) maxK() int {
	k := 1
	for _, l := range f.layers {
		k = max(k, l.k)
	}
	return k
}

// run calls fn on the fixed chunks of n rows, in parallel.
func (f *Flow) run(n int, fn func(lo, hi int, s *scratch)) {
	d, k := f.d, f.maxK()
	parallelFor(resolveThreads(f.threads), numChunks(n), func(c int) {
		lo, hi := chunkBounds(c, n)
		s := &scratch{
			z:    make([]float64, chunkRows*d),
			buf:  make([]float64, chunkRows*d),
			p:    make([]float64, chunkRows*k),
			q:    make([]float64, chunkRows*k),
			ld:   make([]float64, chunkRows),
			flag: make([]int8, chunkRows),
		}
		fn(lo, hi, s)
	})
}

const (
	rowOK int8 = iota
	rowOutside
	rowNaN
)

// forwardRows maps r rows of x into z with log-determinants ld.
func (f *Flow) forwardRows(z, ld, x []float64, r int, s *scratch) {
	d := f.d
	buf := s.buf[:r*d]
	copy(buf, x)
	flag := s.flag[:r]
	for i := 0; i < r; i++ {
		row := buf[i*d : (i+1)*d]
		flag[i] = rowOK
		for _, v := range row {
			if math.IsNaN(v) {
				flag[i] = rowNaN
				break
			}
			if math.IsInf(v, 0) {
				flag[i] = rowOutside
			}
		}
		if flag[i] == rowOK && f.bounds != nil {
			if _, ok := f.bounds.inside(row); !ok {
				flag[i] = rowOutside
			}
		}
		ld[i] = 0
		if flag[i] != rowOK {
			clear(row) // keep the arithmetic finite; fixed up below
			continue
		}
		if f.bounds != nil {
			ld[i] = f.bounds.forward(row)
		}
	}
	f.wt.forward(z, buf, r, d)
	for i := range ld[:r] {
		ld[i] += f.wt.logDet
	}
	for _, l := range f.layers {
		l.forward(z, ld, r, d, s)
	}
	for i := 0; i < r; i++ {
		switch flag[i] {
		case rowNaN:
			ld[i] = math.NaN()
			fill(z[i*d:(i+1)*d], math.NaN())
		case rowOutside:
			ld[i] = math.Inf(-1)
			fill(z[i*d:(i+1)*d], math.NaN())
		}
	}
}

// inverseRows maps r rows of z back into x with log-determinants ld.
func (f *Flow) inverseRows(x, ld, z []float64, r int, s *scratch) {
	d := f.d
	buf := s.buf[:r*d]
	copy(buf, z)
	clear(ld[:r])
	for li := len(f.layers) - 1; li >= 0; li-- {
		f.layers[li].inverse(buf, ld, r, d, s)
	}
	f.wt.inverse(x, buf, r, d)
	for i := 0; i < r; i++ {
		ld[i] -= f.wt.logDet
		if f.bounds != nil {
			ld[i] += f.bounds.inverse(x[i*d : (i+1)*d])
		}
	}
}

// forward applies the layer to r rows of z in place, adding to ld.
func (l *layer) forward(z, ld []float64, r, d int, s *scratch) {
	k := l.k
	p := s.p[:r*k]
	mulRows(p, z, r, d, l.a, k)
	for i := 0; i < r; i++ {
		row := p[i*k : (i+1)*k]
		var sum float64
		for c, v := range row {
			y, lg := l.psi[c].eval(v)
			row[c] = y - v
			sum += lg
		}
		ld[i] += sum
	}
	addMulRowsT(z, r, d, p, k, l.at)
}

// inverse undoes forward on r rows of z in place, adding log|dx/dz| to ld.
func (l *layer) inverse(z, ld []float64, r, d int, s *scratch) {
	k := l.k
	q := s.q[:r*k]
	mulRows(q, z, r, d, l.a, k)
	for i := 0; i < r; i++ {
		row := q[i*k : (i+1)*k]
		var sum float64
		for c, v := range row {
			x, lg := l.psi[c].inverse(v)
			row[c] = x - v
			sum += lg
		}
		ld[i] += sum
	}
	addMulRowsT(z, r, d, q, k, l.at)
}

func fill(s []float64, v float64) {
	for i := range s {
		s[i] = v
	}
}
