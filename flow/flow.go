package flow

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// Flow is a fitted normalizing flow: a bijection x ↦ z of ℝ^d (or of a
// box onto ℝ^d) with tractable Jacobian, and the density
//
//	log q(x) = Σ_j log φ(z_j) + log|det ∂z/∂x|
//
// that it pulls back from the standard normal. A Flow comes from Fit or
// UnmarshalBinary (the zero value is not usable), is immutable after and
// safe for concurrent use. Its methods panic, as gonum's do, when slice
// lengths do not match; data never make them panic.
type Flow struct {
	d        int
	bounds   *bounds // nil: unbounded
	wt       *whitening
	layers   []layer
	warnings []string
	threads  int       // 0: GOMAXPROCS
	segs     []segment // derived: how the layers are evaluated

	// heldOut[l] is the held-out mean log-likelihood after l layers
	// (heldOut[0]: whitening only); empty without validation. Kept for
	// diagnostics and tests; not serialized.
	heldOut []float64
	// scaleGate holds the scale layer's gate numbers (scaleChoice) on
	// the whitened training points (a NaN gain: not computed). Kept for
	// tests; not serialized.
	scaleGate scaleGate
}

// Dim returns the dimension d.
func (f *Flow) Dim() int { return f.d }

// Layers returns the number of Gaussianizing layers after the bounds and
// whitening maps (0 means q is the whitening Gaussian, pushed through the
// bounds layer if any), sliced, conditional and scale layers together.
func (f *Flow) Layers() int { return len(f.layers) }

// ConditionalLayers returns how many of the layers are conditional.
func (f *Flow) ConditionalLayers() int {
	n := 0
	for _, l := range f.layers {
		if l.cond != nil {
			n++
		}
	}
	return n
}

// ShrunkCovariance reports whether the whitening Gaussian's covariance
// is the nonlinear shrinkage estimate rather than the sample covariance:
// it is, when the points are few for their dimension (the sample
// covariance's expected excess KL divergence, d²/(4n) for n training
// points, is at least a nat) and the shrunk covariance fits the held-out
// points clearly better. Not serialized: false after UnmarshalBinary.
func (f *Flow) ShrunkCovariance() bool { return f.wt != nil && f.wt.shrunk }

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
// Forward (to rounding) everywhere, far tails included; with bounds, a z
// so extreme that x rounds onto a bound gives the nearest point inside,
// with the log-determinant of Forward at that point.
func (f *Flow) Inverse(x, logdet, z []float64) {
	n := len(logdet)
	f.checkLen("Inverse", len(x), n)
	f.checkLen("Inverse", len(z), n)
	f.run(n, func(lo, hi int, s *scratch) {
		f.inverseRows(x[lo*f.d:hi*f.d], logdet[lo:hi], z[lo*f.d:hi*f.d], hi-lo, s, nil)
	})
}

// Sample draws len(logq) points from q into dst (row-major, len(dst) must
// be len(logq)·Dim()) and writes their log q into logq. All randomness
// comes from rng, drawn sequentially, so the draws depend on rng alone.
func (f *Flow) Sample(dst, logq []float64, rng *rand.Rand) {
	f.SampleLatent(dst, logq, nil, rng)
}

// SampleLatent is Sample that also returns the standard normal points the
// draws are the images of: z, if not nil (len(z) = len(dst)), receives
// them, row-major, so that log q = Σ log φ(z) + log|det ∂z/∂x| at each
// draw. The draws and their log q are Sample's with the same rng. (For a
// draw that rounded onto a bound and was moved inside, z is the forward
// map's image of the point returned, from which its log q comes too.)
func (f *Flow) SampleLatent(dst, logq, z []float64, rng *rand.Rand) {
	n := len(logq)
	f.checkLen("Sample", len(dst), n)
	if z == nil {
		z = make([]float64, n*f.d)
	} else {
		f.checkLen("SampleLatent", len(z), n)
	}
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
		// A draw moved inside its box gets the latent point of where it
		// is, as its log q does.
		f.inverseRows(dst[lo*f.d:hi*f.d], ld, zz, hi-lo, s, zz)
		for i := range ld {
			if s.flag[i] == rowClamped {
				ld[i] = s.aux[i]
			} else {
				ld[i] = base[i] - ld[i]
			}
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
	d, k             int // capacity: rows of dimension d, k directions
	z, buf, p, q, pt []float64
	ld, dm, aux      []float64
	de               []int
	flag             []int8
}

// scratchPool recycles working memory between calls: a LogProb over many
// points would otherwise allocate (and clear) a few hundred kilobytes per
// chunk.
var scratchPool sync.Pool

// getScratch returns scratch for rows of dimension d and k directions.
func getScratch(d, k int) *scratch {
	if s, ok := scratchPool.Get().(*scratch); ok && s.d >= d && s.k >= k {
		return s
	}
	return newScratch(d, k)
}

func newScratch(d, k int) *scratch {
	return &scratch{
		d:    d,
		k:    k,
		z:    make([]float64, chunkRows*d),
		buf:  make([]float64, chunkRows*d),
		p:    make([]float64, chunkRows*k),
		q:    make([]float64, chunkRows*k),
		pt:   make([]float64, chunkRows*k),
		ld:   make([]float64, chunkRows),
		dm:   make([]float64, chunkRows),
		aux:  make([]float64, chunkRows),
		de:   make([]int, chunkRows),
		flag: make([]int8, chunkRows),
	}
}

// segment is a stretch of layers evaluated together: a run of
// full-frame sliced layers as a chain (ch not nil), else one layer.
type segment struct {
	lo, hi int
	ch     *chain
}

// init derives the evaluation structures from the fitted parameters. Fit
// and UnmarshalBinary both end with it, so both evaluate identically.
func (f *Flow) init() {
	d := f.d
	f.segs = nil
	for i := range f.layers {
		f.layers[i].init(d)
	}
	for lo := 0; lo < len(f.layers); {
		hi := lo + 1
		if !f.layers[lo].full(d) {
			f.segs = append(f.segs, segment{lo: lo, hi: hi})
			lo = hi
			continue
		}
		for hi < len(f.layers) && f.layers[hi].full(d) {
			hi++
		}
		var wt *whitening
		if lo == 0 {
			wt = f.wt
		}
		f.segs = append(f.segs, segment{lo: lo, hi: hi, ch: newChain(wt, f.layers[lo:hi], d)})
		lo = hi
	}
}

// maxK is the scratch width the layers need.
func (f *Flow) maxK() int {
	k := f.d
	for i := range f.layers {
		k = max(k, f.layers[i].width())
	}
	return k
}

// run calls fn on the fixed chunks of n rows, in parallel.
func (f *Flow) run(n int, fn func(lo, hi int, s *scratch)) {
	d, k := f.d, f.maxK()
	parallelFor(resolveThreads(f.threads), numChunks(n), func(c int) {
		lo, hi := chunkBounds(c, n)
		s := getScratch(d, k)
		fn(lo, hi, s)
		scratchPool.Put(s)
	})
}

const (
	rowOK int8 = iota
	rowOutside
	rowNaN
	rowClamped // Inverse: x rounded onto a bound and was moved inside
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
	for i := range ld[:r] {
		ld[i] += f.wt.logDet
	}
	// Rows alternate between buf and z: a chain reads one and writes the
	// other, the other layers work in place.
	cur, other := buf, z[:r*d]
	segs := f.segs
	if len(segs) > 0 && segs[0].ch != nil {
		for i := 0; i < r; i++ {
			row := cur[i*d : (i+1)*d]
			for j, m := range f.wt.mean {
				row[j] -= m
			}
		}
	} else {
		f.wt.forward(other, cur, r, d)
		cur, other = other, cur
	}
	for _, sg := range segs {
		if sg.ch == nil {
			f.layers[sg.lo].forward(cur, ld, r, d, s)
			continue
		}
		sg.ch.forward(other, ld, cur, r, d, f.layers[sg.lo:sg.hi], s)
		cur, other = other, cur
	}
	if &cur[0] != &z[0] {
		copy(z, cur)
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
// zOut, if not nil, receives the forward map's latent point of each row
// that rounded onto a bound and was moved inside (see below).
func (f *Flow) inverseRows(x, ld, z []float64, r int, s *scratch, zOut []float64) {
	d := f.d
	clear(ld[:r])
	cur, other := s.buf[:r*d], x[:r*d]
	copy(cur, z)
	whitened := true // cur is in the whitened space, not yet x
	for i := len(f.segs) - 1; i >= 0; i-- {
		sg := f.segs[i]
		if sg.ch == nil {
			f.layers[sg.lo].inverse(cur, ld, r, d, s)
			continue
		}
		sg.ch.inverse(other, ld, cur, r, d, f.layers[sg.lo:sg.hi], s)
		cur, other = other, cur
		if sg.lo == 0 { // the chain undid the whitening too: cur is x - μ
			whitened = false
			for k := 0; k < r; k++ {
				row := cur[k*d : (k+1)*d]
				for j, m := range f.wt.mean {
					row[j] += m
				}
			}
		}
	}
	if whitened {
		f.wt.inverse(other, cur, r, d)
		cur, other = other, cur
	}
	if &cur[0] != &x[0] {
		copy(x, cur)
	}
	for i := 0; i < r; i++ {
		ld[i] -= f.wt.logDet
		s.flag[i] = rowOK
		if f.bounds != nil {
			bl, exact := f.bounds.inverse(x[i*d : (i+1)*d])
			ld[i] += bl
			if !exact || !isFinite(ld[i]) {
				s.flag[i] = rowClamped
			}
		}
	}
	// Where a bound's rounding leaves x with fewer digits than the inverse
	// pass assumed (x very near or onto a bound), take the log-determinant,
	// and log q, from the forward pass at the point returned, so that
	// Sample's log q equals LogProb at its draw.
	var redo []int
	for i := 0; i < r; i++ {
		if s.flag[i] == rowClamped {
			redo = append(redo, i)
		}
	}
	if len(redo) == 0 {
		return
	}
	xs := make([]float64, len(redo)*d)
	for k, i := range redo {
		copy(xs[k*d:(k+1)*d], x[i*d:(i+1)*d])
	}
	zs := make([]float64, len(redo)*d)
	lds := make([]float64, len(redo))
	s2 := getScratch(d, f.maxK())
	f.forwardRows(zs, lds, xs, len(redo), s2)
	scratchPool.Put(s2)
	for k, i := range redo {
		ld[i] = -lds[k]
		lq := lds[k]
		for _, v := range zs[k*d : (k+1)*d] {
			lq += logPhi(v)
		}
		s.aux[i] = lq
		if zOut != nil {
			copy(zOut[i*d:(i+1)*d], zs[k*d:(k+1)*d])
		}
	}
}

func fill(s []float64, v float64) {
	for i := range s {
		s[i] = v
	}
}
