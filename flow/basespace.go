package flow

import "math"

// BaseSpace evaluates a density p pulled back into the flow's base space,
//
//	log π(z) = log p(x) + log|det ∂x/∂z|,   x = T(z) (the flow's Inverse),
//
// and its gradient in z, so that a gradient-based sampler can run on π
// instead of p (transport-map preconditioning, NeuTra: Hoffman et al.
// 2019). Where the flow Gaussianizes p, π is close to a standard normal
// whatever p's shape, and a sampler with one step size for all of π mixes
// regions of p that differ in scale by orders of magnitude (a funnel's
// neck and mouth).
//
// With z = F(x) = F_K ∘ … ∘ F_1 (bounds, whitening, then the layers) and
// ℓ = log|det ∂z/∂x| = Σ_k ℓ_k, the gradient is
//
//	∇_z log π = J_K⁻ᵀ … J_1⁻ᵀ (∇_x log p - ∇_x ℓ),
//
// where ∇_x ℓ comes from one reverse sweep (a ← J_kᵀ a + ∇ℓ_k from the
// last layer down) and the J_k⁻ᵀ from one forward sweep; every layer's
// Jacobian is a rank-k update of the identity or triangular, so both
// cost what evaluating the flow costs.
//
// A BaseSpace holds the workspace of one point at a time: it is not safe
// for concurrent use; make one per goroutine.
type BaseSpace struct {
	f *Flow
	h [][]float64 // h[k]: input of step k (0: x, the bounds' input)

	// Per-layer state of the forward pass, for the sweeps.
	st []stepState

	a, u, t []float64 // d-vectors
}

// stepState is what the sweeps need of one layer at its input.
type stepState struct {
	dy, dl []float64 // sliced: ψ' and (log ψ')' per active column; cond: per target
	p      []float64 // sliced: Aᵀh and scratch; cond: ∂y_j/∂s_j
	ds     []float64 // cond: ∂(ψ')_j/∂s_j
}

// NewBaseSpace returns the workspace of f's base space.
func (f *Flow) NewBaseSpace() *BaseSpace {
	d := f.d
	nl := len(f.layers)
	b := &BaseSpace{f: f, h: make([][]float64, nl+3), st: make([]stepState, nl),
		a: make([]float64, d), u: make([]float64, d), t: make([]float64, d)}
	for k := range b.h {
		b.h[k] = make([]float64, d)
	}
	for k := range f.layers {
		l := &f.layers[k]
		n := len(l.cols)
		if l.cond != nil {
			n = len(l.cond.targ)
		}
		b.st[k] = stepState{dy: make([]float64, n), dl: make([]float64, n), p: make([]float64, n), ds: make([]float64, n)}
	}
	return b
}

// Point sets x = T(z) and returns log|det ∂x/∂z| at z (-Inf when z has
// no finite image, NaN for NaN input). len(x) and len(z) must be Dim().
func (b *BaseSpace) Point(x, z []float64) float64 {
	var ld [1]float64
	b.f.Inverse(x, ld[:], z)
	return ld[0]
}

// Gradient writes ∇_z log π into dst, for the point x = T(z) (from Point)
// and the gradient gx of log p at x. It returns log|det ∂z/∂x| at x (the
// negative of Point's value, to rounding), and NaN where x is outside
// the flow's support or an intermediate value is not finite (dst is then
// NaN too).
func (b *BaseSpace) Gradient(dst, x, gx []float64) float64 {
	f, d := b.f, b.f.d
	if len(dst) != d || len(x) != d || len(gx) != d {
		panic("flow: BaseSpace.Gradient: slice lengths do not match Dim()")
	}
	copy(b.h[0], x)
	if f.bounds != nil {
		if _, ok := f.bounds.inside(x); !ok {
			fill(dst, math.NaN())
			return math.NaN()
		}
	}
	ld := b.forward()
	if !isFinite(ld) {
		fill(dst, math.NaN())
		return math.NaN()
	}
	// Reverse sweep: a = ∇_x ℓ.
	a := b.a
	clear(a)
	for k := len(f.layers) - 1; k >= 0; k-- {
		b.layerT(k, a, true)
	}
	mulT(b.t, f.wt.white, a, d) // Wᵀ a
	copy(a, b.t)
	if f.bounds != nil {
		b.boundsT(a, true)
	}
	// Forward sweep: dst = J⁻ᵀ (gx - a).
	u := b.u
	for j := range u {
		u[j] = gx[j] - a[j]
	}
	if f.bounds != nil {
		b.boundsInvT(u)
	}
	mulT(b.t, f.wt.unwhite, u, d) // W⁻ᵀ u
	copy(u, b.t)
	for k := range f.layers {
		b.layerInvT(k, u)
	}
	copy(dst, u)
	return ld
}

// forward runs the flow on h[0], keeping every step's input and the
// layers' derivatives, and returns log|det ∂z/∂x|.
func (b *BaseSpace) forward() float64 {
	f, d := b.f, b.f.d
	copy(b.h[1], b.h[0])
	var ld float64
	if f.bounds != nil {
		ld = f.bounds.forward(b.h[1])
	}
	ld += f.wt.logDet
	h := b.h[2]
	for i := 0; i < d; i++ {
		var s float64
		for j, m := range f.wt.mean {
			s += f.wt.white[i*d+j] * (b.h[1][j] - m)
		}
		h[i] = s
	}
	for k := range f.layers {
		next := b.h[k+3]
		copy(next, b.h[k+2])
		ld += b.layerForward(k, next)
	}
	return ld
}

// layerForward applies layer k to h in place, recording its derivatives,
// and returns its log|J|.
func (b *BaseSpace) layerForward(k int, h []float64) float64 {
	l, st, d := &b.f.layers[k], &b.st[k], b.f.d
	var ld float64
	if c := l.cond; c != nil {
		m := len(c.cond)
		for t, j := range c.targ {
			beta := c.beta[t*c.nf() : (t+1)*c.nf()]
			s := beta[0]
			for kk, i := range c.cond {
				v := h[i]
				s += beta[1+kk]*v + beta[1+m+kk]*(v*v-1)
			}
			cs := c.centres[t]
			bin, frac := hat(cs, s)
			v := h[j]
			y0, dy0, d20 := c.psi[t][bin].eval2(v)
			y, dy, d2, dyds, dds := y0, dy0, d20, 0.0, 0.0
			if bin+1 < len(cs) { // interior: t moves with s
				y1, dy1, d21 := c.psi[t][bin+1].eval2(v)
				y = (1-frac)*y0 + frac*y1
				dy = (1-frac)*dy0 + frac*dy1
				d2 = (1-frac)*d20 + frac*d21
				dtds := 1 / (cs[bin+1] - cs[bin])
				if !(s > cs[0]) {
					dtds = 0
				}
				dyds, dds = (y1-y0)*dtds, (dy1-dy0)*dtds
			}
			h[j] = y
			st.dy[t], st.dl[t], st.p[t], st.ds[t] = dy, d2/dy, dyds, dds
			ld += math.Log(dy)
		}
		return ld
	}
	ka := len(l.cols)
	for c := 0; c < ka; c++ {
		var p float64
		for i := 0; i < d; i++ {
			p += h[i] * l.aa[i*ka+c]
		}
		y, dy, d2 := l.psi[c].eval2(p)
		st.p[c] = y - p
		st.dy[c], st.dl[c] = dy, d2/dy
		ld += math.Log(dy)
	}
	for i := 0; i < d; i++ {
		row := l.aa[i*ka : (i+1)*ka]
		h[i] += dotF(row, st.p[:ka])
	}
	return ld
}

// condDeriv returns ∂s_j/∂h_i for conditioning coordinate kk (index
// i = cond[kk]) of target t.
func condDeriv(c *condLayer, t, kk int, hi float64) float64 {
	beta := c.beta[t*c.nf() : (t+1)*c.nf()]
	return beta[1+kk] + 2*beta[1+len(c.cond)+kk]*hi
}

// layerT sets a to J_kᵀ a, plus ∇ℓ_k when addLogDet is set, with J_k
// layer k's Jacobian at its input h[k+2].
func (b *BaseSpace) layerT(k int, a []float64, addLogDet bool) {
	l, st, h, d := &b.f.layers[k], &b.st[k], b.h[k+2], b.f.d
	if c := l.cond; c != nil {
		for t, j := range c.targ {
			// Column j of J (row j of Jᵀ): ∂y_j/∂h_j on the diagonal,
			// ∂y_j/∂s_j ∂s_j/∂h_i for i in cond.
			aj := a[j]
			gy := aj * st.p[t]
			gl := 0.0
			if addLogDet {
				gl = st.ds[t] / st.dy[t]
			}
			if gy != 0 || gl != 0 {
				for kk, i := range c.cond {
					a[i] += (gy + gl) * condDeriv(c, t, kk, h[i])
				}
			}
			a[j] = aj * st.dy[t]
			if addLogDet {
				a[j] += st.dl[t]
			}
		}
		return
	}
	ka := len(l.cols)
	proj := b.t[:ka]
	for c := 0; c < ka; c++ {
		var s float64
		for i := 0; i < d; i++ {
			s += a[i] * l.aa[i*ka+c]
		}
		s *= st.dy[c] - 1
		if addLogDet {
			s += st.dl[c]
		}
		proj[c] = s
	}
	for i := 0; i < d; i++ {
		a[i] += dotF(l.aa[i*ka:(i+1)*ka], proj)
	}
}

// layerInvT sets u to J_k⁻ᵀ u.
func (b *BaseSpace) layerInvT(k int, u []float64) {
	l, st, h, d := &b.f.layers[k], &b.st[k], b.h[k+2], b.f.d
	if c := l.cond; c != nil {
		// Jᵀ = [[I, Cᵀ], [0, D]] over (cond, targ): w_targ = u_targ / D,
		// then w_cond = u_cond - Cᵀ w_targ.
		for t, j := range c.targ {
			u[j] /= st.dy[t]
		}
		for t, j := range c.targ {
			gy := u[j] * st.p[t]
			if gy == 0 {
				continue
			}
			for kk, i := range c.cond {
				u[i] -= gy * condDeriv(c, t, kk, h[i])
			}
		}
		return
	}
	// J = I + A diag(ψ' - 1) Aᵀ with orthonormal A: J⁻¹ = I + A diag(1/ψ' - 1) Aᵀ.
	ka := len(l.cols)
	proj := b.t[:ka]
	for c := 0; c < ka; c++ {
		var s float64
		for i := 0; i < d; i++ {
			s += u[i] * l.aa[i*ka+c]
		}
		proj[c] = s * (1/st.dy[c] - 1)
	}
	for i := 0; i < d; i++ {
		u[i] += dotF(l.aa[i*ka:(i+1)*ka], proj)
	}
}

// boundsT sets a to Dᵀ a (+ ∇ℓ of the bounds layer when addLogDet), at
// the bounds' input h[0]; D is diagonal.
func (b *BaseSpace) boundsT(a []float64, addLogDet bool) {
	bd := b.f.bounds
	for j, v := range b.h[0] {
		dy, dl := bd.deriv(j, v)
		a[j] *= dy
		if addLogDet {
			a[j] += dl
		}
	}
}

// boundsInvT sets u to D⁻ᵀ u.
func (b *BaseSpace) boundsInvT(u []float64) {
	bd := b.f.bounds
	for j, v := range b.h[0] {
		dy, _ := bd.deriv(j, v)
		u[j] /= dy
	}
}

// mulT sets dst = Mᵀ v for the d×d row-major M.
func mulT(dst, m, v []float64, d int) {
	clear(dst)
	for i := 0; i < d; i++ {
		vi := v[i]
		row := m[i*d : (i+1)*d]
		for j := range dst {
			dst[j] += row[j] * vi
		}
	}
}
