package nuts

import (
	"math"
	"math/rand/v2"
)

// maxDeltaH is the energy error beyond which a leapfrog step is declared
// divergent, as in Stan: the integrator has left the region where it
// approximates the Hamiltonian flow and the trajectory is abandoned.
const maxDeltaH = 1000

// density evaluates log p and writes its gradient, the internal form of
// LogDensityGrad shared by Sample and the annealing baselines.
type density func(grad, x []float64) (float64, error)

// point is a state in phase space together with the target's value and
// gradient at its position, so that neither is ever recomputed.
type point struct {
	q, p, grad []float64
	// lp is the log density the dynamics use; lpx is the user's log p at
	// the corresponding x, which differs from lp by the Jacobian when the
	// sampler runs in a box's unconstrained coordinates.
	lp, lpx float64
}

func newPoint(d int) point {
	return point{q: make([]float64, d), p: make([]float64, d), grad: make([]float64, d)}
}

// copyState copies the position, gradient and log density (not the
// momentum, which a proposal does not need).
func (z *point) copyState(src *point) {
	copy(z.q, src.q)
	copy(z.grad, src.grad)
	z.lp = src.lp
	z.lpx = src.lpx
}

// level is the scratch space for one level of the tree recursion, allocated
// once per sampler so building a tree does not allocate.
type level struct {
	pSharpInitEnd, pInitEnd, rhoInit    []float64
	pSharpFinalBeg, pFinalBeg, rhoFinal []float64
	proposeFinal                        point
}

// sampler runs multinomial NUTS transitions for one chain. It is not safe
// for concurrent use; each chain owns one.
type sampler struct {
	d        int
	f        density
	rng      *rand.Rand
	metric   *metric
	eps      float64
	maxDepth int
	done     <-chan struct{}

	cur              point // current state of the chain
	fwd, bck         point // ends of the trajectory under construction
	sample, propose  point
	levels           []level
	rho, rhoFwd      []float64
	rhoBck           []float64
	pFwdFwd, pFwdBck []float64
	pBckFwd, pBckBck []float64
	sFwdFwd, sFwdBck []float64 // p♯ = M⁻¹p at the four subtree ends
	sBckFwd, sBckBck []float64
	v                []float64 // velocity scratch

	// raw, if not nil, holds the user's log p of the last evaluation
	// (see point.lpx); nil when f is the user's density itself.
	raw *float64

	gradCalls int64
	steps     int // leapfrog steps since the last cancellation check

	// Per-transition bookkeeping.
	h0           float64
	nLeapfrog    int
	sumMetroProb float64
	divergent    bool
}

// transitionInfo summarizes one NUTS transition.
type transitionInfo struct {
	accept    float64 // mean Metropolis acceptance over the trajectory
	depth     int
	leapfrogs int
	divergent bool
}

func newSampler(d int, f density, rng *rand.Rand, m *metric, maxDepth int, done <-chan struct{}) *sampler {
	vec := func() []float64 { return make([]float64, d) }
	s := &sampler{
		d: d, f: f, rng: rng, metric: m, maxDepth: maxDepth, done: done,
		cur: newPoint(d), fwd: newPoint(d), bck: newPoint(d),
		sample: newPoint(d), propose: newPoint(d),
		rho: vec(), rhoFwd: vec(), rhoBck: vec(),
		pFwdFwd: vec(), pFwdBck: vec(), pBckFwd: vec(), pBckBck: vec(),
		sFwdFwd: vec(), sFwdBck: vec(), sBckFwd: vec(), sBckBck: vec(),
		v: vec(),
	}
	s.levels = make([]level, maxDepth)
	for i := range s.levels {
		s.levels[i] = level{
			pSharpInitEnd: vec(), pInitEnd: vec(), rhoInit: vec(),
			pSharpFinalBeg: vec(), pFinalBeg: vec(), rhoFinal: vec(),
			proposeFinal: newPoint(d),
		}
	}
	return s
}

// eval evaluates the target at z.q, filling z.lp and z.grad.
func (s *sampler) eval(z *point) error {
	lp, err := s.f(z.grad, z.q)
	s.gradCalls++
	if err != nil {
		return err
	}
	z.lp = lp
	z.lpx = lp
	if s.raw != nil {
		z.lpx = *s.raw
	}
	return nil
}

// cancelCheckEvery is how many leapfrog steps may pass between two looks at
// the cancellation channel: rare enough to cost nothing, frequent enough
// that even a maximal tree (1023 steps) notices a cancellation quickly.
const cancelCheckEvery = 16

// leapfrog advances z by one step of size eps (negative to go backward in
// time) with the kick-drift-kick scheme.
func (s *sampler) leapfrog(z *point, eps float64) error {
	s.steps++
	if s.steps >= cancelCheckEvery {
		s.steps = 0
		select {
		case <-s.done:
			return errCanceled
		default:
		}
	}
	half := 0.5 * eps
	for i, g := range z.grad {
		z.p[i] += half * g
	}
	s.metric.velocity(s.v, z.p)
	for i, v := range s.v {
		z.q[i] += eps * v
	}
	if err := s.eval(z); err != nil {
		return err
	}
	for i, g := range z.grad {
		z.p[i] += half * g
	}
	return nil
}

// hamiltonian returns H = -log p + ½ pᵀM⁻¹p given pSharp = M⁻¹p. A state
// whose log density is not finite (outside the support, NaN, +Inf) or whose
// gradient spoiled the momentum gets H = +Inf: it is then a divergence with
// zero weight, so the sampler rejects it instead of propagating NaNs.
func hamiltonian(z *point, pSharp []float64) float64 {
	if math.IsInf(z.lp, 0) || math.IsNaN(z.lp) {
		return math.Inf(1)
	}
	h := -z.lp + 0.5*dot(z.p, pSharp)
	if math.IsNaN(h) {
		return math.Inf(1)
	}
	return h
}

// transition performs one multinomial NUTS transition from s.cur, leaving
// the new state in s.cur. It follows Stan's base_nuts: the trajectory is
// doubled in a random direction; a new subtree replaces the current sample
// with probability min(1, w_new/w_old) (biased progressive sampling, which
// favours states far from the start), while states inside a subtree are
// chosen in proportion to their weights. The generalized no-U-turn
// criterion is checked on the merged trajectory and additionally across
// each pair of neighbouring subtrees, which stops trajectories that turn
// within a subtree boundary (Stan 2.26 onward).
func (s *sampler) transition() (transitionInfo, error) {
	d := s.d
	z := &s.cur
	s.metric.sampleMomentum(z.p, s.rng)
	s.metric.velocity(s.sFwdFwd, z.p)
	s.h0 = hamiltonian(z, s.sFwdFwd)
	s.nLeapfrog = 0
	s.sumMetroProb = 0
	s.divergent = false

	copy(s.fwd.q, z.q)
	copy(s.fwd.p, z.p)
	copy(s.fwd.grad, z.grad)
	s.fwd.lp = z.lp
	s.fwd.lpx = z.lpx
	copy(s.bck.q, z.q)
	copy(s.bck.p, z.p)
	copy(s.bck.grad, z.grad)
	s.bck.lp = z.lp
	s.bck.lpx = z.lpx
	s.sample.copyState(z)

	copy(s.pFwdFwd, z.p)
	copy(s.pFwdBck, z.p)
	copy(s.pBckFwd, z.p)
	copy(s.pBckBck, z.p)
	copy(s.sFwdBck, s.sFwdFwd)
	copy(s.sBckFwd, s.sFwdFwd)
	copy(s.sBckBck, s.sFwdFwd)
	copy(s.rho, z.p)

	logSumWeight := 0.0 // log(exp(H0 - H0))
	depth := 0
	for depth < s.maxDepth {
		zero(s.rhoFwd)
		zero(s.rhoBck)
		logSumWeightSub := math.Inf(-1)
		var (
			valid bool
			err   error
		)
		if s.rng.Float64() > 0.5 {
			// Extend forward: the whole current trajectory becomes
			// the backward subtree.
			copy(s.rhoBck, s.rho)
			copy(s.pBckFwd, s.pFwdFwd)
			copy(s.sBckFwd, s.sFwdFwd)
			valid, err = s.buildTree(depth, &s.fwd, &s.propose,
				s.sFwdBck, s.sFwdFwd, s.rhoFwd, s.pFwdBck, s.pFwdFwd, 1, &logSumWeightSub)
		} else {
			copy(s.rhoFwd, s.rho)
			copy(s.pFwdBck, s.pBckBck)
			copy(s.sFwdBck, s.sBckBck)
			valid, err = s.buildTree(depth, &s.bck, &s.propose,
				s.sBckFwd, s.sBckBck, s.rhoBck, s.pBckFwd, s.pBckBck, -1, &logSumWeightSub)
		}
		if err != nil {
			return transitionInfo{}, err
		}
		if !valid {
			break
		}
		depth++

		if logSumWeightSub > logSumWeight {
			s.sample, s.propose = s.propose, s.sample
		} else if s.rng.Float64() < math.Exp(logSumWeightSub-logSumWeight) {
			s.sample, s.propose = s.propose, s.sample
		}
		logSumWeight = logAddExp(logSumWeight, logSumWeightSub)

		for i := 0; i < d; i++ {
			s.rho[i] = s.rhoBck[i] + s.rhoFwd[i]
		}
		// Around the merged trajectory, then across the seam between
		// the two subtrees in both directions.
		if !noUTurn(s.sBckBck, s.sFwdFwd, s.rho, nil) ||
			!noUTurn(s.sBckBck, s.sFwdBck, s.rhoBck, s.pFwdBck) ||
			!noUTurn(s.sBckFwd, s.sFwdFwd, s.rhoFwd, s.pBckFwd) {
			break
		}
	}

	z.copyState(&s.sample)
	accept := 0.0
	if s.nLeapfrog > 0 {
		accept = s.sumMetroProb / float64(s.nLeapfrog)
	}
	return transitionInfo{accept: accept, depth: depth, leapfrogs: s.nLeapfrog, divergent: s.divergent}, nil
}

// buildTree extends the trajectory end z by 2^depth leapfrog steps in
// direction sign, writing a proposal drawn from the new subtree into
// propose, the sharp momenta and momenta at its beginning and end, and
// adding its summed momentum to rho and the log of its summed weights to
// *logSumWeight. It reports whether the subtree is free of divergences and
// U-turns.
func (s *sampler) buildTree(depth int, z, propose *point,
	pSharpBeg, pSharpEnd, rho, pBeg, pEnd []float64,
	sign float64, logSumWeight *float64) (bool, error) {
	if depth == 0 {
		if err := s.leapfrog(z, sign*s.eps); err != nil {
			return false, err
		}
		s.nLeapfrog++
		s.metric.velocity(pSharpBeg, z.p)
		h := hamiltonian(z, pSharpBeg)
		if h-s.h0 > maxDeltaH {
			s.divergent = true
		}
		*logSumWeight = logAddExp(*logSumWeight, s.h0-h)
		if s.h0-h > 0 {
			s.sumMetroProb++
		} else {
			s.sumMetroProb += math.Exp(s.h0 - h)
		}
		propose.copyState(z)
		copy(pSharpEnd, pSharpBeg)
		for i, p := range z.p {
			rho[i] += p
		}
		copy(pBeg, z.p)
		copy(pEnd, z.p)
		return !s.divergent, nil
	}

	lv := &s.levels[depth-1]

	// The initial subtree starts where the trajectory ends now.
	logSumWeightInit := math.Inf(-1)
	zero(lv.rhoInit)
	ok, err := s.buildTree(depth-1, z, propose,
		pSharpBeg, lv.pSharpInitEnd, lv.rhoInit, pBeg, lv.pInitEnd, sign, &logSumWeightInit)
	if err != nil || !ok {
		return false, err
	}

	// The final subtree continues from where the initial one stopped.
	logSumWeightFinal := math.Inf(-1)
	zero(lv.rhoFinal)
	ok, err = s.buildTree(depth-1, z, &lv.proposeFinal,
		lv.pSharpFinalBeg, pSharpEnd, lv.rhoFinal, lv.pFinalBeg, pEnd, sign, &logSumWeightFinal)
	if err != nil || !ok {
		return false, err
	}

	// Within a subtree the proposal is chosen in proportion to weight
	// (uniform progressive sampling), so the final half wins with
	// probability w_final/(w_init + w_final).
	logSumWeightSub := logAddExp(logSumWeightInit, logSumWeightFinal)
	*logSumWeight = logAddExp(*logSumWeight, logSumWeightSub)
	if logSumWeightFinal > logSumWeightSub || s.rng.Float64() < math.Exp(logSumWeightFinal-logSumWeightSub) {
		// Swap the buffers rather than copying: the level's scratch
		// point is overwritten on its next use anyway.
		*propose, lv.proposeFinal = lv.proposeFinal, *propose
	}

	for i := range rho {
		rho[i] += lv.rhoInit[i] + lv.rhoFinal[i]
	}
	return noUTurn(pSharpBeg, pSharpEnd, lv.rhoInit, lv.rhoFinal) &&
		noUTurn(pSharpBeg, lv.pSharpFinalBeg, lv.rhoInit, lv.pFinalBeg) &&
		noUTurn(lv.pSharpInitEnd, pSharpEnd, lv.rhoFinal, lv.pInitEnd), nil
}

// noUTurn is the generalized no-U-turn criterion (Betancourt 2017) for a
// trajectory with summed momentum rho = r1 + r2 (r2 may be nil) and sharp
// momenta sMinus and sPlus at its ends: the trajectory keeps expanding in
// both directions while both ends still move along rho.
func noUTurn(sMinus, sPlus, r1, r2 []float64) bool {
	var a, b float64
	if r2 == nil {
		for i, r := range r1 {
			a += sPlus[i] * r
			b += sMinus[i] * r
		}
	} else {
		for i, r := range r1 {
			r += r2[i]
			a += sPlus[i] * r
			b += sMinus[i] * r
		}
	}
	return a > 0 && b > 0
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func zero(a []float64) {
	for i := range a {
		a[i] = 0
	}
}

// logAddExp returns log(exp(a) + exp(b)) without overflow, treating -Inf
// as a zero weight.
func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	// The fast path matters: every leaf adds its weight to an empty
	// (-Inf) sum.
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}
