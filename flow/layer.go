package flow

import "math"

// layer is one Gaussianizing step. A sliced layer maps
//
//	x ↦ x - A Aᵀx + A ψ(Aᵀx),   log|J| = Σ_c log ψ_c'(a_cᵀx),
//
// for an orthonormal d×k frame A and monotone 1-D maps ψ_c. Directions
// whose map did not improve the held-out likelihood are inactive: their
// map is the identity and they cost nothing in the general evaluation.
// A conditional layer (cond not nil; the sliced fields are then empty)
// maps half of the coordinates given the other half, see condLayer; a
// scale layer (scale not nil) centres and rescales all coordinates but
// one by lines in that one, see scaleLayer.
type layer struct {
	k      int
	a      []float64 // d×k frame, orthonormal
	active []bool    // k flags
	psi    []spline  // the maps of the active directions, in column order
	cond   *condLayer
	scale  *scaleLayer

	// Derived by init from the fields above.
	cols []int     // indices of the active columns
	aa   []float64 // d×len(cols): the active columns of a
	aat  []float64 // len(cols)×d: aaᵀ
}

// newLayer builds a layer from its frame, activity flags and the maps of
// the active directions.
func newLayer(a []float64, d, k int, active []bool, psi []spline) layer {
	l := layer{k: k, a: a, active: active, psi: psi}
	l.init(d)
	return l
}

// full reports whether l is a sliced layer with a full frame (k = d),
// which a chain evaluates with one d×d product.
func (l *layer) full(d int) bool { return l.cond == nil && l.scale == nil && l.k == d }

// width is the scratch width (columns per row) the layer needs.
func (l *layer) width() int {
	if l.cond != nil {
		return l.cond.width()
	}
	if l.scale != nil {
		return 1
	}
	return l.k
}

// init derives the active-column matrices.
func (l *layer) init(d int) {
	if l.cond != nil {
		l.cond.init()
		return
	}
	if l.scale != nil {
		return
	}
	l.cols = l.cols[:0]
	for c, on := range l.active {
		if on {
			l.cols = append(l.cols, c)
		}
	}
	ka := len(l.cols)
	l.aa = make([]float64, d*ka)
	for i := 0; i < d; i++ {
		for j, c := range l.cols {
			l.aa[i*ka+j] = l.a[i*l.k+c]
		}
	}
	l.aat = transpose(l.aa, d, ka)
}

// forward applies the layer to r rows of z in place, adding log|J| to ld.
func (l *layer) forward(z, ld []float64, r, d int, s *scratch) {
	if l.cond != nil {
		l.cond.apply(z, ld, r, d, s, false)
		return
	}
	if l.scale != nil {
		l.scale.apply(z, ld, r, d, false)
		return
	}
	ka := len(l.cols)
	p := s.p[:r*ka]
	mulRows(p, z, r, d, l.aa, ka)
	applySplines(p, ld, r, ka, nil, l.psi, false, true, s)
	addMulRowsT(z, r, d, p, ka, l.aat)
}

// inverse undoes forward on r rows of z in place, adding log|dx/dz| to ld.
func (l *layer) inverse(z, ld []float64, r, d int, s *scratch) {
	if l.cond != nil {
		l.cond.apply(z, ld, r, d, s, true)
		return
	}
	if l.scale != nil {
		l.scale.apply(z, ld, r, d, true)
		return
	}
	ka := len(l.cols)
	q := s.q[:r*ka]
	mulRows(q, z, r, d, l.aa, ka)
	applySplines(q, ld, r, ka, nil, l.psi, true, true, s)
	addMulRowsT(z, r, d, q, ka, l.aat)
}

// applySplines maps columns of the r×k matrix p in place: column cols[j]
// (column j when cols is nil) by psi[j], or by its inverse, replacing
// each entry v by ψ(v), or by ψ(v) - v when delta is set; the other
// columns are left alone. It adds log|J| per row to ld unless ld is nil.
//
// It works column by column on a transposed copy, so that one spline's
// knots stay in the first-level cache while it maps all rows, and it
// accumulates derivatives as products renormalized every 16 columns: one
// logarithm per row.
func applySplines(p, ld []float64, r, k int, cols []int, psi []spline, inverse, delta bool, s *scratch) {
	pt := s.pt[:k*r]
	for i := 0; i < r; i++ {
		for c, v := range p[i*k : (i+1)*k] {
			pt[c*r+i] = v
		}
	}
	dm, de := s.dm[:r], s.de[:r]
	startProducts(dm, de)
	for j := range psi {
		sp := &psi[j]
		c := j
		if cols != nil {
			c = cols[j]
		}
		col := pt[c*r : (c+1)*r]
		var sub float64
		for i, v := range col {
			var y, dy float64
			if inverse {
				y, dy = sp.inverse(v)
			} else {
				y, dy = sp.eval(v)
			}
			if delta {
				sub = v
			}
			col[i] = y - sub
			dm[i] *= dy
		}
		if j%16 == 15 || j == len(psi)-1 {
			renormalize(dm, de)
		}
	}
	if ld != nil {
		addLogProducts(ld, dm, de, inverse)
	}
	for i := 0; i < r; i++ {
		row := p[i*k : (i+1)*k]
		for c := range row {
			row[c] = pt[c*r+i]
		}
	}
}

// Per-row products of map derivatives are kept as a mantissa dm and a
// binary exponent de, renormalized every 16 factors, so that a layer takes
// one logarithm per row instead of one per factor without overflowing.

func startProducts(dm []float64, de []int) {
	for i := range dm {
		dm[i], de[i] = 1, 0
	}
}

func renormalize(dm []float64, de []int) {
	for i, m := range dm {
		f, e := math.Frexp(m)
		dm[i] = f
		de[i] += e
	}
}

// addLogProducts adds the log of each row's product to ld, or subtracts
// it for an inverse map.
func addLogProducts(ld, dm []float64, de []int, inverse bool) {
	sign := 1.0
	if inverse {
		sign = -1
	}
	for i := range dm {
		ld[i] += sign * (math.Log(dm[i]) + float64(de[i])*math.Ln2)
	}
}
