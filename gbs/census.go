package gbs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/internal/seed"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The mode census (check missed-mode) looks for modes of p that no draw
// visited, which no estimator built on the draws can account for: where
// the support is a finite box, it climbs log p from points spread over
// the box and from draws of a widened proposal, and keeps the local
// maxima that the fitted proposal q and the draws both miss. Each such
// mode's mass m relative to Z comes from a Laplace approximation, and
// ln Z is then low by about ln(1 + Σ m/Z).
//
// Cost, in log-density calls: censusBoxPoints + censusWideDraws points,
// then censusSearches Nelder–Mead searches of at most
// censusSearchCalls(d) calls each, then for each local maximum q misses
// a finite-difference Hessian of 2d² + 2d + 1 calls (at most
// censusNewtonSteps of them). At d = 3 that is about 1,900 calls, at
// d = 32 about 8,000 when nothing is missed.
const (
	// censusBoxPoints quasi-random points over the box, and
	// censusWideDraws draws of q widened censusWideScale times, are the
	// searches' candidate starts.
	censusBoxPoints = 256
	censusWideDraws = 64
	censusWideScale = 2.0
	// censusSearches is the number of local searches, started from the
	// candidates where p most exceeds q.
	censusSearches = 8
	// censusNewtonSteps bounds the Newton steps (each a Hessian) that
	// refine a maximum before its Laplace mass is taken.
	censusNewtonSteps = 3
	// censusLogRatio is the least ln(p(x)/Z) - ln q(x) at a maximum x
	// for q to count as missing it: q then puts there less than 1/1000 of
	// the density p/Z has. Where q fits p, the ratio is within a few nats
	// of 0 at p's maxima.
	censusLogRatio = 6.907755278982137 // ln 1000
	// censusRegion is the probability of the ellipsoid, under the Laplace
	// approximation at a maximum, within which no draw may lie for the
	// mode to count as unvisited.
	censusRegion = 0.999
	// censusMinShare is the least mass m/Z of a missed mode that the
	// census reports: lighter modes move ln Z by less than 10^-3.
	censusMinShare = 1e-3
	// censusZ is the number of error bars ln Z must be low by for the
	// census to warn; a missed mode whose effect is within them is
	// information.
	censusZ = 3.0
)

// censusSearchCalls is the log-density budget of one local search in d
// dimensions.
func censusSearchCalls(d int) int { return min(40*(d+1), 600) }

// MissedMode is a local maximum of log p that the mode census found where
// neither the draws nor the proposal reach (Diagnostics.CensusModes).
type MissedMode struct {
	// X is the maximum's location, LogP log p there.
	X    []float64
	LogP float64
	// LogMass is ln(m/Z): the mode's mass m by a Laplace approximation
	// over the estimate's Z.
	LogMass float64
	// LogRatio is ln(p(X)/Z) - ln q(X) for the proposal that gives X the
	// most density: how far q falls short of p there.
	LogRatio float64
}

// censusBox returns the box the census searches: Settings.Lower and
// Upper when both are given and finite in every coordinate.
func (e *estimation) censusBox() (lo, hi []float64, ok bool) {
	lo, hi = e.cfg.Lower, e.cfg.Upper
	if lo == nil || hi == nil {
		return nil, nil, false
	}
	for j := range lo {
		if math.IsInf(lo[j], 0) || math.IsInf(hi[j], 0) {
			return nil, nil, false
		}
	}
	return lo, hi, true
}

// checkCensusBox checks that ModeCensus = On has a box to search.
func checkCensusBox(cfg *Settings) error {
	if cfg.ModeCensus != On {
		return nil
	}
	for _, b := range [][]float64{cfg.Lower, cfg.Upper} {
		if b == nil {
			return fmt.Errorf("gbs: Settings.ModeCensus is On but Lower or Upper is not given: the census searches a finite box")
		}
		for j, v := range b {
			if math.IsInf(v, 0) {
				return fmt.Errorf("gbs: Settings.ModeCensus is On but the bounds of coordinate %d are not finite: the census searches a finite box", j)
			}
		}
	}
	return nil
}

// keepProposal records a fitted proposal for the census.
func (e *estimation) keepProposal(q Proposal) {
	if q != nil {
		e.censusQs = append(e.censusQs, q)
	}
}

// runCensus runs the mode census when a box is known and the settings
// allow it, and records what it found in e.diag; its log-density calls
// count in Result.NCall.
func (e *estimation) runCensus() error {
	lo, hi, ok := e.censusBox()
	if !ok || e.cfg.ModeCensus == Off || len(e.censusQs) == 0 ||
		math.IsNaN(e.res.LogZ) || math.IsInf(e.res.LogZ, 0) {
		return nil
	}
	calls := e.ev.calls
	c := &census{e: e, lo: lo, hi: hi, d: e.s.Dim, logZ: e.res.LogZ}
	modes, err := c.run(seed.New(e.cfg.Seed, streamCensus))
	e.diag.CensusCalls = int(e.ev.calls - calls)
	if err != nil {
		return fmt.Errorf("%w (in the mode census, which evaluates log p over the box; ModeCensus = Off skips it)", err)
	}
	e.diag.CensusModes = modes
	share := 0.0
	for _, m := range modes {
		share += math.Exp(m.LogMass)
	}
	e.diag.CensusShortfall = math.Log1p(share)
	e.logf("mode census: %d log-density calls, %d missed modes", e.diag.CensusCalls, len(modes))
	return nil
}

// diagnoseCensus warns about the modes the census found unvisited, when
// ln Z is low by more than censusZ error bars for them (information
// otherwise).
func (e *estimation) diagnoseCensus() {
	modes := e.diag.CensusModes
	if len(modes) == 0 {
		return
	}
	short := e.diag.CensusShortfall
	limit := censusZ * e.res.LogZErr
	kind := KindEstimate
	if !(short > limit) {
		kind = KindInfo
	}
	var where []string
	for i, m := range modes {
		if i == 3 {
			where = append(where, fmt.Sprintf("and %d more", len(modes)-3))
			break
		}
		where = append(where, fmt.Sprintf("at (%s) with mass about %.3g Z", e.point(m.X), math.Exp(m.LogMass)))
	}
	e.found(finding(CheckMissedMode, kind, WhereNone, short, limit,
		"log p has a mode that no draw visited and the proposal does not reach: %s (a local maximum over the box, where q is "+
			"below 1/1000 of p/Z and no draw lies within its %.1f %% region); ln Z is low by about ln(1 + m/Z) = %.3g, "+
			"%.1f error bars; run chains from there or from starts dispersed over the box (the pipeline does), or give bounds "+
			"that exclude it if it is not part of the model",
		strings.Join(where, "; "), 100*censusRegion, short, short/e.res.LogZErr))
}

// point formats x with its coordinates named, the first eight of them.
func (e *estimation) point(x []float64) string {
	var parts []string
	for k, v := range x {
		if k == 8 {
			parts = append(parts, fmt.Sprintf("… %d more", len(x)-8))
			break
		}
		parts = append(parts, fmt.Sprintf("%s = %.4g", e.name(k), v))
	}
	return strings.Join(parts, ", ")
}

// census is one run of the mode census.
type census struct {
	e      *estimation
	lo, hi []float64
	d      int
	logZ   float64
}

// run returns the missed modes, heaviest first.
func (c *census) run(rng *rand.Rand) ([]MissedMode, error) {
	d := c.d
	starts := c.boxPoints(rng)
	starts = append(starts, c.wideDraws(rng)...)
	n := len(starts) / d
	lp := make([]float64, n)
	if err := c.e.ev.eval(lp, starts); err != nil {
		return nil, err
	}
	lq := c.logQ(starts)
	order := make([]int, 0, n)
	for i := range n {
		if !math.IsInf(lp[i], -1) {
			order = append(order, i)
		}
	}
	// Start where p most exceeds q: in the basin of a mode q misses
	// when there is one.
	slices.SortStableFunc(order, func(a, b int) int {
		sa, sb := lp[a]-lq[a], lp[b]-lq[b]
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	var found []MissedMode
	var hessians []*mat.SymDense
	budget := censusSearchCalls(d)
	for _, i := range order[:min(censusSearches, len(order))] {
		x, fx, err := c.search(starts[i*d:(i+1)*d], lp[i], budget)
		if err != nil {
			return nil, err
		}
		r := c.logRatio(x, fx)
		c.e.logf("mode census: a search ended at log p = %.6g, ln(p/Z) - ln q = %.3g", fx, r)
		if r < censusLogRatio || c.near(x, found, hessians) {
			continue
		}
		// Curvature along the axes alone (4d calls, before the Hessian's
		// 2d²) rules out a point that is no maximum (log p curving up, or
		// a Newton step along the axes that would raise it by more than d
		// nats: a search that stopped on a slope), or that a draw lies
		// within the region of.
		g, diag, ok, err := c.axes(x, fx)
		if err != nil {
			return nil, err
		}
		if !ok || !positiveDiagonal(diag) || diagonalRise(g, diag) > float64(d) || c.drawNear(x, diag) {
			continue
		}
		m, a, ok, err := c.laplace(x, fx)
		if err != nil {
			return nil, err
		}
		if !ok || m.LogRatio < censusLogRatio || m.LogMass < math.Log(censusMinShare) ||
			c.drawNear(m.X, a) || c.near(m.X, found, hessians) {
			continue
		}
		found = append(found, m)
		hessians = append(hessians, a)
	}
	slices.SortStableFunc(found, func(a, b MissedMode) int {
		switch {
		case a.LogMass > b.LogMass:
			return -1
		case a.LogMass < b.LogMass:
			return 1
		}
		return 0
	})
	return found, nil
}

// boxPoints returns censusBoxPoints points spread over the box: a
// Kronecker sequence (the additive recurrence of the generalized golden
// ratio, low-discrepancy in any d) with a random shift, kept off the
// box's faces.
func (c *census) boxPoints(rng *rand.Rand) []float64 {
	d := c.d
	// phi is the root of phi^(d+1) = phi + 1.
	phi := 2.0
	for range 30 {
		phi = math.Pow(1+phi, 1/float64(d+1))
	}
	alpha := make([]float64, d)
	shift := make([]float64, d)
	for j := range alpha {
		alpha[j] = math.Mod(math.Pow(1/phi, float64(j+1)), 1)
		shift[j] = rng.Float64()
	}
	x := make([]float64, censusBoxPoints*d)
	for i := range censusBoxPoints {
		for j := range d {
			u := math.Mod(shift[j]+float64(i+1)*alpha[j], 1)
			x[i*d+j] = c.lo[j] + (c.hi[j]-c.lo[j])*(1e-3+(1-2e-3)*u)
		}
	}
	return x
}

// wideDraws returns censusWideDraws draws of the first proposal widened:
// its base normal scaled by censusWideScale when it is a flow (which
// keeps them in the box), its draws moved censusWideScale times further
// from their mean otherwise (those outside the box dropped).
func (c *census) wideDraws(rng *rand.Rand) []float64 {
	d, n := c.d, censusWideDraws
	q := c.e.censusQs[0]
	y := make([]float64, n*d)
	if f, ok := q.(*flow.Flow); ok {
		z := make([]float64, n*d)
		for i := range z {
			z[i] = censusWideScale * rng.NormFloat64()
		}
		f.Inverse(y, make([]float64, n), z)
	} else {
		q.Sample(y, make([]float64, n), rng)
		mean := make([]float64, d)
		for i, v := range y {
			mean[i%d] += v / float64(n)
		}
		for i := range y {
			y[i] = mean[i%d] + censusWideScale*(y[i]-mean[i%d])
		}
	}
	var out []float64
	for i := range n {
		if p := y[i*d : (i+1)*d]; c.inside(p, 0) {
			out = append(out, p...)
		}
	}
	return out
}

// inside reports whether x lies in the box shrunk by margin[j] (nil: 0)
// on each side.
func (c *census) inside(x []float64, margin float64) bool {
	for j, v := range x {
		if math.IsNaN(v) || !(v > c.lo[j]+margin*(c.hi[j]-c.lo[j]) && v < c.hi[j]-margin*(c.hi[j]-c.lo[j])) {
			return false
		}
	}
	return true
}

// logQ is, at each row-major point of x, the largest log q of the
// proposals the passes fitted.
func (c *census) logQ(x []float64) []float64 {
	n := len(x) / c.d
	out := make([]float64, n)
	buf := make([]float64, n)
	for i := range out {
		out[i] = math.Inf(-1)
	}
	for _, q := range c.e.censusQs {
		q.LogProb(buf, x)
		for i, v := range buf {
			if !math.IsNaN(v) {
				out[i] = math.Max(out[i], v)
			}
		}
	}
	return out
}

// logRatio is ln(p(x)/Z) - ln q(x), lp being log p(x).
func (c *census) logRatio(x []float64, lp float64) float64 {
	return lp - c.logZ - c.logQ(x)[0]
}

// eval returns log p at one point, -Inf outside the box without a call.
func (c *census) eval(x []float64) (float64, error) {
	if !c.inside(x, 0) {
		return math.Inf(-1), nil
	}
	var v [1]float64
	err := c.e.ev.eval(v[:], x)
	return v[0], err
}

// search climbs log p from x0 (log p = f0 there) with the Nelder–Mead
// simplex method (the adaptive parameters of Gao & Han 2012), within
// budget calls, and returns the best point found.
func (c *census) search(x0 []float64, f0 float64, budget int) ([]float64, float64, error) {
	s, err := c.newSimplex(x0, f0)
	if err != nil {
		return nil, 0, err
	}
	for s.calls < budget {
		done, err := s.step()
		if err != nil {
			return nil, 0, err
		}
		if done {
			break
		}
	}
	b := 0
	for i := range s.f {
		if s.f[i] > s.f[b] {
			b = i
		}
	}
	return s.v[b], s.f[b], nil
}

// simplex is the state of one Nelder–Mead climb: the d+1 vertices v with
// log p f, their order idx (best first) and the calls made.
type simplex struct {
	c                         *census
	v                         [][]float64
	f                         []float64
	idx                       []int
	centroid                  []float64
	calls                     int
	alpha, beta, gamma, delta float64
}

// newSimplex starts a climb at x0 (log p f0), the other vertices a
// twentieth of the box away along each coordinate.
func (c *census) newSimplex(x0 []float64, f0 float64) (*simplex, error) {
	d := c.d
	fd := float64(d)
	s := &simplex{c: c, v: make([][]float64, d+1), f: make([]float64, d+1), idx: make([]int, d+1), centroid: make([]float64, d),
		alpha: 1, beta: 1 + 2/fd, gamma: 0.75 - 1/(2*fd), delta: 1 - 1/fd}
	if d == 1 {
		s.gamma, s.delta = 0.5, 0.5
	}
	s.v[0], s.f[0] = slices.Clone(x0), f0
	for j := range d {
		p := slices.Clone(x0)
		h := 0.05 * (c.hi[j] - c.lo[j])
		if p[j]+h >= c.hi[j] {
			h = -h
		}
		p[j] += h
		var err error
		if s.v[j+1], s.f[j+1], err = s.try(p); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// try evaluates log p at x.
func (s *simplex) try(x []float64) ([]float64, float64, error) {
	s.calls++
	f, err := s.c.eval(x)
	return x, f, err
}

// at is the point centroid + t (worst - centroid).
func (s *simplex) at(t float64, worst []float64) []float64 {
	p := make([]float64, len(worst))
	for j := range p {
		p[j] = s.centroid[j] + t*(worst[j]-s.centroid[j])
	}
	return p
}

// step makes one move of the simplex: reflect, expand, contract or
// shrink. done is true once it has converged.
func (s *simplex) step() (done bool, err error) {
	d, v, f, idx := s.c.d, s.v, s.f, s.idx
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(f[b], f[a]) }) // highest log p first
	best, worst, second := idx[0], idx[d], idx[d-1]
	if d == 0 || f[best]-f[worst] <= 1e-9*(1+math.Abs(f[best])) && s.c.small(v, idx) {
		return true, nil
	}
	for j := range s.centroid {
		s.centroid[j] = 0
		for _, i := range idx[:d] {
			s.centroid[j] += v[i][j] / float64(d)
		}
	}
	xr, fr, err := s.try(s.at(-s.alpha, v[worst]))
	if err != nil {
		return false, err
	}
	switch {
	case fr > f[best]:
		xe, fe, err := s.try(s.at(-s.alpha*s.beta, v[worst]))
		if err != nil {
			return false, err
		}
		if fe > fr {
			v[worst], f[worst] = xe, fe
		} else {
			v[worst], f[worst] = xr, fr
		}
		return false, nil
	case fr > f[second]:
		v[worst], f[worst] = xr, fr
		return false, nil
	}
	// Contract, outside when the reflection beat the worst point.
	t := s.gamma
	if fr > f[worst] {
		t = -s.alpha * s.gamma
	}
	xc, fc, err := s.try(s.at(t, v[worst]))
	if err != nil {
		return false, err
	}
	if fc > math.Max(f[worst], fr) || (t > 0 && fc > f[worst]) {
		v[worst], f[worst] = xc, fc
		return false, nil
	}
	// Shrink towards the best point.
	for _, i := range idx[1:] {
		for j := range d {
			v[i][j] = v[best][j] + s.delta*(v[i][j]-v[best][j])
		}
		if _, f[i], err = s.try(v[i]); err != nil {
			return false, err
		}
	}
	return false, nil
}

// small reports whether the simplex spans less than 10^-7 of the box in
// every coordinate.
func (c *census) small(v [][]float64, idx []int) bool {
	for j := range c.d {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, i := range idx {
			lo, hi = math.Min(lo, v[i][j]), math.Max(hi, v[i][j])
		}
		if hi-lo > 1e-7*(c.hi[j]-c.lo[j]) {
			return false
		}
	}
	return true
}

// laplace refines the maximum near x (log p = lp there) by Newton steps
// on a finite-difference Hessian and returns it with its Laplace mass and
// A = -Hessian. ok is false when the point is not a maximum inside the
// box (A not positive definite, or the stencil leaves the support).
func (c *census) laplace(x []float64, lp float64) (MissedMode, *mat.SymDense, bool, error) {
	d := c.d
	for step := 0; ; step++ {
		g, a, ok, err := c.hessian(x, lp)
		if err != nil || !ok {
			return MissedMode{}, nil, false, err
		}
		var chol mat.Cholesky
		if !chol.Factorize(a) {
			return MissedMode{}, nil, false, nil
		}
		// The Newton step s = A⁻¹g, and ½ gᵀA⁻¹g, the rise of the
		// quadratic model to its maximum.
		var s mat.VecDense
		if err := chol.SolveVecTo(&s, mat.NewVecDense(d, slices.Clone(g))); err != nil {
			return MissedMode{}, nil, false, nil
		}
		rise := 0.5 * mat.Dot(&s, mat.NewVecDense(d, g))
		if rise > 0.01 && step+1 < censusNewtonSteps {
			next := make([]float64, d)
			for j := range next {
				next[j] = x[j] + s.AtVec(j)
			}
			v, err := c.eval(next)
			if err != nil {
				return MissedMode{}, nil, false, err
			}
			if v > lp {
				x, lp = next, v
				continue
			}
		}
		logMass := lp + rise + 0.5*float64(d)*math.Log(2*math.Pi) - 0.5*chol.LogDet()
		return MissedMode{X: x, LogP: lp, LogMass: logMass - c.logZ, LogRatio: c.logRatio(x, lp)}, a, true, nil
	}
}

// axes returns the gradient of log p at x by central differences and
// minus its second derivatives along the axes (a diagonal matrix), with
// steps about a tenth of the mode's width in each coordinate, set from a
// first pass at a thousandth of the box; h are the steps. ok is false
// when a step leaves the support.
func (c *census) axes(x []float64, lp float64) (g []float64, a *mat.SymDense, ok bool, err error) {
	g, a, _, ok, err = c.axesSteps(x, lp)
	return g, a, ok, err
}

func (c *census) axesSteps(x []float64, lp float64) (g []float64, a *mat.SymDense, h []float64, ok bool, err error) {
	d := c.d
	h = make([]float64, d)
	for j := range h {
		h[j] = 1e-3 * (c.hi[j] - c.lo[j])
	}
	along := func() ([]float64, bool, error) {
		pts := make([]float64, 0, 2*d*d)
		for j := range d {
			for _, sgn := range []float64{1, -1} {
				p := slices.Clone(x)
				p[j] += sgn * h[j]
				pts = append(pts, p...)
			}
		}
		return c.evalAll(pts)
	}
	v, ok, err := along()
	if err != nil || !ok {
		return nil, nil, nil, false, err
	}
	for j := range d {
		curv := -(v[2*j] - 2*lp + v[2*j+1]) / (h[j] * h[j])
		w := c.hi[j] - c.lo[j]
		if curv > 0 {
			h[j] = math.Min(math.Max(0.1/math.Sqrt(curv), 1e-7*w), 1e-2*w)
		}
	}
	if v, ok, err = along(); err != nil || !ok {
		return nil, nil, nil, false, err
	}
	g = make([]float64, d)
	a = mat.NewSymDense(d, nil)
	for j := range d {
		g[j] = (v[2*j] - v[2*j+1]) / (2 * h[j])
		a.SetSym(j, j, -(v[2*j]-2*lp+v[2*j+1])/(h[j]*h[j]))
	}
	return g, a, h, true, nil
}

// hessian returns the gradient and minus the Hessian of log p at x by
// central differences, the steps set by axesSteps. ok is false when a
// step leaves the support.
func (c *census) hessian(x []float64, lp float64) (g []float64, a *mat.SymDense, ok bool, err error) {
	d := c.d
	g, a, h, ok, err := c.axesSteps(x, lp)
	if err != nil || !ok || d == 1 {
		return g, a, ok, err
	}
	var pts []float64
	for i := range d {
		for j := i + 1; j < d; j++ {
			for _, s := range [][2]float64{{1, 1}, {1, -1}, {-1, 1}, {-1, -1}} {
				p := slices.Clone(x)
				p[i] += s[0] * h[i]
				p[j] += s[1] * h[j]
				pts = append(pts, p...)
			}
		}
	}
	w, ok, err := c.evalAll(pts)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	k := 0
	for i := range d {
		for j := i + 1; j < d; j++ {
			a.SetSym(i, j, -(w[k]-w[k+1]-w[k+2]+w[k+3])/(4*h[i]*h[j]))
			k += 4
		}
	}
	return g, a, true, nil
}

// evalAll evaluates log p at the row-major points x; ok is false when
// one lies outside the box or where log p is -Inf.
func (c *census) evalAll(x []float64) ([]float64, bool, error) {
	n := len(x) / c.d
	for i := range n {
		if !c.inside(x[i*c.d:(i+1)*c.d], 0) {
			return nil, false, nil
		}
	}
	v := make([]float64, n)
	if err := c.e.ev.eval(v, x); err != nil {
		return nil, false, err
	}
	for _, u := range v {
		if math.IsInf(u, -1) {
			return nil, false, nil
		}
	}
	return v, true, nil
}

// regionRadius2 is the squared Mahalanobis radius of the censusRegion
// ellipsoid of a Gaussian in d dimensions.
func regionRadius2(d int) float64 {
	return distuv.ChiSquared{K: float64(d)}.Quantile(censusRegion)
}

// drawNear reports whether a posterior draw lies within the
// censusRegion ellipsoid of the Laplace approximation N(x, A⁻¹).
func (c *census) drawNear(x []float64, a *mat.SymDense) bool {
	r2 := regionRadius2(c.d)
	d := c.d
	u := make([]float64, d)
	for _, ch := range c.e.s.Chains {
		for i := 0; i+d <= len(ch); i += d {
			for j := range d {
				u[j] = ch[i+j] - x[j]
			}
			if mahalanobis2(a, u) < r2 {
				return true
			}
		}
	}
	return false
}

// near reports whether x lies within the censusRegion ellipsoid of a
// mode already found.
func (c *census) near(x []float64, found []MissedMode, a []*mat.SymDense) bool {
	r2 := regionRadius2(c.d)
	u := make([]float64, c.d)
	for k, m := range found {
		for j := range u {
			u[j] = x[j] - m.X[j]
		}
		if mahalanobis2(a[k], u) < r2 {
			return true
		}
	}
	return false
}

// diagonalRise is ½ Σ g_j²/A_jj, the rise of log p to the maximum of
// its quadratic model along the axes.
func diagonalRise(g []float64, a *mat.SymDense) float64 {
	var r float64
	for j, v := range g {
		r += 0.5 * v * v / a.At(j, j)
	}
	return r
}

// positiveDiagonal reports whether every diagonal entry of a is
// positive: log p curves down along every axis, as at a maximum.
func positiveDiagonal(a *mat.SymDense) bool {
	for j := range a.SymmetricDim() {
		if !(a.At(j, j) > 0) {
			return false
		}
	}
	return true
}

// mahalanobis2 is uᵀAu.
func mahalanobis2(a *mat.SymDense, u []float64) float64 {
	var s float64
	for i, ui := range u {
		for j, uj := range u {
			s += ui * a.At(i, j) * uj
		}
	}
	return s
}
