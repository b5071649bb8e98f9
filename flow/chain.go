package flow

// A run of consecutive sliced layers with full frames (k = d, the default
// for d <= 128) can be evaluated with one d×d product per layer instead
// of two, by keeping the points in the frame of the current layer. With
// u_l = A_lᵀ z the coordinates entering layer l and v_l = ψ_l(u_l) those
// leaving it (ψ the identity on inactive directions),
//
//	u_1 = A_1ᵀ z_in,   u_(l+1) = A_(l+1)ᵀ A_l v_l,   z_out = A_L v_L,
//
// and backwards with the transposes. A run that starts the flow takes the
// whitening in its first product (z_in = W (x - μ)). The layer-to-layer
// rotations are precomputed from the stored frames, so a deserialized
// flow evaluates bitwise like the fitted one.
type chain struct {
	// Row-major products (rows are points): U = X · m.
	first    []float64   // whiteᵀ A_1 (or A_1): (x-μ) (or z_in) to u_1
	link     [][]float64 // link[l] = A_lᵀ A_(l+1): v_l to u_(l+1)
	last     []float64   // A_Lᵀ: v_L to z
	lastInv  []float64   // A_L: z to v_L
	linkInv  [][]float64 // link[l]ᵀ: u_(l+1) to v_l
	firstInv []float64   // A_1ᵀ unwhiteᵀ (or A_1ᵀ): u_1 to (x-μ) (or z_in)
}

// newChain returns the chain of a run of full-frame sliced layers; with
// wt not nil, the run starts the flow and the chain includes the
// whitening.
func newChain(wt *whitening, layers []layer, d int) *chain {
	mul := func(a, b []float64) []float64 {
		out := make([]float64, d*d)
		mulRows(out, a, d, d, b, d)
		return out
	}
	ch := &chain{}
	a1 := layers[0].a
	aL := layers[len(layers)-1].a
	ch.first = a1
	ch.firstInv = transpose(a1, d, d)
	if wt != nil {
		ch.first = mul(wt.whiteT, a1)
		ch.firstInv = mul(ch.firstInv, wt.unT)
	}
	ch.link = make([][]float64, 0, len(layers)-1)
	ch.linkInv = make([][]float64, 0, len(layers)-1)
	for i := 0; i+1 < len(layers); i++ {
		lk := mul(transpose(layers[i].a, d, d), layers[i+1].a)
		ch.link = append(ch.link, lk)
		ch.linkInv = append(ch.linkInv, transpose(lk, d, d))
	}
	ch.last = transpose(aL, d, d)
	ch.lastInv = aL
	return ch
}

// forward maps r rows xc (x - μ when the chain includes the whitening,
// else z_in; overwritten) to z, adding the layers' log|J| to ld.
func (ch *chain) forward(z, ld, xc []float64, r, d int, layers []layer, s *scratch) {
	u, w := s.p[:r*d], xc[:r*d]
	mulRows(u, w, r, d, ch.first, d)
	for i, l := range layers {
		applySplines(u, ld, r, d, l.cols, l.psi, false, false, s)
		if i+1 < len(layers) {
			mulRows(w, u, r, d, ch.link[i], d)
			u, w = w, u
		}
	}
	mulRows(z, u, r, d, ch.last, d)
}

// inverse maps r rows z back to rows xc (x - μ when the chain includes
// the whitening, else z_in), adding the layers' log|dx/dz| to ld.
func (ch *chain) inverse(xc, ld, z []float64, r, d int, layers []layer, s *scratch) {
	v, w := s.p[:r*d], s.q[:r*d]
	mulRows(v, z, r, d, ch.lastInv, d)
	for i := len(layers) - 1; i >= 0; i-- {
		applySplines(v, ld, r, d, layers[i].cols, layers[i].psi, true, false, s)
		if i > 0 {
			mulRows(w, v, r, d, ch.linkInv[i-1], d)
			v, w = w, v
		}
	}
	mulRows(xc, v, r, d, ch.firstInv, d)
}
