package gbs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/gbs-evidence/gbs/internal/seed"

	"github.com/gbs-evidence/gbs/flow"
)

// The coverage check: did the user's chains miss mass of p that the
// proposal q can reach?
//
// Every chain may miss the same region (a funnel's neck, a distribution's
// far tails, a mode): nothing in the draws themselves can show it, and the
// bridge then returns ln Z low by the missed mass with a healthy error bar.
// The proposal q is a global approximation of p that can be sampled and
// evaluated exactly, so an independence Metropolis-Hastings chain with
// proposal q (accept y with probability min(1, w(y)/w(x)), w = p/q) has p
// as its stationary law whatever the user's draws were: where q puts some
// mass beyond the user's draws and p has mass there, the chain goes there
// and stays in proportion to p.
//
// The chains here take their proposals from the bridge's own proposal
// draws, whose log p is already known (no log-density call), plus a few
// fresh draws from a widened copy of q (a defensive mixture: the fitted
// flow's tails are those of the user's draws, so the widened copy reaches
// further). Those fresh draws are the check's only cost, a fraction
// coverageWideFrac of n_q.
//
// The statistic is, for each coordinate and for log p and each side, the
// fraction of the independence chains' steps (both passes' chains
// together, after a burn-in) beyond the range of the posterior draws
// (all of them when cross-fitting). For draws of p, a new draw of p falls
// beyond the extreme of N_eff effective draws with probability U/N_eff, U
// about exponential with mean 1, and the chains' steps beyond are then
// about Poisson: their mixture is geometric (coverageLimit). The chains'
// steps are not independent (a chain stays at a point of high p/q for
// several steps, and their share of steps at a proposal follows its
// weight, so they carry no more draws of p than the pool's effective
// size), so the bound counts their accepted moves, at most the pools'
// Kish size, as the number of trials. The check warns when the fraction exceeds the limit that
// this bound sets for a false-alarm rate alpha per call (the union bound
// over quantities and sides), and the chains visited at least
// coverageMinPoints distinct proposals there (one heavy-weighted draw of
// q's tail is not evidence) and the excess does not rest on the one
// point they held longest (oneHeldPoint).
//
// The same chains' log p is compared with the posterior draws' by a
// two-sample test (twosample.go): it sees mass the draws reached in the
// wrong proportion, inside their range.

// coverageExtreme is Diagnostics.CoverageWhere for the largest
// standardized deviation over the coordinates.
const coverageExtreme = -2

// Settings of the check; docs/diagnostics.md states them.
const (
	// coverageAlpha is the false-alarm rate per Evidence call on draws
	// of p (before the independence chains' own noise, which the
	// distinct-points rule guards against).
	coverageAlpha = 1e-3
	// coverageWideFrac is the number of fresh draws from the widened
	// proposal, as a fraction of the pass's proposal draws: the check's
	// cost in log-density calls.
	coverageWideFrac = 0.1
	// coverageWideScale widens the flow's base normal.
	coverageWideScale = 1.5
	// coverageChains is the number of independence chains per pass: each
	// takes a contiguous share of the shuffled proposals and starts at
	// its first proposal.
	coverageChains = 8
	// coverageBurnIn is the fraction of each independence chain's steps
	// discarded: the chains start at draws of q, not of p (without it,
	// on exact banana draws with Pareto k-hat near 1, the chains' first
	// steps put up to 1.8 times the limit below the draws' range of
	// log p; with it, none).
	coverageBurnIn = 0.1
	// coverageMinPoints is the least number of distinct points beyond the
	// range that the independence chains must have visited for a warning.
	coverageMinPoints = 4
	// coverageCovered is the ratio of the bridge function beyond the
	// range to its mean at the draws above which ln Z accounts for the
	// missed mass: the first-order shift is then at most half the mass
	// the chains found there.
	coverageCovered = 0.5
	// coverageInfoFrac is the largest share of the independence chains'
	// steps beyond the range for which a finding that ln Z accounts for
	// (covered, first-order shift within the error bar) is a note in
	// Result.Info rather than a warning: NUTS on the funnel misses 0.2 to
	// 0.9 % of p deep in the neck while a flow with a scale layer covers
	// it (docs/benchmarks.md, "The scale layer"); draws that miss more
	// than 2 % of p are not a sample of it, whatever ln Z.
	coverageInfoFrac = 0.02
	// coveragePoolMax is the most proposal draws of q a pass's pool
	// keeps (three float64 each, plus the widened draws): the
	// independence chains need a few thousand, and n_q may reach 10^8 in
	// low dimension, whose pool would not fit in memory.
	coveragePoolMax = 1 << 20
)

// coverageQuantities are the quantities the check compares: the d
// coordinates, then log p, then the largest standardized deviation
// (extreme).
func coverageQuantities(d int) int { return d + 2 }

// coveragePool collects one pass's proposals for the independence chains:
// the bridge's proposal draws and the widened proposal's, with log p, log q
// and the log density of the widened proposal at each, and which
// coordinates each lies beyond the posterior draws' range in.
type coveragePool struct {
	d int
	// med and scale are the posterior draws' median and interquartile
	// scale per coordinate, for the largest standardized deviation.
	med, scale []float64
	f          *flow.Flow // nil: q is not a flow and cannot be widened
	lo, hi     []float64  // the posterior draws' range: coordinates, log p, extreme
	nq, nw     int        // draws from q and from the widened copy
	tau        float64    // the pass's autocorrelation time of log q/p
	// nchains is the number of chains useLogP holds, one after the other.
	nchains int
	// useLogP is log p at the pass's posterior draws; calls the
	// log-density calls spent on the widened draws.
	useLogP  []float64
	calls    int64
	logp     []float64
	logq     []float64
	logqWide []float64 // NaN when f is nil
	// beyondAt lists, per proposal, the codes 2k (below the range of
	// quantity k) and 2k+1 (above) it exceeds, as (proposal, code) pairs;
	// beyondVal holds the quantity's value there, so that the warning
	// can say how far beyond the range the mass lies.
	beyondAt   []int32
	beyondCode []int32
	beyondVal  []float64
	// The pass's bridge function f = 1/(sp·p/(Z q) + sq), with ln Z =
	// logZ, and its mean at the posterior draws (0: unknown).
	logZ, sp, sq, meanF float64
}

// setBridge records the pass's bridge function: a is log q - log p at
// its posterior draws, logZ its estimate and nq its proposal draws.
func (cp *coveragePool) setBridge(a []float64, logZ float64, nq int) {
	if len(a) == 0 || nq == 0 {
		return
	}
	ne := float64(len(a)) / math.Max(cp.tau, 1)
	cp.logZ, cp.sp, cp.sq = logZ, ne/(ne+float64(nq)), float64(nq)/(ne+float64(nq))
	var sum float64
	for _, v := range a {
		sum += cp.bridgeF(-v)
	}
	cp.meanF = sum / float64(len(a))
}

// bridgeF is the pass's bridge function at a point with log p/q = lw.
func (cp *coveragePool) bridgeF(lw float64) float64 {
	return 1 / (cp.sp*math.Exp(lw-cp.logZ) + cp.sq)
}

// newCoveragePool returns the pool for a bridge pass with proposal q on
// the halves h, lp being log p at h.use and tau the autocorrelation time
// there. The range the check compares with is that of every posterior
// draw the passes use (all draws when cross-fitting, else h.use): its
// coordinates now, its log p once every pass has evaluated it
// (coverageRun). It returns nil when the check is off (or the method is
// not Bridge).
func (e *estimation) newCoveragePool(q Proposal, h halves, lp []float64, tau float64, warp bool) *coveragePool {
	if e.cfg.CoverageCheck == Off || e.cfg.Method != Bridge || warp {
		return nil
	}
	d := e.s.Dim
	m := coverageQuantities(d)
	cp := &coveragePool{d: d, lo: make([]float64, m), hi: make([]float64, m), tau: tau, useLogP: lp, nchains: h.nchains}
	cp.f, _ = q.(*flow.Flow)
	for k := range m {
		cp.lo[k], cp.hi[k] = math.Inf(1), math.Inf(-1)
	}
	all := [][]float64{h.use}
	if e.cfg.CrossFit != Off {
		all = e.s.Chains
	}
	for _, c := range all {
		for i, v := range c {
			k := i % d
			cp.lo[k] = math.Min(cp.lo[k], v)
			cp.hi[k] = math.Max(cp.hi[k], v)
		}
	}
	// The draws' relabeled copies are draws of p as well.
	e.sym.widenRange(cp.lo[:d], cp.hi[:d])
	cp.setExtreme(all, e.deviationCentre(all))
	return cp
}

// setExtreme sets the range of the largest standardized deviation over
// the posterior draws all (row-major chains) about centre, or an
// unbounded range (the quantity off) without a centre.
//
// Draws cut at their extremes in some coordinate (the largest |x_k| over
// the coordinates of a heavy-tailed p, the most extreme 15 % never
// visited) miss mass spread over the 2d coordinates' edges, each share
// below its own limit; max_k |x_k - median_k|/scale_k gathers it into one
// edge. Like any function of x it leaves draws of p beyond their range
// with probability U/N_eff, so the limit is the same.
func (cp *coveragePool) setExtreme(all [][]float64, centre *deviationCentre) {
	d := cp.d
	cp.lo[d+1], cp.hi[d+1] = math.Inf(-1), math.Inf(1)
	if centre == nil || centre.med == nil {
		return
	}
	cp.med, cp.scale = centre.med, centre.scale
	cp.lo[d+1], cp.hi[d+1] = math.Inf(1), math.Inf(-1)
	for _, c := range all {
		for i := 0; i+d <= len(c); i += d {
			v := cp.extreme(c[i : i+d])
			cp.lo[d+1], cp.hi[d+1] = math.Min(cp.lo[d+1], v), math.Max(cp.hi[d+1], v)
		}
	}
}

// deviationCentre returns the centre of the largest standardized
// deviation over the draws all, or nil when the draws are symmetrized,
// whose relabeled copies have other medians. With cross-fitting every
// pass's all is the whole of the draws, and the passes share one centre.
func (e *estimation) deviationCentre(all [][]float64) *deviationCentre {
	if e.sym != nil {
		return nil
	}
	if e.cfg.CrossFit == Off || e.centre == nil {
		return newDeviationCentre(all, e.s.Dim)
	}
	e.centre.once.Do(func() { e.centre.c = newDeviationCentre(all, e.s.Dim) })
	return e.centre.c
}

// sharedCentre is the deviation centre the cross-fitting passes share.
type sharedCentre struct {
	once sync.Once
	c    *deviationCentre
}

// deviationCentre holds each coordinate's median and scale over the
// posterior draws, the centre of the largest standardized deviation (med
// nil: too few draws).
type deviationCentre struct{ med, scale []float64 }

// newDeviationCentre computes the medians and scales of the draws all
// (row-major chains of dimension d). Order statistics are found by
// selection, not sorting, and the coordinates concurrently: at d = 256 and
// 10^5 draws sorting them was seconds of CPU in every pass.
func newDeviationCentre(all [][]float64, d int) *deviationCentre {
	n := 0
	for _, c := range all {
		n += len(c) / d
	}
	if n < 4 {
		return &deviationCentre{}
	}
	dc := &deviationCentre{med: make([]float64, d), scale: make([]float64, d)}
	forEach(d, func() []float64 { return make([]float64, 0, n) }, func(col []float64, k int) {
		col = col[:0]
		for _, c := range all {
			for i := k; i < len(c); i += d {
				col = append(col, c[i])
			}
		}
		dc.med[k], dc.scale[k] = medianScale(col)
	})
	return dc
}

// medianScale returns the median of col and its interquartile range in
// normal units; the full range where that is 0 (a coordinate with
// repeated values), and +Inf for a constant coordinate, which then does
// not count. It reorders col.
func medianScale(col []float64) (med, scale float64) {
	n := len(col)
	selectNth(col, 0, n, n/2)
	selectNth(col, 0, n/2, n/4)
	selectNth(col, n/2+1, n, 3*n/4)
	med, scale = col[n/2], (col[3*n/4]-col[n/4])/1.349
	if !(scale > 0) {
		scale = slices.Max(col) - slices.Min(col)
	}
	if !(scale > 0) {
		scale = math.Inf(1)
	}
	return med, scale
}

// extreme is the largest standardized deviation of x,
// max_k |x_k - median_k|/scale_k (0 without the draws' medians).
func (cp *coveragePool) extreme(x []float64) float64 {
	if cp.med == nil {
		return 0
	}
	m := 0.0
	for k, v := range x {
		m = math.Max(m, math.Abs(v-cp.med[k])/cp.scale[k])
	}
	return m
}

// observe adds the bridge's proposal draws y, with log q lq and log p lp,
// to the pool; z, if not nil, holds the flow's latent points of the draws,
// which give the widened flow's density without mapping y again.
func (cp *coveragePool) observe(y, lq, lp, z []float64) {
	var lw []float64
	if z != nil && cp.f != nil {
		d := cp.d
		lw = make([]float64, len(lq))
		for i := range lw {
			zi := z[i*d : (i+1)*d]
			lw[i] = lq[i] - baseLogProb(zi) + wideBaseLogProb(zi)
		}
	}
	cp.add(y, lq, lp, lw, false)
}

// baseLogProb is the log density of the flow's base N(0, I) at z.
func baseLogProb(z []float64) float64 {
	v := -float64(len(z)) * 0.5 * math.Log(2*math.Pi)
	for _, zj := range z {
		v -= 0.5 * zj * zj
	}
	return v
}

// add records proposals y (row-major) with log q lq and log p lp; wide
// says they come from the widened copy, whose log density lw is then
// given (nil otherwise: it is computed here when q is a flow).
func (cp *coveragePool) add(y, lq, lp, lw []float64, wide bool) {
	d := cp.d
	n := len(lq)
	if !wide && cp.nq+n > coveragePoolMax {
		n = max(coveragePoolMax-cp.nq, 0)
		y, lq, lp = y[:n*d], lq[:n], lp[:n]
		if lw != nil {
			lw = lw[:n]
		}
	}
	if n == 0 {
		return
	}
	base := len(cp.logp)
	cp.logp = append(cp.logp, lp...)
	cp.logq = append(cp.logq, lq...)
	if lw == nil {
		lw = make([]float64, n)
		if cp.f != nil {
			cp.wideLogProb(lw, y)
		} else {
			for i := range lw {
				lw[i] = math.NaN()
			}
		}
	}
	cp.logqWide = append(cp.logqWide, lw...)
	if wide {
		cp.nw += n
	} else {
		cp.nq += n
	}
	for i := range n {
		// The largest standardized deviation, once the draws' medians
		// are known (setExtreme).
		if v := cp.extreme(y[i*d : (i+1)*d]); cp.med != nil && !math.IsInf(lp[i], -1) && (v < cp.lo[d+1] || v > cp.hi[d+1]) {
			code := 2 * (d + 1)
			if v > cp.hi[d+1] {
				code++
			}
			cp.beyondAt = append(cp.beyondAt, int32(base+i))
			cp.beyondCode = append(cp.beyondCode, int32(code))
			cp.beyondVal = append(cp.beyondVal, v)
		}
		for k := range d {
			v := y[i*d+k]
			code := -1
			switch {
			case v < cp.lo[k]:
				code = 2 * k
			case v > cp.hi[k]:
				code = 2*k + 1
			}
			if code >= 0 && !math.IsInf(lp[i], -1) {
				cp.beyondAt = append(cp.beyondAt, int32(base+i))
				cp.beyondCode = append(cp.beyondCode, int32(code))
				cp.beyondVal = append(cp.beyondVal, v)
			}
		}
	}
}

// wideLogProb writes the log density of the widened flow at y: the flow's
// map to its base, whose normal has standard deviation coverageWideScale.
func (cp *coveragePool) wideLogProb(dst, y []float64) {
	d := cp.d
	z := make([]float64, len(dst)*d)
	ld := make([]float64, len(dst))
	cp.f.Forward(z, ld, y)
	for i := range dst {
		dst[i] = ld[i] + wideBaseLogProb(z[i*d:(i+1)*d])
	}
}

func wideBaseLogProb(z []float64) float64 {
	s := coverageWideScale
	v := -float64(len(z)) * (math.Log(s) + 0.5*math.Log(2*math.Pi))
	for _, zj := range z {
		if math.IsNaN(zj) {
			return math.Inf(-1) // outside the support
		}
		v -= 0.5 * zj * zj / (s * s)
	}
	return v
}

// drawWide completes a pass's pool with fresh draws from the widened
// flow, a fraction coverageWideFrac of the pass's proposal draws, and
// evaluates log p on them: the check's only log-density calls. cp may be
// nil (the check is off). drawStream tells the passes apart.
func (e *estimation) drawWide(cp *coveragePool, drawStream uint64) error {
	if cp == nil || cp.f == nil {
		return nil
	}
	n := coverageWideDraws(cp.nq)
	if n < 1 {
		return nil
	}
	rng := seed.New(e.cfg.Seed, coverageStream(drawStream))
	d := cp.d
	z := make([]float64, n*d)
	for i := range z {
		z[i] = coverageWideScale * rng.NormFloat64()
	}
	y := make([]float64, n*d)
	ld := make([]float64, n)
	cp.f.Inverse(y, ld, z)
	lw := make([]float64, n)
	for i := range lw {
		lw[i] = wideBaseLogProb(z[i*d:(i+1)*d]) - ld[i]
	}
	lq := make([]float64, n)
	cp.f.LogProb(lq, y)
	lp := make([]float64, n)
	calls := e.ev.calls
	if err := e.ev.eval(lp, y); err != nil {
		return fmt.Errorf("%w (in the coverage check's draws from the widened proposal)", err)
	}
	cp.calls += e.ev.calls - calls
	cp.add(y, lq, lp, lw, true)
	return nil
}

// coverageWideDraws is the number of widened draws (and log-density
// calls) of a pass with nq proposal draws.
func coverageWideDraws(nq int) int {
	return int(math.Ceil(coverageWideFrac * float64(min(nq, coveragePoolMax))))
}

func coverageStream(drawStream uint64) uint64 {
	if drawStream == streamDrawsSwapped {
		return streamCoverageSwapped
	}
	return streamCoverage
}

// coverageStat is the check's outcome: for the worst quantity and side,
// the independence chains' fraction of draws beyond the range, the limit
// it is compared with and the distinct points they visited there.
type coverageStat struct {
	frac, limit float64
	points      int
	top         float64 // share of those steps at the point held longest
	covered     float64 // the bridge function there over its mean at the draws
	code        int     // 2k: below quantity k, 2k+1: above; -1: none
	// far is the most extreme value of the quantity the independence
	// chains visited beyond the range, edge the range's end.
	far, edge float64
	neff      float64 // effective number of posterior draws
	// trials is the independence chains' effective draws of p
	// (coverageTally.trials), cluster the size in trials of the
	// clusters their steps beyond come in (coverageTally.cluster).
	trials  int
	cluster float64
}

// coverageTally accumulates the independence chains' visits beyond the
// range over the passes' pools.
type coverageTally struct {
	steps []int // per code: chain steps beyond
	// held counts, per code, the chain steps at each distinct pool
	// entry visited beyond the range.
	held []map[int32]int
	far  []float64 // per code: the most extreme value visited
	// covered sums, per code, the bridge function over its mean at the
	// posterior draws at each chain step beyond (NaN: a pool without
	// its bridge function).
	covered []float64
	// wBeyond and w2Beyond sum, per code, the pool's weights p/q_mix
	// beyond the range, each pass's as a share of its Σw and of its Σw²
	// (cluster).
	wBeyond, w2Beyond []float64
	keyBase           int32 // the first key of the pass's pool entries in held
	total             int   // chain steps in all
	moves             int   // accepted moves in all
	// passes holds each pass's independence chains for the two-sample
	// test.
	passes []chainStates
}

// chainStates are one pass's independence chains after their burn-in:
// each chain's log p, their accepted moves, and the effective size
// (Σw)²/Σw² of the pool's weights p/q.
type chainStates struct {
	logp  [][]float64
	moves int
	kish  float64
}

// run runs the independence chains over the pool and adds their visits
// beyond the range to t.
func (cp *coveragePool) run(t *coverageTally, rng *rand.Rand) {
	n := cp.nq + cp.nw
	if n < 2*coverageChains {
		return
	}
	d := cp.d
	for i, v := range cp.logp {
		code := -1
		switch {
		case math.IsInf(v, -1):
		case v < cp.lo[d]:
			code = 2 * d
		case v > cp.hi[d]:
			code = 2*d + 1
		}
		if code >= 0 {
			cp.beyondAt = append(cp.beyondAt, int32(i))
			cp.beyondCode = append(cp.beyondCode, int32(code))
			cp.beyondVal = append(cp.beyondVal, v)
		}
	}
	// log w = log p - log q_mix, q_mix the pool's mixture of q and its
	// widened copy in the proportions drawn.
	lw := make([]float64, n)
	fq, fw := math.Log(float64(cp.nq)/float64(n)), math.Log(float64(cp.nw)/float64(n))
	for i := range n {
		lm := cp.logq[i]
		if cp.nw > 0 {
			lm = logAddExp(fq+cp.logq[i], fw+cp.logqWide[i])
		}
		lw[i] = cp.logp[i] - lm
		if math.IsNaN(lw[i]) {
			lw[i] = math.Inf(-1)
		}
	}
	pass := chainStates{kish: kishSize(lw)}
	t.addWeights(lw, cp.beyondAt, cp.beyondCode)
	beyond := make(map[int32][]int32) // pool entry -> indices into beyond*
	for j, at := range cp.beyondAt {
		beyond[at] = append(beyond[at], int32(j))
	}
	perm := rng.Perm(n)
	for c := range coverageChains {
		seg := perm[c*n/coverageChains : (c+1)*n/coverageChains]
		cur := seg[0]
		states := make([]float64, 0, len(seg))
		for step, j := range seg[1:] {
			burn := step < int(coverageBurnIn*float64(len(seg)))
			// Accept with probability min(1, w(j)/w(cur)); a chain that
			// starts where p is zero leaves at the first point where it
			// is not.
			switch {
			case math.IsInf(lw[j], -1):
			case math.IsInf(lw[cur], -1) || lw[j] >= lw[cur] || rng.Float64() < math.Exp(lw[j]-lw[cur]):
				cur = j
				if !burn {
					t.moves++
					pass.moves++
				}
			}
			if burn {
				continue
			}
			t.total++
			states = append(states, cp.logp[cur])
			for _, b := range beyond[int32(cur)] {
				k := cp.beyondCode[b]
				t.steps[k]++
				rel := math.NaN()
				if cp.meanF > 0 {
					rel = cp.bridgeF(cp.logp[cur]-cp.logq[cur]) / cp.meanF
				}
				t.covered[k] += rel
				if t.held[k] == nil {
					t.held[k] = make(map[int32]int)
				}
				// Pool entries of every pass under one key space.
				key := t.keyBase + b
				t.held[k][key]++
				if t.held[k][key] == 1 {
					v := cp.beyondVal[b]
					if k%2 == 0 {
						t.far[k] = math.Min(t.far[k], v)
					} else {
						t.far[k] = math.Max(t.far[k], v)
					}
				}
			}
		}
		pass.logp = append(pass.logp, states)
	}
	t.passes = append(t.passes, pass)
	t.keyBase += int32(len(cp.beyondAt))
}

// coverageRun runs the independence chains of every pass and returns the
// worst quantity and side. It needs log p at every posterior draw the
// passes use (the pools' useLogP).
func (e *estimation) coverageRun() (coverageStat, *coverageTally) {
	d := e.s.Dim
	st := coverageStat{code: -1, frac: math.NaN(), limit: math.NaN(), covered: math.NaN()}
	if len(e.covPools) == 0 {
		return st, nil
	}
	// The log p range: every pass's posterior draws (all draws when
	// cross-fitting).
	n := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, cp := range e.covPools {
		n += len(cp.useLogP)
		for _, v := range cp.useLogP {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, cp := range e.covPools {
		cp.lo[d], cp.hi[d] = lo, hi
	}
	m := coverageQuantities(d)
	t := &coverageTally{steps: make([]int, 2*m), held: make([]map[int32]int, 2*m), far: make([]float64, 2*m), covered: make([]float64, 2*m),
		wBeyond: make([]float64, 2*m), w2Beyond: make([]float64, 2*m)}
	for k := range t.far {
		t.far[k] = math.NaN()
		if k%2 == 0 {
			t.far[k] = math.Inf(1)
		} else {
			t.far[k] = math.Inf(-1)
		}
	}
	tau := 0.0
	for i, cp := range e.covPools {
		tau += cp.tau / float64(len(e.covPools))
		// The chains' own stream, one per pass.
		cp.run(t, seed.New(seed.Derive(e.cfg.Seed, streamCoverage), uint64(i)))
	}
	if t.total == 0 {
		return st, t
	}
	st.neff = float64(n)
	if e.s.Kind != IndependentDraws {
		st.neff /= math.Max(tau, 1)
	}
	// The chains' steps cluster: a chain stays at a point of high p/q for
	// many steps, so the bound counts their accepted moves, not their
	// steps (counting steps, exact 32-d banana draws whose q had Pareto
	// k-hat 4.6 moved 63 times in 4394 steps and warned with ln Z right).
	//
	// Nor are they worth more trials than the pools hold effective draws
	// of p: the chains' share of steps at a pool entry follows its
	// weight p/q, so their fraction beyond is a weighted average over the
	// pool, as precise as its Kish size (Σw)²/Σw² of draws of p and no
	// more, however often the chains move among light entries. So the
	// trials are at most that size, as in the two-sample test (without
	// the cap, NUTS draws of the ring warned with ln Z right: about 4300
	// moves against Kish sizes of 150 to 264). And where the proposals
	// beyond the range carry heavier weights than the pool's, those
	// trials come in clusters (cluster): the limit counts clusters.
	trials := t.trials()
	st.limit = coverageLimit(trials, st.neff, m, 1)
	st.frac = 0
	worst := -1.0
	for k, s := range t.steps {
		f := float64(s) / float64(t.total)
		lim := coverageLimit(trials, st.neff, m, t.cluster(k, trials))
		if r := f / lim; r > worst && len(t.held[k]) >= coverageMinPoints && !oneHeldPoint(t.held[k], t.total, math.Min(st.neff+1, float64(trials))) {
			worst = r
			st.frac, st.points, st.code, st.limit = f, len(t.held[k]), k, lim
			st.trials, st.cluster = trials, t.cluster(k, trials)
			st.top = float64(mostHeld(t.held[k])) / float64(s)
			st.covered = t.covered[k] / float64(s)
		}
	}
	if st.code < 0 {
		return st, t
	}
	q := st.code / 2
	st.edge = e.covPools[0].lo[q]
	if st.code%2 == 1 {
		st.edge = e.covPools[0].hi[q]
	}
	st.far = t.far[st.code]
	return st, t
}

// addWeights adds one pass's pool weights exp(lw) beyond the range, the
// pool entries at[j] beyond in code[j], to the tally's sums.
func (t *coverageTally) addWeights(lw []float64, at, code []int32) {
	m := maxOf(lw)
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return
	}
	var s, s2 float64
	for _, v := range lw {
		w := math.Exp(v - m)
		s += w
		s2 += w * w
	}
	for j, i := range at {
		w := math.Exp(lw[i] - m)
		t.wBeyond[code[j]] += w / s
		t.w2Beyond[code[j]] += w * w / s2
	}
}

// cluster is the size, in trials (effective draws of p), of the
// clusters in which the independence chains' steps beyond the range in
// code k come, at least 1: the larger of what the pool's weights imply
// and what the chains' stays show.
//
// The chains' share of steps at a pool entry follows its weight, so their
// fraction beyond is about the weighted share Σ_b w/Σw of the pool, whose
// variance for a small share is Σ_b w²/(Σw)²: that of a count of Kish
// size (Σw)²/Σw² draws of p (the trials) beyond, times the weights'
// ratio Σ_b w²/Σ_b w over Σw²/Σw. Where q's tail is lighter than p's the
// few proposals beyond carry heavy weights, and the chains' steps there
// come in large clusters (exact normal draws in d = 100: one point beyond
// the range holding 37 steps). The chains add their own noise, a stay of
// random length at each point: a count of stays of h steps has variance
// Σh², so in trials its cluster size is Σh²/Σh times trials/total steps
// (about 1.5 for stays of geometric length at half acceptance; exact
// normal draws in d = 200: 12 points beyond the range holding 28 steps,
// 2.8). Below 1 the count is taken as Poisson in trials, so the limit is
// never below the trials' own.
func (t *coverageTally) cluster(k, trials int) float64 {
	r := 1.0
	if t.wBeyond[k] > 0 {
		r = math.Max(r, t.w2Beyond[k]/t.wBeyond[k])
	}
	if t.steps[k] > 0 && t.total > 0 {
		var h2 float64
		for _, h := range t.held[k] {
			h2 += float64(h) * float64(h)
		}
		r = math.Max(r, h2/float64(t.steps[k])*float64(trials)/float64(t.total))
	}
	return r
}

// trials is the number of independent trials the independence chains'
// steps count as: their accepted moves, at most the pools' summed Kish
// size, and at least 1.
func (t *coverageTally) trials() int {
	kish := 0.0
	for _, p := range t.passes {
		kish += p.kish
	}
	return max(min(t.moves, int(kish)), 1)
}

// oneHeldPoint says whether the chain steps beyond the range rest on one
// point: without the point the chains held longest, the others hold no
// more than one effective draw's share of the total, 1/draws, with draws
// the fewer of the posterior draws' effective size + 1 (the share draws
// of p leave beyond their extreme on average) and the chains' trials
// (below one effective draw of the pool, what is left is no evidence).
// A point of q's tail with a heavy weight p/q holds an independence
// chain for many steps: on the ring's NUTS draws one such point held
// 1429 of the 1435 steps beyond the range of a coordinate, 5.6 times the
// limit, ln Z right; with global moves one held 1222 of 1322, the other
// 6 points 0.3 of an effective draw of the pool's 410. Where the chains
// found mass the draws missed (the funnel without its neck) the other
// points held 1.0 to 18 effective draws.
func oneHeldPoint(held map[int32]int, total int, draws float64) bool {
	sum := 0
	for _, h := range held {
		sum += h
	}
	return float64(sum-mostHeld(held)) <= float64(total)/draws
}

// mostHeld is the most steps the chains spent at one point of held.
func mostHeld(held map[int32]int) int {
	most := 0
	for _, h := range held {
		most = max(most, h)
	}
	return most
}

// coverageLimit is the fraction of n steps of the independence chains
// beyond the range of neff effective posterior draws that chance exceeds,
// on draws of p, with probability coverageAlpha over the 2m quantities
// and sides. A new draw of p falls beyond the extreme of neff draws with
// probability U/neff, U about exponential with mean 1; given U, the steps
// beyond are about Poisson with mean λU, λ = n/neff. Their mixture is
// geometric, P(S >= s) = (λ/(1+λ))^s, so the limit is s/n with
// s = ln(2m/alpha) / ln(1 + 1/λ): about c/neff, c = ln(2m/alpha), when
// λ is large, and more counts than chance gives when it is small. The
// independence chains' steps cluster (a chain stays at a point of high
// p/q), so coverageRun passes their accepted moves as n (at most the
// pools' Kish size), and the distinct-points rule (coverageMinPoints)
// guards against a single heavy point.
//
// Where the trials beyond come in clusters of r (cluster), the count of
// clusters is Poisson with mean λU/r and the steps beyond are r times
// it: the limit is r·s/n with s = ln(2m/alpha) / ln(1 + r/λ), the
// trials' own at r = 1. At d = 100 the union bound runs over 202 counts,
// and on exact draws the largest of them were the heavy proposals'
// clusters counted as trials.
func coverageLimit(n int, neff float64, m int, r float64) float64 {
	mu := float64(n) / neff / r
	s := math.Log(2*float64(m)/coverageAlpha) / math.Log1p(1/mu)
	return r * s / float64(n)
}

// coverageAccounted reports whether ln Z (error bar logZErr) accounts for
// the mass that the coverage check found beyond the draws' range (st):
// the draws miss at most coverageInfoFrac of p, and either q covers the
// region (st.covered at least coverageCovered) and the first-order shift
// frac·(1 - covered) is not shown to exceed the error bar (its lower
// confidence bound, massLower, within it), or the shift is within the
// error bar whatever q does there (shiftBounded).
//
// A warning says ln Z is off by more than its error bar; where q covers
// the region, ln Z accounts for it up to that first-order shift, and the
// chains' fraction beyond estimates the shift only to the precision of
// their count there: a shift at the error bar within that precision (NUTS's
// draws of the funnel, which under-visit the neck by 0.1 to 0.3 % of p
// where the error bar is 0.0009) is not shown to exceed it.
func coverageAccounted(st coverageStat, logZErr float64) bool {
	if !(st.frac <= coverageInfoFrac) {
		return false
	}
	return st.covered >= coverageCovered && shiftWithin(massLower(st)*(1-st.covered), logZErr) || shiftBounded(st, logZErr)
}

// shiftBounded reports whether the shift of ln Z that the mass found
// beyond the range can cause is within the error bar at its upper
// confidence bound: massBound(st) · max(1, |1 - covered|).
//
// Draws that miss a region B of mass ε move ln Z by ε(1 - m_B/m) to first
// order, m_B/m (st.covered) the bridge function's mean over B relative to
// its mean at the draws; it is positive, so for m_B/m up to 2 the shift is
// at most ε, whatever q does in B. That bound needs no estimate of m_B/m,
// which rests on the few points the chains visited in B; where q reaches
// B only thinly (m_B/m small: NUTS's draws of the funnel, whose neck's
// tip holds little mass) it is the missed mass itself. Above 2 the shift
// is ε(m_B/m - 1), up to that factor.
func shiftBounded(st coverageStat, logZErr float64) bool {
	return massBound(st)*math.Max(1, math.Abs(1-st.covered)) <= math.Max(logZErr, 1e-9)
}

// coverageBoundZ is the number of standard deviations of the upper
// confidence bound on the missed mass (about 98 % one-sided).
const coverageBoundZ = 2

// massLower is a lower confidence bound on the share of p beyond the
// range, as massBound's upper one: (√K - z/2)², 0 below (z/2)². Without
// the chains' trials it is the fraction itself.
func massLower(st coverageStat) float64 {
	if st.trials <= 0 || !(st.cluster > 0) {
		return st.frac
	}
	n := float64(st.trials) / st.cluster
	lo := math.Max(math.Sqrt(st.frac*n)-coverageBoundZ/2.0, 0)
	return lo * lo / n
}

// massBound is an upper confidence bound on the share of p beyond the
// range that the chains' fraction st.frac estimates: the steps beyond as
// a count of clusters of st.cluster trials each, Poisson, and its upper
// bound (√(K+1) + z/2)², which holds at about the one-sided level of z
// standard deviations down to K = 0.
func massBound(st coverageStat) float64 {
	if st.trials <= 0 || !(st.cluster > 0) {
		return math.Inf(1)
	}
	n := float64(st.trials) / st.cluster // the chains' trials, in clusters
	k := st.frac * n
	up := math.Sqrt(k+1) + coverageBoundZ/2.0
	return up * up / n
}

// shiftWithin reports whether a shift of ln Z is within its error bar,
// or below the root finder's resolution (with q = p/Z the error bar is 0).
func shiftWithin(shift, logZErr float64) bool {
	return math.Abs(shift) <= math.Max(logZErr, 1e-9)
}

// diagnoseCoverage runs the coverage check's independence chains and
// warns when they found mass of p beyond the posterior draws' range.
func (e *estimation) diagnoseCoverage() {
	if len(e.covPools) == 0 {
		return
	}
	st, t := e.coverageRun()
	for _, cp := range e.covPools {
		e.diag.CoverageCalls += int(cp.calls)
	}
	e.diagnoseCoverageKS(t)
	e.diag.CoverageFrac, e.diag.CoverageLimit = st.frac, st.limit
	if st.code < 0 {
		return
	}
	k := st.code / 2
	switch k {
	case e.s.Dim:
		k = -1 // log p
	case e.s.Dim + 1:
		k = coverageExtreme
	}
	side := -1
	if st.code%2 == 1 {
		side = 1
	}
	e.diag.CoverageWhere, e.diag.CoverageSide = k, side
	if st.frac > 0 {
		e.diag.CoverageCovered = st.covered
	}
	if st.frac > st.limit {
		e.found(coverageFinding(st, k, e.name(k), e.res.LogZErr))
	}
}

// coverageFinding is what the coverage check found at quantity k (named
// name) on the statistics st, which exceed their limit, for ln Z with
// error bar logZErr: information where ln Z accounts for the region the
// draws missed (coverageAccounted), a warning that says why otherwise.
func coverageFinding(st coverageStat, k int, name string, logZErr float64) Finding {
	where, end := "below", "lowest"
	if st.code%2 == 1 {
		where, end = "above", "highest"
	}
	// Where q covers the region the draws missed, the bridge function
	// there is about its mean at the draws, and the posterior side's
	// mean, so ln Z, hardly depends on whether the draws visited it: to
	// first order ln Z is low by frac·(1 - covered) (high where the
	// bridge function there is above its mean).
	found := fmt.Sprintf("independence Metropolis-Hastings chains proposed by the fitted proposal and targeting p "+
		"spend %.2g of their draws %s the range of the posterior draws in %s (the draws' %s value is %.4g; "+
		"the independence chains reach %.4g, at %d distinct points, %.0f %% of these steps at one of them), where draws of p would leave about %.2g (limit %.2g)",
		st.frac, where, name, end, st.edge, st.far, st.points, 100*st.top, 1/(st.neff+1), st.limit)
	shift := st.frac * (1 - st.covered)
	off := fmt.Sprintf("low by about %.2g", shift)
	if shift < 0 {
		off = fmt.Sprintf("high by about %.2g", -shift)
	}
	if math.Abs(shift) < 1e-9 {
		off = "not moved"
	}
	if st.frac <= coverageInfoFrac && !(st.covered >= coverageCovered && shiftWithin(massLower(st)*(1-st.covered), logZErr)) && shiftBounded(st, logZErr) {
		return finding(CheckCoverage, KindInfo, k, st.frac, st.limit, "the draws under-represent a small part of p: %s; "+
			"whatever the proposal does there, ln Z moves by at most about that mass (at most %.2g at 98 %% confidence, "+
			"the bridge function there being %.2g of its mean at the draws), within its error bar; "+
			"posterior summaries from these draws miss it (a funnel's neck or a tail the sampler enters rarely): for those, run the sampler longer or reparameterize",
			found, massBound(st)*math.Max(1, math.Abs(1-st.covered)), st.covered)
	}
	if coverageAccounted(st, logZErr) {
		within := "within its error bar"
		if !shiftWithin(shift, logZErr) {
			within = "not beyond its error bar at the precision of the chains' count there"
		}
		return finding(CheckCoverage, KindInfo, k, st.frac, st.limit, "the draws under-represent a small part of p: %s; the proposal covers that region (the bridge function there is %.2g of its mean at the draws), "+
			"so ln Z accounts for it: to first order it is %s, %s; "+
			"posterior summaries from these draws miss it (a funnel's neck or a tail the sampler enters rarely): for those, run the sampler longer or reparameterize",
			found, st.covered, off, within)
	}
	effect := "ln Z is then low by about the mass the chains missed, and its error bar does not show it"
	switch {
	case st.covered >= coverageCovered && !shiftWithin(shift, logZErr):
		effect = fmt.Sprintf("the proposal reaches that region (the bridge function there is %.2g of its mean at the draws), "+
			"but not in proportion to p: to first order ln Z is %s, more than its error bar", st.covered, off)
	case st.covered >= coverageCovered:
		effect = fmt.Sprintf("the proposal covers that region (the bridge function there is %.2g of its mean at the draws), "+
			"so ln Z accounts for it (to first order it is %s, within its error bar), but the draws miss more than %.0f %% of p: "+
			"they are not a sample of it", st.covered, off, 100*coverageInfoFrac)
	}
	return finding(CheckCoverage, 0, k, st.frac, st.limit, "the chains appear to miss part of p: %s; %s; likely causes: "+
		"a region the sampler cannot enter (a funnel's neck, heavy tails, a mode no chain found) or draws truncated by a "+
		"bound or a filter; run the sampler longer or from dispersed starts, reparameterize, or check the draws' bounds",
		found, effect)
}
