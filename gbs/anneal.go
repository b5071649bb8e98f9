package gbs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/gbs-evidence/gbs/internal/seed"
)

// The annealed bridge: where q and p barely overlap (few draws for the
// dimension: a Gaussian fitted to n draws in d dimensions is about
// d²/(4n) nats from p, 25 nats at d = 1000 and n = 10⁴), no single bridge
// between them has a usable error, and the direct estimate's error bar is
// wide or unreliable. A path of densities
//
//	π_β ∝ q^(1-β) p^β = q exp(β w),   w = log p - log q,   0 ≤ β ≤ 1,
//
// joins q (β = 0) to p (β = 1) in steps each of good overlap. Particles
// cross it from both ends: forward from draws of q (annealed importance
// sampling, Neal 2001), and in reverse from held-out draws of p. Each
// crossing adds up a work, the forward one
//
//	W_F = Σ_k (β_{k+1} - β_k) w(x_k),   E[exp(W_F)] = Z,
//
// the reverse one likewise from p towards q with E[exp(W_R)] = 1/Z. The
// states x_k move between rungs by a Markov kernel that leaves π_{β_k}
// invariant and is reversible, and the reverse crossing uses the forward
// one's kernels in reverse order; then the two work distributions obey
// Crooks' relation P_F(W) = P_R(-W) exp(W - ln Z), exactly the relation
// between log p/q at draws of q and log q/p at draws of p that the bridge
// equation rests on. So ln Z is the root of the same optimal bridge
// equation (Bennett's acceptance ratio) with the works in place of the
// log ratios, and its error comes from the same formula. One rung
// (β = 0 → 1 without moves) is the direct bridge.
//
// The kernel is a preconditioned Crank-Nicolson move in q's base space:
// with x = T(z) and z ~ N(0, I) under q,
//
//	z' = √(1-ρ²) z + ρ ξ,   ξ ~ N(0, I),
//
// leaves N(0, I) invariant and is reversible for it, so for π_β, which
// is N(0, I) tilted by exp(β w(T(z))) in z, Metropolis-Hastings accepts
// with min(1, exp(β (w(x') - w(x)))): no gradient, one log-density call
// per move, and an acceptance that does not fall with the dimension
// (Cotter et al. 2013). The step ρ at each rung is set so that β Δw has a
// standard deviation of annealStepSD, from the spread of w.
//
// The schedule is set from the direct bridge's own numbers: the spread
// sd_β of w at β = 0 (the proposal draws) and β = 1 (the posterior draws),
// interpolated geometrically. The cost of crossing a stretch dβ in work
// variance is about sd_β √τ_β dβ (the thermodynamic length; τ_β ≈ 2/ρ²
// is the kernel's correlation time for w), so the rungs are spaced
// evenly in that length Λ, and the number of rungs K = κ Λ²/V gives a
// forward work variance of about V (annealWorkVar), where the bridge of
// the works has a small, reliable error. Each crossing costs K - 1
// log-density calls.

// LatentProposal is a proposal that is the push-forward x = T(z) of a
// standard normal z, with T and its inverse available (a flow.Flow is
// one). The annealed bridge moves its particles in z.
type LatentProposal interface {
	Proposal
	// Forward maps points x to z and writes log|det ∂z/∂x| into logdet.
	Forward(z, logdet, x []float64)
	// Inverse maps points z to x and writes log|det ∂x/∂z| into logdet.
	Inverse(x, logdet, z []float64)
}

const (
	// annealParticles is the number of particles per direction and pass.
	// In the regime the schedule aims at, the squared error falls as
	// 1/(particles × rungs), so more particles or more rungs cost alike;
	// 64 keep the error estimate of the works' bridge reliable.
	annealParticles = 64
	// annealWorkVar is the forward work variance the schedule aims at.
	annealWorkVar = 1.0
	// annealKappa converts the thermodynamic length into rungs,
	// Var(W_F) ≈ annealKappa Λ²/K, calibrated on the correlated Gaussian
	// at d = 100 with 1000 draws (docs/benchmarks.md): there K = 119 gave
	// Var(W_F) 1.1 and Var(W_R) 6 to 8.
	annealKappa = 4.0
	// annealStepSD is the standard deviation of β Δw that the pCN step
	// aims at (acceptance about 2Φ(-annealStepSD/2) = 23 %, the
	// random-walk optimum; 1.5 gave the same error per call).
	annealStepSD = 2.4
	// annealMaxSteps caps the rungs (the error bar then says what the
	// cap cost).
	annealMaxSteps = 5000
)

// annealPlan is a schedule: the rungs β_0 = 0 < ... < β_K = 1 and the
// pCN step ρ_k of the move at each intermediate rung.
type annealPlan struct {
	beta, rho []float64
	capped    bool // K was capped at annealMaxSteps
}

// steps is K, the number of rungs crossed.
func (p annealPlan) steps() int { return len(p.beta) - 1 }

// robustSD is the spread of x from its 16th and 84th percentiles: w is
// heavy-tailed in exp, not in itself, but a few far draws should not set
// the schedule.
func robustSD(x []float64) float64 {
	s := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	if len(s) < 4 {
		return math.NaN()
	}
	sort.Float64s(s)
	q := func(p float64) float64 {
		f := p * float64(len(s)-1)
		i := int(f)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (f-float64(i))*(s[i+1]-s[i])
	}
	return (q(0.8413) - q(0.1587)) / 2
}

// newAnnealPlan spaces the rungs for the spreads sd0 of w under q and sd1
// under p.
func newAnnealPlan(sd0, sd1 float64) annealPlan {
	sd0, sd1 = math.Max(sd0, 1e-3), math.Max(sd1, 1e-3)
	sdAt := func(b float64) float64 { return sd0 * math.Pow(sd1/sd0, b) }
	rhoAt := func(b float64) float64 {
		if b <= 0 {
			return 1
		}
		return math.Min(1, annealStepSD/(b*math.Sqrt2*sdAt(b)))
	}
	g := func(b float64) float64 {
		r := rhoAt(b)
		return sdAt(b) * math.Sqrt((2-r*r)/(r*r))
	}
	const grid = 2000
	cum := make([]float64, grid+1)
	prev := g(0)
	for i := 1; i <= grid; i++ {
		cur := g(float64(i) / grid)
		cum[i] = cum[i-1] + (prev+cur)/2/grid
		prev = cur
	}
	lambda := cum[grid]
	k := int(math.Ceil(annealKappa * lambda * lambda / annealWorkVar))
	var p annealPlan
	if k > annealMaxSteps {
		k, p.capped = annealMaxSteps, true
	}
	k = max(k, 2)
	p.beta = make([]float64, k+1)
	p.rho = make([]float64, k+1)
	j := 0
	for i := 1; i < k; i++ {
		t := lambda * float64(i) / float64(k)
		for j < grid && cum[j+1] < t {
			j++
		}
		f := (t - cum[j]) / (cum[j+1] - cum[j])
		p.beta[i] = (float64(j) + f) / grid
		p.rho[i] = rhoAt(p.beta[i])
	}
	p.beta[k] = 1
	return p
}

// annealRun crosses the plan's path with nF particles forward from q and
// in reverse from the posterior draws xR (row-major) with log p lpR; it
// returns the forward works W_F and the reverse works W_R.
func (e *estimation) annealRun(q LatentProposal, plan annealPlan, nF int, xR, lpR []float64, rng *rand.Rand) (wF, wR []float64, err error) {
	d := e.s.Dim
	nR := len(lpR)
	n := nF + nR
	z := make([]float64, n*d)
	x := make([]float64, n*d)
	w := make([]float64, n)
	ld := make([]float64, n)
	for i := range z[:nF*d] {
		z[i] = rng.NormFloat64()
	}
	// Forward particles start at draws of q, reverse ones at draws of p.
	lq := make([]float64, n)
	q.Inverse(x[:nF*d], ld[:nF], z[:nF*d])
	for i := 0; i < nF; i++ {
		lq[i] = logPhiSum(z[i*d:(i+1)*d]) - ld[i]
	}
	if err := e.ev.eval(w[:nF], x[:nF*d]); err != nil {
		return nil, nil, err
	}
	q.Forward(z[nF*d:], ld[nF:], xR)
	for i := nF; i < n; i++ {
		lq[i] = logPhiSum(z[i*d:(i+1)*d]) + ld[i]
		w[i] = lpR[i-nF]
	}
	for i := range w {
		w[i] -= lq[i]
		if math.IsNaN(w[i]) {
			return nil, nil, fmt.Errorf("gbs: annealed bridge: log p - log q is NaN at a starting point")
		}
	}
	k := plan.steps()
	beta := make([]float64, n) // each particle's rung for this move
	zp := make([]float64, n*d)
	xp := make([]float64, n*d)
	wp := make([]float64, n)
	wF, wR = make([]float64, nF), make([]float64, nR)
	// mh proposes zp for every particle (propose writes particle i's
	// proposal, reversible for N(0, I)) and accepts each by
	// Metropolis-Hastings for its π_β: one batch of log-density calls.
	mh := func(propose func(i int)) error {
		for i := 0; i < n; i++ {
			propose(i)
		}
		q.Inverse(xp, ld, zp)
		if err := e.ev.eval(wp, xp); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			wp[i] -= logPhiSum(zp[i*d:(i+1)*d]) - ld[i]
			// A NaN or -Inf log p (outside the support) is a rejection.
			u := rng.Float64()
			if !math.IsNaN(wp[i]) && !math.IsInf(wp[i], -1) && math.Log(u) < beta[i]*(wp[i]-w[i]) {
				copy(z[i*d:(i+1)*d], zp[i*d:(i+1)*d])
				w[i] = wp[i]
			}
		}
		return nil
	}
	for j := 0; j < k; j++ {
		// The forward particles cross rung j → j+1, the reverse ones
		// rung k-j → k-j-1.
		df, dr := plan.beta[j+1]-plan.beta[j], plan.beta[k-j]-plan.beta[k-j-1]
		for i := 0; i < nF; i++ {
			wF[i] += df * w[i]
		}
		for i := 0; i < nR; i++ {
			wR[i] -= dr * w[nF+i]
		}
		if j == k-1 {
			break
		}
		if err := e.ev.ctx.Err(); err != nil {
			return nil, nil, err
		}
		rf, rr := plan.rho[j+1], plan.rho[k-j-1]
		for i := 0; i < n; i++ {
			beta[i] = plan.beta[j+1]
			if i >= nF {
				beta[i] = plan.beta[k-j-1]
			}
		}
		if err := mh(func(i int) {
			rho := rf
			if i >= nF {
				rho = rr
			}
			a := math.Sqrt(1 - rho*rho)
			for c := i * d; c < (i+1)*d; c++ {
				zp[c] = a*z[c] + rho*rng.NormFloat64()
			}
		}); err != nil {
			return nil, nil, err
		}
	}
	return wF, wR, nil
}

// logPhiSum is Σ log φ(z_j), the standard normal log density of z.
func logPhiSum(z []float64) float64 {
	var s float64
	for _, v := range z {
		s += v * v
	}
	return -0.5*s - 0.5*float64(len(z))*math.Log(2*math.Pi)
}

// wantAnneal says whether the direct passes call for the annealed bridge,
// and why (for the note in Result.Info). In automatic mode the draws
// must be few for the dimension (d²/(4n) of at least fewDrawsKL nats, n
// draws per fit) and the direct bridge unreliable: both Pareto k̂ above paretoKBridge in a pass (neither p/q
// at the proposal draws nor q/p at the posterior draws has a finite
// mean), and either its error bar above annealMinSD, which the annealed
// bridge's default particles improve on, or the two passes disagree by
// more than paretoKBridgeZ standard errors. Both k̂ above 1 alone happen
// on healthy estimates with an error far below what annealing gives (the
// correlated Gaussian at d = 500 with 2·10⁴ draws: k̂ 1.09 and 1.08,
// σ = 0.027). Draws that the consistency check says do not follow the
// log density are not annealed.
func (e *estimation) wantAnneal(passes ...bridgePass) (bool, string) {
	switch e.cfg.Anneal {
	case Off:
		return false, ""
	case On:
		return true, "requested (Settings.Anneal)"
	}
	// The path is for q and p far apart because the draws are few for
	// the dimension: a Gaussian fitted to n draws in d dimensions misses
	// p by about d²/(4n) nats. Poor overlap from other causes (heavy
	// tails, a shape the flow misses: the paper's Cauchy under NUTS at
	// a CI budget, k̂ above 1 both ways with 2000 draws per fit in 48
	// dimensions) asks for many rungs (4431 there) and gains little.
	d := e.s.Dim
	var n int
	for _, c := range e.s.Chains {
		n += len(c) / d
	}
	if float64(d)*float64(d)/(4*float64(max(n/2, 1))) < fewDrawsKL {
		return false, ""
	}
	z := math.NaN()
	if len(passes) == 2 {
		a, b := passes[0].est, passes[1].est
		z = crossFitZ(a.logZ, math.Sqrt(a.re2P+a.re2Q), b.logZ, math.Sqrt(b.re2P+b.re2Q))
	}
	for _, r := range passes {
		kq := paretoK(r.data.b, 1)
		reff := 1.0
		if !r.data.iid {
			reff = 1 / math.Max(r.tauP, 1)
		}
		kp := paretoK(r.data.a, reff)
		if !(kq > paretoKBridge && kp > paretoKBridge) {
			continue
		}
		// Draws that do not follow the log density (the consistency
		// check fails, or log p - log q at the posterior draws is
		// below ln Z on average, impossible for draws of p) leave the
		// reverse crossing without its premise: no path repairs them.
		var m float64
		for _, v := range r.data.a {
			m -= v
		}
		if m/float64(len(r.data.a)) < r.est.logZ ||
			tiltZ(r.data.a, r.data.b, r.data.logZ, r.data.logZErr, r.data.nchains, r.data.iid) > consistencyZ {
			return false, ""
		}
		sd := math.Sqrt(r.est.re2P + r.est.re2Q)
		head := fmt.Sprintf("the direct bridge's proposal and draws barely overlap (Pareto k-hat %.2f for p/q and %.2f for q/p, both above %.0f)",
			kq, kp, paretoKBridge)
		switch {
		case math.Abs(z) > paretoKBridgeZ:
			return true, head + fmt.Sprintf(" and its cross-fitting passes disagree by %.1f standard errors", math.Abs(z))
		case sd > annealMinSD:
			return true, head + fmt.Sprintf(" and its error bar is %.2f", sd)
		}
	}
	return false, ""
}

// annealMinSD is the direct pass's error bar above which a poor overlap
// calls for the annealed bridge, whose default particles give about 0.1
// per pass.
const annealMinSD = 0.15

// annealInfo is what the annealed bridge reports in Result.
type annealInfo struct {
	steps     int   // K, rungs per crossing
	particles int   // per direction and pass
	calls     int64 // log-density calls it spent
}

// annealPasses replaces the direct passes' estimates by annealed ones,
// each with its own proposal and posterior half (h for the first pass,
// h.swapped() for the second). It returns false, with a note, when the
// proposal has no latent space.
func (e *estimation) annealPasses(passes []*bridgePass, hs []halves, streams []uint64, why string) (bool, error) {
	var qs []LatentProposal
	sd0, sd1 := 0.0, 0.0
	for _, r := range passes {
		q, ok := r.q.(LatentProposal)
		if !ok {
			e.inform(CheckAnneal, "the annealed bridge was wanted (%s) but the proposal has no latent space (gbs.LatentProposal): the direct bridge's estimate stands", why)
			return false, nil
		}
		qs = append(qs, q)
		sd0 = math.Max(sd0, robustSD(r.data.b))
		na := make([]float64, len(r.data.a))
		for i, v := range r.data.a {
			na[i] = -v
		}
		sd1 = math.Max(sd1, robustSD(na))
	}
	if math.IsNaN(sd0) || math.IsNaN(sd1) {
		return false, nil
	}
	plan := newAnnealPlan(sd0, sd1)
	calls0 := e.ev.calls
	d := e.s.Dim
	nP := 0
	for i, r := range passes {
		h := hs[i]
		np := len(h.use) / d
		nR := min(annealParticles, np)
		xR := make([]float64, 0, nR*d)
		lpR := make([]float64, 0, nR)
		for j := 0; j < nR; j++ {
			idx := int((float64(j) + 0.5) * float64(np) / float64(nR))
			xR = append(xR, h.use[idx*d:(idx+1)*d]...)
			lpR = append(lpR, r.useLogP[idx])
		}
		rng := seed.New(e.cfg.Seed, streams[i])
		wF, wR, err := e.annealRun(qs[i], plan, annealParticles, xR, lpR, rng)
		if err != nil {
			return false, fmt.Errorf("%w (in the annealed bridge)", err)
		}
		// The reverse particles start at every (np/nR)-th posterior
		// draw: draws that far apart along a chain are about
		// independent unless the chains' tau is longer still.
		tf := 1.0
		if !r.data.iid {
			tf = math.Max(1, r.tauP*float64(nR)/float64(np))
		}
		in := &bridgeInput{logQoverP: wR, logPoverQ: wF, nchains: 1, iid: true, tauP: tf}
		est, err := solveBridge(in)
		if err != nil {
			return false, fmt.Errorf("gbs: annealed bridge: %w", err)
		}
		est.re2P *= tf
		est.tau = tf
		vF, vR := stat.Variance(wF, nil), stat.Variance(wR, nil)
		e.logf("annealed bridge, pass %d: K = %d, ln Z = %.6f ± %.4f (direct %.6f ± %.4f), Var W_F %.3g, W_R %.3g",
			i+1, plan.steps(), est.logZ, math.Sqrt(est.re2P+est.re2Q), r.est.logZ, math.Sqrt(r.est.re2P+r.est.re2Q), vF, vR)
		r.est = est
		r.trace = passTrace(in, wF, est)
		// The diagnostics read the works: Crooks' relation makes them
		// the log ratios of a bridge, so the overlap and consistency
		// checks hold for them as for the direct one.
		r.data.signA = r.data.a
		r.data.a, r.data.b = wR, wF
		r.data.nchains, r.data.iid = 1, true
		r.data.logZ, r.data.logZErr = est.logZ, math.Sqrt(est.re2P+est.re2Q)
		r.annealed = true
		nP += nR
	}
	e.anneal = annealInfo{steps: plan.steps(), particles: annealParticles, calls: e.ev.calls - calls0}
	msg := fmt.Sprintf("annealed bridge used: %s; ln Z comes from %d rungs of the geometric path q^(1-β) p^β crossed by %d particles "+
		"from q and %d from the posterior draws per pass, %d log-density calls", why, plan.steps(), annealParticles,
		min(annealParticles, nP/len(passes)), e.anneal.calls)
	if plan.capped {
		msg += fmt.Sprintf(" (rungs capped at %d: the error bar is wider than aimed at)", annealMaxSteps)
	}
	e.inform(CheckAnneal, "%s", msg)
	return true, nil
}

// maybeAnneal runs the annealed bridge on the direct passes when the
// settings or their diagnostics call for it (passes[i] used halves hs[i]).
func (e *estimation) maybeAnneal(passes []*bridgePass, hs []halves) error {
	var direct []bridgePass
	for _, r := range passes {
		direct = append(direct, *r)
	}
	want, why := e.wantAnneal(direct...)
	if !want {
		return nil
	}
	streams := []uint64{streamAnneal, streamAnnealSwapped}
	_, err := e.annealPasses(passes, hs, streams[:len(passes)], why)
	return err
}
