package flow

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Streams of the random generator, one per purpose, all derived from
// Settings.Seed; a layer's stream depends on the layer's index only, so
// no choice depends on scheduling.
const (
	streamSplit = 1
	streamLayer = 1 << 32
)

// Fit fits a flow to the n = len(x)/d row-major points x of dimension d.
// weights is nil (equal weights) or holds one finite, non-negative weight
// per point, not all zero; points of weight zero are ignored. s may be nil
// for the defaults.
//
// Fit returns an error, never panics, for data it cannot fit: a length
// mismatch, NaN or infinite coordinates, a point outside the bounds, bad
// weights, a constant column, a singular covariance (coordinates linearly
// dependent), or fewer than 2d distinct points. Exact duplicate points are
// merged into one point carrying their summed weight, so that none can sit
// on both sides of the validation split; this and other fallbacks are
// reported by Flow.Warnings.
func Fit(x []float64, d int, weights []float64, s *Settings) (*Flow, error) {
	if d < 1 {
		return nil, fmt.Errorf("flow: dimension d = %d, want at least 1", d)
	}
	if len(x) == 0 || len(x)%d != 0 {
		return nil, fmt.Errorf("flow: len(x) = %d is not a positive multiple of d = %d", len(x), d)
	}
	n := len(x) / d
	r, err := s.resolve(d)
	if err != nil {
		return nil, err
	}
	if err := checkData(x, n, d, weights); err != nil {
		return nil, err
	}
	b, err := newBounds(r.Lower, r.Upper, d)
	if err != nil {
		return nil, err
	}
	if b != nil {
		for i := 0; i < n; i++ {
			if weights != nil && weights[i] == 0 {
				continue
			}
			if j, ok := b.inside(x[i*d : (i+1)*d]); !ok {
				return nil, fmt.Errorf("flow: point %d has x[%d] = %g, not strictly inside its bounds (%g, %g)", i, j, x[i*d+j], b.lo[j], b.hi[j])
			}
		}
	}
	f := &Flow{d: d, bounds: b, threads: r.Threads}
	threads := resolveThreads(r.Threads)

	pts, w, dup := distinctPoints(x, n, d, weights)
	nd := len(pts) / d
	if dup > 0 {
		f.warnings = append(f.warnings, fmt.Sprintf("merged %d exact duplicate points: %d distinct points remain, each weighted by its multiplicity", dup, nd))
	}
	if err := checkConstant(pts, nd, d); err != nil {
		return nil, err
	}
	if nd < 2*d {
		return nil, fmt.Errorf("flow: %d distinct points are too few for d = %d: need at least 2d = %d", nd, d, 2*d)
	}

	// Bounds layer: the rest of the fit works on the unconstrained points.
	ldb := make([]float64, nd)
	if b != nil {
		b.setScales(pts, nd, d)
		for i := 0; i < nd; i++ {
			ldb[i] = b.forward(pts[i*d : (i+1)*d])
		}
	}

	// Validation split.
	train, val := splitIndices(nd, r, &f.warnings)
	zt, wtr, _ := gather(pts, w, ldb, train, d)
	zv, wv, ldv := gather(pts, w, ldb, val, d)
	nt, nv := len(train), len(val)

	wt, err := fitWhitening(zt, nt, d, wtr, r.Whiten, threads)
	if err != nil {
		return nil, err
	}
	f.wt = wt
	whitenAll(wt, zt, nt, d, threads)
	whitenAll(wt, zv, nv, d, threads)
	for i := range ldv {
		ldv[i] += wt.logDet
	}

	maxLayers := r.MaxLayers
	if r.Layers > 0 {
		maxLayers = r.Layers
	}
	if nt < minTrainingForLayers || (r.Layers == 0 && nv < minValidationForStop) {
		f.warnings = append(f.warnings, fmt.Sprintf("only %d distinct points: too few for Gaussianizing layers, q is the fitted Gaussian (whitening only)", nd))
		maxLayers = 0
	}
	if nv > 0 {
		f.heldOut = append(f.heldOut, meanLogLik(zv, ldv, wv, nv, d, threads))
	}

	k := r.Directions
	mo := marginalOptions{knots: r.knotsFor(nt), damping: r.Damping, tailPoints: r.tailPoints}
	bws := candidateBandwidths
	if r.Bandwidth > 0 {
		bws = []float64{r.Bandwidth}
	}
	mo.bandwidth = bws[0]
	p := make([]float64, nt*k)
	pv := make([]float64, nv*k)
	best := 0
	var prevFrame []float64
	for l := 1; l <= maxLayers; l++ {
		rng := rand.New(rand.NewPCG(r.Seed, streamLayer+uint64(l)))
		a := randomFrame(d, k, rng)
		if warmStart && prevFrame != nil {
			a = slices.Clone(prevFrame)
		}
		if r.Rotation != RandomRotation {
			obj := searchObjective
			if r.Rotation == MaxEntropy {
				obj = objEntropy
			}
			if coarseSubset > 0 {
				sub, m := searchSample(zt, nt, d, wtr, coarseSubset, rng)
				a = maxSlicedDirections(sub, m, d, a, k, coarseMaxSteps, threads, obj)
			}
			sub, m := searchSample(zt, nt, d, wtr, searchSubset, rng)
			a = maxSlicedDirections(sub, m, d, a, k, searchMaxSteps, threads, obj)
		}
		prevFrame = a
		projectRows(p, zt, nt, d, a, k, threads)
		if nv > 0 {
			projectRows(pv, zv, nv, d, a, k, threads)
		}
		psi := make([]spline, k)
		active := make([]bool, k)
		parallelFor(threads, k, func(c int) {
			psi[c], active[c] = fitDirection(p, pv, c, k, nt, nv, wtr, wv, mo, bws)
		})
		ly := newLayer(a, d, k, psi, active)
		if ly.k == 0 {
			// No direction gains on held-out data: an identity layer.
			if l-best >= stopPatience {
				break
			}
			f.heldOut = append(f.heldOut, f.heldOut[len(f.heldOut)-1])
			continue
		}
		projectRows(p[:nt*ly.k], zt, nt, d, ly.a, ly.k, threads)
		ly.applyProjected(zt, p[:nt*ly.k], nil, nt, d, threads)
		f.layers = append(f.layers, ly)
		if nv == 0 {
			best = len(f.layers)
			continue
		}
		projectRows(pv[:nv*ly.k], zv, nv, d, ly.a, ly.k, threads)
		ly.applyProjected(zv, pv[:nv*ly.k], ldv, nv, d, threads)
		ll := meanLogLik(zv, ldv, wv, nv, d, threads)
		f.heldOut = append(f.heldOut, ll)
		if ll > f.heldOut[best] {
			best = l
		} else if l-best >= stopPatience {
			break
		}
	}
	f.layers = f.layers[:best]
	return f, nil
}

// fitDirection fits the 1-D map of direction c from the training
// projections p (nt×k) and, when there is a validation set, picks among
// the candidate bandwidths bws the map with the best held-out
// log-likelihood of the projections pv (nv×k). The held-out log-likelihood
// of a layer is the sum over its directions of these 1-D gains, so the
// choice is exact model selection for the layer. A direction whose best
// map does not beat the identity is reported inactive: Gaussianizing it
// would only fit noise.
func fitDirection(p, pv []float64, c, k, nt, nv int, wt, wv []float64, mo marginalOptions, bws []float64) (spline, bool) {
	v := make([]float64, nt)
	for i := range v {
		v[i] = p[i*k+c]
	}
	var wc []float64
	if wt != nil {
		wc = slices.Clone(wt)
	}
	md := newMarginalData(v, wc)
	if md == nil {
		return identitySpline(), false
	}
	if nv == 0 {
		return md.fit(mo), true
	}
	var best spline
	bestGain, bestBW := 0.0, 0.0
	for _, bw := range bws {
		o := mo
		o.bandwidth = bw
		sp := md.fit(o)
		var gain, wsum float64
		for i := 0; i < nv; i++ {
			x := pv[i*k+c]
			y, lg := sp.eval(x)
			wi := 1.0
			if wv != nil {
				wi = wv[i]
			}
			gain += wi * (logPhi(y) + lg - logPhi(x))
			wsum += wi
		}
		if gain /= wsum; gain > bestGain {
			best, bestGain, bestBW = sp, gain, bw
		}
	}
	if bwTrace != nil {
		bwTrace(bestBW, bestGain)
	}
	return best, bestGain > 0
}

// bwTrace, when set by tests, sees the bandwidth chosen per direction.
var bwTrace func(bw, gain float64)

// newLayer keeps the active directions of the frame a (d×k) and their maps.
func newLayer(a []float64, d, k int, psi []spline, active []bool) layer {
	var cols []int
	for c, on := range active {
		if on {
			cols = append(cols, c)
		}
	}
	ka := len(cols)
	ly := layer{k: ka, a: make([]float64, d*ka), psi: make([]spline, ka)}
	for j, c := range cols {
		for i := 0; i < d; i++ {
			ly.a[i*ka+j] = a[i*k+c]
		}
		ly.psi[j] = psi[c]
	}
	ly.at = transpose(ly.a, d, ka)
	return ly
}

// checkData validates weights and coordinates.
func checkData(x []float64, n, d int, weights []float64) error {
	if weights != nil {
		if len(weights) != n {
			return fmt.Errorf("flow: len(weights) = %d, want one per point (%d)", len(weights), n)
		}
		var total float64
		for i, v := range weights {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("flow: weight %d is %g, want finite and non-negative", i, v)
			}
			total += v
		}
		if !(total > 0) || math.IsInf(total, 0) {
			return errors.New("flow: weights sum to zero (or overflow): nothing to fit")
		}
	}
	for i := 0; i < n; i++ {
		for j, v := range x[i*d : (i+1)*d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("flow: point %d has x[%d] = %g, want finite coordinates", i, j, v)
			}
		}
	}
	return nil
}

// checkConstant reports the first column whose values are all equal.
func checkConstant(x []float64, n, d int) error {
	for j := 0; j < d; j++ {
		v0 := x[j]
		constant := true
		for i := 1; i < n && constant; i++ {
			constant = x[i*d+j] == v0
		}
		if constant {
			return fmt.Errorf("flow: column %d is constant (every point has x[%d] = %g): a density needs spread in every coordinate; drop the column or fix the sampler", j, j, v0)
		}
	}
	return nil
}

// distinctPoints returns the points of positive weight with exact
// duplicates merged into their first appearance (in original order),
// their weights (nil when all are equal) and the number of points merged
// away.
func distinctPoints(x []float64, n, d int, weights []float64) ([]float64, []float64, int) {
	idx := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if weights == nil || weights[i] > 0 {
			idx = append(idx, i)
		}
	}
	row := func(i int) []float64 { return x[i*d : (i+1)*d] }
	sorted := slices.Clone(idx)
	slices.SortFunc(sorted, func(a, b int) int {
		if c := slices.Compare(row(a), row(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	rep := make([]bool, n)
	merged := make(map[int]float64)
	dup := 0
	for g := 0; g < len(sorted); {
		h := g + 1
		for h < len(sorted) && slices.Equal(row(sorted[g]), row(sorted[h])) {
			h++
		}
		first := sorted[g] // the smallest index of the group
		rep[first] = true
		if h-g > 1 {
			dup += h - g - 1
			var sum float64
			for _, i := range sorted[g:h] {
				if weights == nil {
					sum++
				} else {
					sum += weights[i]
				}
			}
			merged[first] = sum
		}
		g = h
	}
	out := make([]float64, 0, (len(idx)-dup)*d)
	var w []float64
	if weights != nil || dup > 0 {
		w = make([]float64, 0, len(idx)-dup)
	}
	for _, i := range idx {
		if !rep[i] {
			continue
		}
		out = append(out, row(i)...)
		if w == nil {
			continue
		}
		switch v, ok := merged[i]; {
		case ok:
			w = append(w, v)
		case weights == nil:
			w = append(w, 1)
		default:
			w = append(w, weights[i])
		}
	}
	return out, w, dup
}

// splitIndices splits n points into training and validation index sets,
// each in increasing order. With a fixed number of layers there is no
// validation set.
func splitIndices(n int, r resolved, warnings *[]string) (train, val []int) {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if r.Layers > 0 {
		return all, nil
	}
	nv := int(math.Round(r.ValidationFraction * float64(n)))
	if nv < 1 {
		return all, nil
	}
	rng := rand.New(rand.NewPCG(r.Seed, streamSplit))
	perm := rng.Perm(n)
	val = slices.Clone(perm[:nv])
	train = slices.Clone(perm[nv:])
	slices.Sort(val)
	slices.Sort(train)
	return train, val
}

// gather copies the rows idx of x (and their weights and log-determinants).
func gather(x, w, ld []float64, idx []int, d int) (xs, ws, lds []float64) {
	xs = make([]float64, len(idx)*d)
	lds = make([]float64, len(idx))
	if w != nil {
		ws = make([]float64, len(idx))
	}
	for r, i := range idx {
		copy(xs[r*d:(r+1)*d], x[i*d:(i+1)*d])
		lds[r] = ld[i]
		if w != nil {
			ws[r] = w[i]
		}
	}
	return xs, ws, lds
}

// whitenAll whitens the n×d points z in place.
func whitenAll(wt *whitening, z []float64, n, d, threads int) {
	parallelFor(threads, numChunks(n), func(c int) {
		lo, hi := chunkBounds(c, n)
		buf := slices.Clone(z[lo*d : hi*d])
		wt.forward(z[lo*d:hi*d], buf, hi-lo, d)
	})
}

// projectRows sets p (n×k) = z (n×d) · a (d×k).
func projectRows(p, z []float64, n, d int, a []float64, k, threads int) {
	parallelFor(threads, numChunks(n), func(c int) {
		lo, hi := chunkBounds(c, n)
		mulRows(p[lo*k:hi*k], z[lo*d:hi*d], hi-lo, d, a, k)
	})
}

// applyProjected finishes the layer on n rows of z whose projections
// p = z·A are given: p is overwritten with ψ(p) - p, z gets (ψ(p)-p)·Aᵀ
// added, and log|J| is added to ld unless ld is nil.
func (l *layer) applyProjected(z, p, ld []float64, n, d, threads int) {
	k := l.k
	parallelFor(threads, numChunks(n), func(c int) {
		lo, hi := chunkBounds(c, n)
		for i := lo; i < hi; i++ {
			row := p[i*k : (i+1)*k]
			var sum float64
			for c, v := range row {
				y, lg := l.psi[c].eval(v)
				row[c] = y - v
				sum += lg
			}
			if ld != nil {
				ld[i] += sum
			}
		}
		addMulRowsT(z[lo*d:hi*d], hi-lo, d, p[lo*k:hi*k], k, l.at)
	})
}

// meanLogLik is the weighted mean of log φ(z) + ld over n points.
func meanLogLik(z, ld, w []float64, n, d, threads int) float64 {
	nc := numChunks(n)
	sums := make([]float64, nc)
	wsums := make([]float64, nc)
	parallelFor(threads, nc, func(c int) {
		lo, hi := chunkBounds(c, n)
		var s, ws float64
		for i := lo; i < hi; i++ {
			v := ld[i]
			for _, zj := range z[i*d : (i+1)*d] {
				v += logPhi(zj)
			}
			wi := 1.0
			if w != nil {
				wi = w[i]
			}
			s += wi * v
			ws += wi
		}
		sums[c], wsums[c] = s, ws
	})
	var s, ws float64
	for c := range sums {
		s += sums[c]
		ws += wsums[c]
	}
	return s / ws
}

// searchSample returns at most m rows of the n×d points z for the
// direction search: all of them when n <= m and the weights are equal, a
// uniform subset without replacement when n > m, and a systematic
// resample in proportion to the weights otherwise.
func searchSample(z []float64, n, d int, w []float64, m int, rng *rand.Rand) ([]float64, int) {
	if w == nil {
		if n <= m {
			return z, n
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		out := make([]float64, m*d)
		for r := 0; r < m; r++ {
			j := r + rng.IntN(n-r)
			idx[r], idx[j] = idx[j], idx[r]
			copy(out[r*d:(r+1)*d], z[idx[r]*d:(idx[r]+1)*d])
		}
		return out, m
	}
	m = min(m, n)
	var total float64
	for _, v := range w {
		total += v
	}
	out := make([]float64, m*d)
	step := total / float64(m)
	u := rng.Float64() * step
	var cum float64
	i := 0
	for r := 0; r < m; r++ {
		for i < n-1 && cum+w[i] <= u {
			cum += w[i]
			i++
		}
		copy(out[r*d:(r+1)*d], z[i*d:(i+1)*d])
		u += step
	}
	return out, m
}
