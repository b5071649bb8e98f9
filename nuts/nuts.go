package nuts

import "math/rand/v2"

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

func newPoint(d int) *point {
	return &point{q: make([]float64, d), p: make([]float64, d), grad: make([]float64, d)}
}

func (z *point) copyFrom(src *point) {
	copy(z.q, src.q)
	copy(z.p, src.p)
	copy(z.grad, src.grad)
	z.lp = src.lp
	z.lpx = src.lpx
}

// level is the scratch space for one level of the tree recursion, allocated
// once per sampler so building a tree does not allocate. A subtree of depth
// 1 needs only proposeFinal: its halves are single states, whose edges are
// the subtree's own.
type level struct {
	initEnd, finalBeg *edge // the two sides of the seam between the halves
	rhoInit, rhoFinal []float64
	proposeFinal      *point
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

	// cur is the chain's state and, during a transition, the sample
	// drawn from the trajectory so far. It, propose and the levels'
	// proposeFinal are the proposal buffers: their roles are exchanged
	// by swapping pointers, and each leapfrog step writes its new state
	// straight into the proposal buffer of its one-state subtree, so no
	// state is ever copied to become a proposal.
	cur, propose *point
	// fwdEnd and bckEnd are the ends of the trajectory. While one side
	// grows, its end is the newest state, in a proposal buffer; the end
	// of the other side must survive the overwriting of those buffers
	// and is moved into fwd or bck first.
	fwdEnd, bckEnd *point
	fwd, bck       *point
	levels         []level
	// Edges of the backward and forward subtrees of the trajectory: its
	// outer ends bckBck and fwdFwd and the seam between them.
	bckBck, bckFwd, fwdBck, fwdFwd *edge
	rho, rhoBck, rhoFwd            []float64 // summed momenta
	v                              []float64 // velocity scratch of the dense metric

	// raw, if not nil, holds the user's log p of the last evaluation
	// (see point.lpx); nil when f is the user's density itself.
	raw *float64

	gradCalls   int64
	globalCalls int64 // evaluations made by global moves
	steps       int   // leapfrog steps since the last cancellation check

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
		cur: newPoint(d), propose: newPoint(d), fwd: newPoint(d), bck: newPoint(d),
		bckBck: newEdge(d), bckFwd: newEdge(d), fwdBck: newEdge(d), fwdFwd: newEdge(d),
		rho: vec(), rhoBck: vec(), rhoFwd: vec(),
		v: vec(),
	}
	s.levels = make([]level, maxDepth)
	for i := range s.levels {
		lv := &s.levels[i]
		lv.proposeFinal = newPoint(d)
		if i > 0 {
			lv.initEnd, lv.finalBeg = newEdge(d), newEdge(d)
			lv.rhoInit, lv.rhoFinal = vec(), vec()
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
	z := s.cur
	s.h0 = hamiltonian(z.lp, s.drawMomentum(z.p, s.fwdFwd.s))
	s.nLeapfrog = 0
	s.sumMetroProb = 0
	s.divergent = false

	copy(s.fwdFwd.p, z.p)
	copy(s.bckBck.p, z.p)
	copy(s.bckBck.s, s.fwdFwd.s)
	copy(s.rho, z.p)
	s.fwdEnd, s.bckEnd = z, z

	sumWeight := weight{f: 1} // exp(H0 - H0)
	depth := 0
	for depth < s.maxDepth {
		var (
			sumWeightSub weight
			valid        bool
			err          error
		)
		if s.rng.Float64() > 0.5 {
			s.detach(&s.bckEnd, s.bck)
			// Extend forward: the whole current trajectory becomes
			// the backward subtree. The buffers swapped out are
			// overwritten before they are read.
			s.rho, s.rhoBck = s.rhoBck, s.rho
			s.fwdFwd, s.bckFwd = s.bckFwd, s.fwdFwd
			sumWeightSub, valid, err = s.buildTree(depth, &s.fwdEnd, &s.propose,
				s.fwdBck, s.fwdFwd, s.rhoFwd, s.eps)
		} else {
			s.detach(&s.fwdEnd, s.fwd)
			s.rho, s.rhoFwd = s.rhoFwd, s.rho
			s.bckBck, s.fwdBck = s.fwdBck, s.bckBck
			sumWeightSub, valid, err = s.buildTree(depth, &s.bckEnd, &s.propose,
				s.bckFwd, s.bckBck, s.rhoBck, -s.eps)
		}
		if err != nil {
			return transitionInfo{}, err
		}
		if !valid {
			break
		}
		depth++

		// Biased progressive sampling: the new subtree's proposal
		// replaces the sample with probability min(1, w_sub/w_old).
		old, sub, m := align(sumWeight, sumWeightSub)
		if sub > old || s.rng.Float64()*old < sub {
			s.cur, s.propose = s.propose, s.cur
		}
		sumWeight = weight{m: m, f: old + sub}

		var free bool
		if depth == 1 {
			// The trajectory is a pair of states.
			free = uTurnFreePair(s.bckBck.s, s.fwdFwd.s, s.rhoBck, s.rhoFwd, s.rho)
		} else {
			free = uTurnFree(s.bckBck, s.bckFwd, s.fwdBck, s.fwdFwd, s.rhoBck, s.rhoFwd, s.rho)
		}
		if !free {
			break
		}
	}

	accept := 0.0
	if s.nLeapfrog > 0 {
		accept = s.sumMetroProb / float64(s.nLeapfrog)
	}
	return transitionInfo{accept: accept, depth: depth, leapfrogs: s.nLeapfrog, divergent: s.divergent}, nil
}

// detach moves the trajectory end *end into its own buffer own before the
// other side grows, unless it is there already or in s.cur, the one
// proposal buffer that growing a subtree never writes.
func (s *sampler) detach(end **point, own *point) {
	if *end != own && *end != s.cur {
		own.copyFrom(*end)
		*end = own
	}
}

// buildTree extends the trajectory end *end by 2^depth leapfrog steps of
// size eps, leaving the new end in *end and a proposal drawn from the new
// subtree in *propose, writing the edges at its beginning and end into beg
// and fin and its summed momentum into rho. It returns the subtree's summed
// weights and whether it is free of divergences and U-turns.
func (s *sampler) buildTree(depth int, end, propose **point, beg, fin *edge, rho []float64, eps float64) (weight, bool, error) {
	switch depth {
	case 0:
		// Only a transition's first doubling builds a single state,
		// whose two edges coincide.
		w, ok, err := s.leaf(end, *propose, fin, eps)
		if err != nil {
			return weight{}, false, err
		}
		copy(beg.p, fin.p)
		copy(beg.s, fin.s)
		copy(rho, fin.p)
		return s.weigh(w), ok, nil
	case 1:
		return s.buildPair(end, propose, beg, fin, rho, eps)
	}
	lv := &s.levels[depth-1]

	// The initial subtree starts where the trajectory ends now.
	wInit, ok, err := s.buildTree(depth-1, end, propose, beg, lv.initEnd, lv.rhoInit, eps)
	if err != nil || !ok {
		return weight{}, false, err
	}
	// The final subtree continues from where the initial one stopped.
	wFinal, ok, err := s.buildTree(depth-1, end, &lv.proposeFinal, lv.finalBeg, fin, lv.rhoFinal, eps)
	if err != nil || !ok {
		return weight{}, false, err
	}
	w := s.merge(propose, &lv.proposeFinal, wInit, wFinal)
	return w, uTurnFree(beg, lv.initEnd, lv.finalBeg, fin, lv.rhoInit, lv.rhoFinal, rho), nil
}

// buildPair is buildTree for depth 1: two leapfrog steps.
func (s *sampler) buildPair(end, propose **point, beg, fin *edge, rho []float64, eps float64) (weight, bool, error) {
	lv := &s.levels[0]
	w1, ok, err := s.leaf(end, *propose, beg, eps)
	if err != nil {
		return weight{}, false, err
	}
	if !ok {
		s.weigh(w1)
		return weight{}, false, nil
	}
	w2, ok, err := s.leaf(end, lv.proposeFinal, fin, eps)
	if err != nil {
		return weight{}, false, err
	}
	// The exponentials in weigh do not depend on each other: taken
	// together, after the second step, the processor overlaps them.
	wInit, wFinal := s.weigh(w1), s.weigh(w2)
	if !ok {
		return weight{}, false, nil
	}
	w := s.merge(propose, &lv.proposeFinal, wInit, wFinal)
	return w, uTurnFreePair(beg.s, fin.s, beg.p, fin.p, rho), nil
}

// leaf takes one leapfrog step from *end into dst, which becomes the new
// end and the subtree's proposal, stores its edge in e and returns its log
// weight H0 - H, for weigh, and whether the trajectory is still free of
// divergences.
func (s *sampler) leaf(end **point, dst *point, e *edge, eps float64) (float64, bool, error) {
	kin, err := s.leapfrog(dst, *end, e, eps)
	if err != nil {
		return 0, false, err
	}
	*end = dst
	s.nLeapfrog++
	h := hamiltonian(dst.lp, kin)
	if h-s.h0 > maxDeltaH {
		s.divergent = true
	}
	return s.h0 - h, !s.divergent, nil
}

// weigh returns the weight of a state with log weight w and adds its
// acceptance statistic to the transition's.
func (s *sampler) weigh(w float64) weight {
	wt, accept := stateWeight(w)
	s.sumMetroProb += accept
	return wt
}

// merge returns the weight of two neighbouring subtrees together and
// leaves in *propose a proposal drawn from both, given one from each in
// *propose and *final. Within a subtree the proposal is chosen in
// proportion to weight (uniform progressive sampling), so the final half
// wins with probability w_final/(w_init + w_final).
func (s *sampler) merge(propose, final **point, wInit, wFinal weight) weight {
	init, fin, m := align(wInit, wFinal)
	sum := init + fin
	// A coin flip mispredicts half the time; as a conditional move it
	// does not stall the leapfrog steps that follow.
	p, q := *propose, *final
	if s.rng.Float64()*sum < fin {
		p, q = q, p
	}
	*propose, *final = p, q
	return weight{m: m, f: sum}
}

// uTurnFree is the generalized no-U-turn criterion (Betancourt 2017) for a
// trajectory made of an initial and a final subtree with summed momenta
// rhoInit and rhoFinal: the trajectory keeps expanding while both of its
// ends still move along its summed momentum, which it writes into rho.
// The same must hold for each subtree extended by the nearest state of
// the other, across the seam. All three are evaluated in one pass.
func uTurnFree(beg, initEnd, finalBeg, fin *edge, rhoInit, rhoFinal, rho []float64) bool {
	n := len(rho)
	rhoInit, rhoFinal = rhoInit[:n], rhoFinal[:n]
	bs, fs := beg.s[:n], fin.s[:n]
	iep, ies := initEnd.p[:n], initEnd.s[:n]
	fbp, fbs := finalBeg.p[:n], finalBeg.s[:n]
	var a1, b1, a2, b2, a3, b3 float64
	for i := range rho {
		ri, rf := rhoInit[i], rhoFinal[i]
		r := ri + rf
		rho[i] = r
		a1 += fs[i] * r
		b1 += bs[i] * r
		r = ri + fbp[i]
		a2 += fbs[i] * r
		b2 += bs[i] * r
		r = rf + iep[i]
		a3 += fs[i] * r
		b3 += ies[i] * r
	}
	return a1 > 0 && b1 > 0 && a2 > 0 && b2 > 0 && a3 > 0 && b3 > 0
}

// uTurnFreePair is uTurnFree for a trajectory of two single states, whose
// edges are the trajectory's: the checks across the seam then repeat the
// check of the whole, bit for bit, and are left out.
func uTurnFreePair(begS, finS, rhoInit, rhoFinal, rho []float64) bool {
	n := len(rho)
	begS, finS, rhoInit, rhoFinal = begS[:n], finS[:n], rhoInit[:n], rhoFinal[:n]
	var a, b float64
	for i := range rho {
		r := rhoInit[i] + rhoFinal[i]
		rho[i] = r
		a += finS[i] * r
		b += begS[i] * r
	}
	return a > 0 && b > 0
}
