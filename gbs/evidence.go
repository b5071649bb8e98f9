package gbs

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/internal/mcmc"
	"github.com/gbs-evidence/gbs/internal/seed"
)

// Random streams of Settings.Seed (internal/seed), one per purpose, so
// that changing one stage (say, n_q) does not change the draws of
// another. The second pass of cross-fitting has streams of its own.
const (
	streamFit = iota + 1
	streamDraws
	streamFitSwapped
	streamDrawsSwapped
	streamSpotCheck // the diagnostics' spot-check of stored log p
	streamCoverage  // the coverage check's widened draws and chains
	streamCoverageSwapped
	streamAnneal // the annealed bridge's particles and moves
	streamAnnealSwapped
	streamCensus   // the mode census's points over the box
	streamSymmetry // the symmetry check's draws and the subset of relabelings
	streamRelabel  // the posterior draws' random relabelings
)

// Evidence estimates ln Z = ln ∫ p(x) dx of the unnormalized density whose
// log is logp, from draws s of p. set may be nil for the defaults.
//
// With the default method (Bridge) it splits the draws in two halves, fits
// the proposal q on the first, draws n_q points from q, evaluates log p on
// them and solves the optimal bridge sampling equation against the second
// half; then it does the same with the halves' roles exchanged and reports
// the mean of the two ln Z (Settings.CrossFit = Off turns this off). The error
// combines the posterior and proposal terms, the posterior one inflated by
// the integrated autocorrelation time of the chains.
//
// Cancelling ctx stops the computation between log-density batches and
// returns ctx.Err().
func Evidence(ctx context.Context, logp LogDensityFunc, s *Samples, set *Settings) (*Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if logp == nil {
		return nil, fmt.Errorf("gbs: nil log-density function")
	}
	if s == nil {
		return nil, fmt.Errorf("gbs: nil samples")
	}
	e, err := newEstimation(ctx, logp, s, set)
	if err != nil {
		return nil, err
	}
	e.startEarlyChecks()
	defer e.waitEarly()
	// Stored log p that belongs to other draws, or to another density,
	// moves ln Z without any sign in the error bar: check a few first.
	if err := e.inStage("evidence spot-check", e.spotCheck); err != nil {
		return nil, err
	}
	// Label switching: a posterior invariant under relabeling blocks of
	// coordinates, whose draws hold one labeling (symmetry.go).
	symCalls := e.ev.calls
	err = e.inStage("evidence symmetry", e.detectSymmetry)
	e.diag.SymmetryCalls = int(e.ev.calls - symCalls)
	if err != nil {
		return nil, err
	}
	if err := e.estimate(); err != nil {
		return nil, err
	}
	if err := e.inStage("evidence census", e.runCensus); err != nil {
		return nil, err
	}
	e.inStage("evidence checks", func() error { e.diagnose(); return nil })
	e.res.NCall = e.ev.calls
	e.res.AnnealSteps, e.res.AnnealCalls = e.anneal.steps, e.anneal.calls
	// For an ensemble's walkers emcee's rule (CheckEnsembleWalkers)
	// replaces the passes' rule on the summands' τ, which is lowest on the
	// runs that are off and highest on runs whose error bar is large.
	if e.s.Kind == EnsembleWalkers {
		e.findings = slices.DeleteFunc(e.findings, func(f Finding) bool { return f.Check == CheckShortChains })
	}
	e.res.Findings = uniqueFindings(e.findings)
	sortFindings(e.res.Findings)
	return e.res, nil
}

// newEstimation checks the arguments and sets up an Evidence call.
func newEstimation(ctx context.Context, logp LogDensityFunc, s *Samples, set *Settings) (*estimation, error) {
	cfg, err := set.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	if err := checkBounds(cfg.Lower, cfg.Upper, s); err != nil {
		return nil, err
	}
	if err := checkCensusBox(&cfg); err != nil {
		return nil, err
	}
	if cfg.Names != nil && len(cfg.Names) != s.Dim {
		return nil, fmt.Errorf("gbs: %d coordinate names for d = %d", len(cfg.Names), s.Dim)
	}
	for i, g := range cfg.SymmetryGroups {
		if err := g.check(s.Dim); err != nil {
			return nil, fmt.Errorf("%w (Settings.SymmetryGroups[%d])", err, i)
		}
	}
	if err := checkMemory(s, &cfg); err != nil {
		return nil, err
	}
	e := &estimation{
		s:    s,
		cfg:  cfg,
		ev:   &evaluator{ctx: ctx, f: logp, d: s.Dim, batch: cfg.BatchSize, concurrent: cfg.Concurrent},
		res:  &Result{Method: cfg.Method, Tau: 1},
		diag: newDiagnostics(),
	}
	if e.cfg.Proposal == nil {
		e.cfg.Proposal = FlowProposal(&flow.Settings{Lower: cfg.Lower, Upper: cfg.Upper})
		e.ownProposal = true
	}
	return e, nil
}

// estimate runs the estimator the settings select.
func (e *estimation) estimate() error {
	switch e.cfg.Method {
	case Bridge:
		return e.bridge(false)
	case Warp3:
		return e.bridge(true)
	case IS:
		return e.importance()
	case HM:
		return e.harmonic()
	}
	return fmt.Errorf("gbs: unknown method %d", int(e.cfg.Method))
}

// estimation is the state of one Evidence call.
type estimation struct {
	s   *Samples
	cfg Settings
	ev  *evaluator
	res *Result
	// diag collects the diagnostics; passes are the estimation passes'
	// log-density ratios for them; drawsLogP is log p at every draw, chain
	// after chain, when the cross-fitted bridge evaluated it (nil
	// otherwise).
	diag      Diagnostics
	passes    []passData
	drawsLogP []float64
	// covPools are the coverage check's proposals, one per bridge pass.
	covPools []*coveragePool
	// findings are what the checks found, in the order found; cause is
	// the first mistake a specific check found (see explain).
	findings []Finding
	cause    string
	// anneal describes the annealed bridge when it ran (steps 0: not).
	anneal annealInfo
	// ownProposal: the proposal fitter is the library's (safe for
	// concurrent use), so the cross-fitting passes may run at once.
	ownProposal bool
	// censusQs are the proposals the estimate used, which the mode
	// census tests its maxima against.
	censusQs []Proposal
	// sym is the symmetry of p the estimate corrects for (nil: none).
	sym *symmetry
	// centre is the coverage check's centre of the draws, shared by the
	// cross-fitting passes (deviationCentre; nil outside bothPasses).
	centre *sharedCentre
	// early are the checks that run beside the passes (early.go).
	early *earlyChecks
}

func (e *estimation) logf(format string, args ...any) {
	if e.cfg.Log != nil {
		e.cfg.Log(fmt.Sprintf(format, args...))
	}
}

// found records findings.
func (e *estimation) found(fs ...Finding) {
	e.findings = append(e.findings, fs...)
}

// inform records information about no single quantity.
func (e *estimation) inform(c Check, format string, args ...any) {
	e.found(note(c, format, args...))
}

// name is how messages name quantity k: a coordinate (by
// Settings.Names when given) or log p (k = -1).
func (e *estimation) name(k int) string {
	return quantityName(e.cfg.Names, k)
}

// fitProposal fits q on the row-major points x with the random stream
// stream.
func (e *estimation) fitProposal(x []float64, stream uint64) (Proposal, error) {
	q, fs, err := e.fitProposalFindings(x, stream)
	e.found(fs...)
	return q, err
}

// fitProposalFindings is fitProposal returning the fit's warnings as
// findings.
func (e *estimation) fitProposalFindings(x []float64, stream uint64) (Proposal, []Finding, error) {
	q, warns, err := e.cfg.Proposal(x, e.s.Dim, nil, seed.Derive(e.cfg.Seed, stream))
	if err != nil {
		return nil, nil, fmt.Errorf("gbs: fitting the proposal: %w", err)
	}
	if q.Dim() != e.s.Dim {
		return nil, nil, fmt.Errorf("gbs: the proposal has dimension %d, the samples %d", q.Dim(), e.s.Dim)
	}
	fs := make([]Finding, len(warns))
	for i, w := range warns {
		fs[i] = finding(CheckProposalFit, 0, WhereNone, math.NaN(), math.NaN(), "%s", w)
	}
	return e.sym.wrap(q), fs, nil
}

// target evaluates the log density that the estimator compares with q:
// p itself, or for warp-III p symmetrized about centre,
// p~(x) = [p(x) + p(2 centre - x)] / 2, which has the same integral.
type target struct {
	ev     *evaluator
	centre []float64 // nil: no symmetrization
}

// logp writes the target's log density at x into dst; known, if not nil,
// holds log p at x already.
func (t *target) logp(dst, x, known []float64) error {
	if known != nil {
		copy(dst, known)
	} else if err := t.ev.eval(dst, x); err != nil {
		return err
	}
	if t.centre == nil {
		return nil
	}
	d := len(t.centre)
	refl := make([]float64, len(x))
	for i := range refl {
		refl[i] = 2*t.centre[i%d] - x[i]
	}
	lr := make([]float64, len(dst))
	if err := t.ev.eval(lr, refl); err != nil {
		return err
	}
	for i, v := range lr {
		dst[i] = logAddExp(dst[i], v) - math.Ln2
	}
	return nil
}

func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// proposalDraws holds draws from q with log p - log q at each.
type proposalDraws struct {
	q    Proposal
	rng  *rand.Rand
	tgt  *target
	logw []float64
	// observe, if not nil, sees every batch of draws with log q and log p,
	// and the latent points they were mapped from when q has them (nil
	// otherwise).
	observe func(y, lq, lp, z []float64)
}

// latentSampler is a proposal that can return the latent points of its
// draws (flow.Flow).
type latentSampler interface {
	SampleLatent(dst, logq, z []float64, rng *rand.Rand)
}

// extend draws until there are n draws, reusing those already made.
func (pd *proposalDraws) extend(n, d int) error {
	k := n - len(pd.logw)
	if k <= 0 {
		return nil
	}
	y := make([]float64, k*d)
	lq := make([]float64, k)
	var z []float64
	if ls, ok := pd.q.(latentSampler); ok && pd.observe != nil {
		z = make([]float64, k*d)
		ls.SampleLatent(y, lq, z, pd.rng)
	} else {
		pd.q.Sample(y, lq, pd.rng)
	}
	for i, v := range lq {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("gbs: the proposal returned log q = %v at its own draw %v", v, y[i*d:(i+1)*d])
		}
	}
	lp := make([]float64, k)
	if err := pd.tgt.logp(lp, y, nil); err != nil {
		return err
	}
	if pd.observe != nil {
		pd.observe(y, lq, lp, z)
	}
	for i := range lp {
		lp[i] -= lq[i]
	}
	pd.logw = append(pd.logw, lp...)
	return nil
}

// checkDrawsLogP checks log p at the draws of the estimator's half,
// stored chain after chain, m draws each.
func checkDrawsLogP(lp []float64, m int) error {
	for i, v := range lp {
		if err := checkSampleLogP(v, i/m, i%m); err != nil {
			return fmt.Errorf("%w (counting the chains of the estimator's half)", err)
		}
	}
	return nil
}

// bridge runs optimal bridge sampling; warp selects warp-III (Gaussian
// proposal, target symmetrized about the fitted mean). Bridge cross-fits
// unless CrossFit is Off: a second pass fits q on the other half and
// estimates on the first, and ln Z is the mean of the two passes. The
// passes' proposal terms are independent; their posterior terms share a
// part that comes from fitting q (crossfit.go), which the mean's error
// counts: where q fits p up to its fitting noise the posterior term does
// not shrink by cross-fitting, where q differs from p it halves.
//
// The passes return their results; only bridge writes them into the
// estimation (e.passes, e.drawsLogP and the Result).
func (e *estimation) bridge(warp bool) error {
	h, err := splitHalves(e.s)
	if err != nil {
		return err
	}
	h = e.sym.relabelHalves(h, seed.New(e.cfg.Seed, streamRelabel))
	if warp || e.cfg.CrossFit == Off {
		var r bridgePass
		err := e.inStage("evidence pass 1", func() (err error) {
			r, err = e.bridgePass(h, warp, e.cfg.NQ, streamFit, streamDraws, 1)
			return err
		})
		if err != nil {
			return err
		}
		if !warp {
			if err := e.inStage("evidence anneal", func() error { return e.maybeAnneal([]*bridgePass{&r}, []halves{h}) }); err != nil {
				return err
			}
		}
		e.keepPass(r)
		e.setBridge(r.est, r.np, r.nq, r.trace)
		return nil
	}
	// The passes share a given NQ and the evaluation budget FEva.
	if e.cfg.NQ == 1 {
		return fmt.Errorf("gbs: NQ = 1 cannot be shared by the two cross-fitting passes; use NQ >= 2 or CrossFit = Off")
	}
	var a, b bridgePass
	errA, errB := e.bothPasses(func(e *estimation) error {
		return e.inStage("evidence pass 1", func() (err error) {
			a, err = e.bridgePass(h, false, e.cfg.NQ/2, streamFit, streamDraws, 0.5)
			return err
		})
	}, func(e *estimation) error {
		return e.inStage("evidence pass 2", func() (err error) {
			b, err = e.bridgePass(h.swapped(), false, e.cfg.NQ-e.cfg.NQ/2, streamFitSwapped, streamDrawsSwapped, 0.5)
			return err
		})
	})
	if errA != nil {
		return errA
	}
	if err := errB; err != nil {
		e.keepPass(a)
		return fmt.Errorf("%w (in the cross-fitting pass, q fitted on the second half)", err)
	}
	if err := e.inStage("evidence anneal", func() error { return e.maybeAnneal([]*bridgePass{&a, &b}, []halves{h, h.swapped()}) }); err != nil {
		return err
	}
	e.keepPass(a)
	e.keepPass(b)
	// Pass a estimated on the second half of the draws (h.use), pass b on
	// the first (h.fit): together, in that order, log p at every draw,
	// chain after chain, as splitHalves cut them.
	e.drawsLogP = make([]float64, 0, len(a.useLogP)+len(b.useLogP))
	e.drawsLogP = append(e.drawsLogP, b.useLogP...)
	e.drawsLogP = append(e.drawsLogP, a.useLogP...)
	cov := 0.0
	if !a.annealed {
		// The annealed passes' errors come from their own particles;
		// what fitting q shares between the passes only sets their
		// variance.
		cov = crossFitCov(a, b, h, e.s.Kind == IndependentDraws)
	}
	mean := crossFitMean(a.est, b.est, cov)
	e.logf("cross-fitting: posterior terms RE2 %.4g and %.4g, covariance %.4g (correlation %.2f)",
		a.est.re2P, b.est.re2P, cov, cov/math.Sqrt(a.est.re2P*b.est.re2P))
	// An ensemble's halves move together (ensembleerror.go): the mean's
	// posterior term from the whole ensemble's series, where larger.
	extra := 0.0
	if e.s.Kind == EnsembleWalkers && len(e.s.Chains) >= 2 && !a.annealed {
		term, tauU, batch := ensembleTerm(a, b)
		own := (a.est.re2P + b.est.re2P) / 4
		e.logf("ensemble: posterior term of the passes' mean %.4g (tau %.1f, batch means %.4g), passes' own %.4g",
			term, tauU, batch, own)
		if term > own {
			extra = term - own
			mean.re2P += extra
		}
	}
	e.setBridge(mean, a.np+b.np, a.nq+b.nq, crossFitTrace(a.trace, b.trace, cov, extra))
	return nil
}

// keepPass records a pass's findings and its data for the diagnostics.
func (e *estimation) keepPass(r bridgePass) {
	e.found(r.findings...)
	e.keepProposal(r.q)
	e.passes = append(e.passes, r.data)
	if r.cov != nil {
		if r.data.signA != nil {
			r.cov.setBridge(r.data.signA, r.data.logZ, r.nq)
		}
		e.covPools = append(e.covPools, r.cov)
	}
}

// crossFitMean is the mean of the two passes' estimates; cov is the
// covariance of their posterior terms (crossfit.go), their proposal terms
// are independent.
func crossFitMean(a, b bridgeEstimate, cov float64) bridgeEstimate {
	return bridgeEstimate{
		logZ: (a.logZ + b.logZ) / 2,
		re2P: (a.re2P + b.re2P + 2*cov) / 4,
		re2Q: (a.re2Q + b.re2Q) / 4,
		tau:  (a.tau + b.tau) / 2,
	}
}

// crossFitTrace adds the passes' traces point by point (both use the same
// traceDivisors), with the covariance cov of their posterior terms and
// the squared relative error extra that the mean's posterior term adds
// (an ensemble's, ensembleTerm) (the posterior draws are the same at
// every point).
func crossFitTrace(a, b []TracePoint, cov, extra float64) []TracePoint {
	trace := make([]TracePoint, len(a))
	for i, p := range a {
		o := b[i]
		trace[i] = TracePoint{NQ: p.NQ + o.NQ, LogZ: (p.LogZ + o.LogZ) / 2,
			LogZErr: math.Sqrt(p.LogZErr*p.LogZErr+o.LogZErr*o.LogZErr+2*cov+4*extra) / 2}
	}
	return trace
}

// uniqueFindings returns fs without repeats (the passes may find alike),
// in the order of first occurrence; of two short-chain findings about the
// same quantity it keeps the one with the longer τ.
func uniqueFindings(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		i := slices.IndexFunc(out, func(g Finding) bool {
			return g.Check == f.Check && g.Kind == f.Kind && g.Where == f.Where &&
				(g.Message == f.Message || f.Check == CheckShortChains)
		})
		switch {
		case i < 0:
			out = append(out, f)
		case f.Value > out[i].Value:
			out[i] = f
		}
	}
	return out
}

func (e *estimation) setBridge(est bridgeEstimate, np, nq int, trace []TracePoint) {
	e.res.LogZ, e.res.LogZErr = est.logZ, math.Sqrt(est.re2P+est.re2Q)
	e.res.NP, e.res.NQ = np, nq
	e.res.RE2P, e.res.RE2Q, e.res.Tau = est.re2P, est.re2Q, est.tau
	e.res.Trace = trace
}

// bridgePass is one bridge estimate: q fitted on h.fit, the estimator on
// h.use.
type bridgePass struct {
	est    bridgeEstimate
	np, nq int
	trace  []TracePoint
	// data is what the diagnostics read; useLogP the target's log p at
	// h.use, chain after chain; findings the pass's own.
	data     passData
	useLogP  []float64
	findings []Finding
	// q is the fitted proposal, tauP the p-draws' autocorrelation time
	// the bridge weighed them by.
	q    Proposal
	tauP float64
	// cov is the pass's share of the coverage check (nil: off).
	cov *coveragePool
	// annealed: est, trace and data are the annealed bridge's.
	annealed bool
}

// traceDivisors give the prefixes n_q/k of the proposal draws at which
// Result.Trace reports ln Z before the final estimate; the same for both
// cross-fitting passes, so that their traces add up point by point.
var traceDivisors = []int{8, 4, 2}

// bridgePass fits q on h.fit (random stream fitStream) and estimates ln Z
// against h.use with nq draws from q (stream drawStream; 0: the adaptive
// rule, which may spend the share costShare of the FEva budget). It
// writes nothing into e but the log.
func (e *estimation) bridgePass(h halves, warp bool, nq int, fitStream, drawStream uint64, costShare float64) (bridgePass, error) {
	var r bridgePass
	q, tgt, err := e.passProposal(h, warp, fitStream, &r.findings)
	if err != nil {
		return r, err
	}
	r.np = len(h.use) / e.s.Dim
	if e.centre != nil && e.cfg.CoverageCheck != Off {
		// The coverage check's centre needs no density call: found
		// before this pass's first, it overlaps the other pass's.
		e.deviationCentre(e.s.Chains)
	}
	a, lp, err := posteriorRatios(q, tgt, h)
	if err != nil {
		return r, err
	}
	r.useLogP, r.q = lp, q
	tauP := e.posteriorTau(a, h.nchains)
	r.tauP = tauP
	pd := &proposalDraws{q: q, rng: seed.New(e.cfg.Seed, drawStream), tgt: tgt}
	if r.cov = e.newCoveragePool(q, h, lp, tauP, warp); r.cov != nil {
		pd.observe = r.cov.observe
	}
	in := &bridgeInput{logQoverP: a, nchains: h.nchains, iid: e.s.Kind == IndependentDraws, tauP: tauP}
	est, err := e.solvePass(pd, in, r.np, nq, costShare, &r.findings)
	if err != nil {
		return r, err
	}
	r.est, r.nq = est, len(pd.logw)
	if err := e.drawWide(r.cov, drawStream); err != nil {
		return r, err
	}
	r.trace = passTrace(in, pd.logw, est)
	if est.shortChain {
		r.findings = append(r.findings, shortChains(est.tau, r.np/h.nchains))
	}
	r.data = passData{a: a, b: pd.logw, logp: lp, signA: a, logZ: est.logZ, logZErr: math.Sqrt(est.re2P + est.re2Q),
		nchains: h.nchains, iid: e.s.Kind == IndependentDraws}
	return r, nil
}

// passProposal fits a pass's proposal on h.fit and returns it with the
// target the pass compares it with; the fit's findings go to fs.
func (e *estimation) passProposal(h halves, warp bool, fitStream uint64, fs *[]Finding) (Proposal, *target, error) {
	tgt := &target{ev: e.ev}
	var q Proposal
	if warp {
		g, _, err := FitGaussian(h.fit, e.s.Dim, nil, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("gbs: fitting the warp-III Gaussian: %w", err)
		}
		q, tgt.centre = g, g.(*Gaussian).Mean()
	} else {
		var w []Finding
		var err error
		if q, w, err = e.fitProposalFindings(h.fitQ(), fitStream); err != nil {
			return nil, nil, err
		}
		*fs = append(*fs, w...)
	}
	e.logf("proposal fitted on %d draws", len(h.fit)/e.s.Dim)
	return q, tgt, nil
}

// posteriorRatios returns log q - log p at the draws h.use, and the
// target's log p there (evaluated, or copied from h.useLogP).
func posteriorRatios(q Proposal, tgt *target, h halves) (a, logp []float64, err error) {
	np := len(h.use) / q.Dim()
	// log q first: with the passes at once, the second pass's log
	// density waits for the first pass (bothPasses), its log q need not.
	a = make([]float64, np)
	q.LogProb(a, h.use)
	logp = make([]float64, np)
	if err := tgt.logp(logp, h.use, h.useLogP); err != nil {
		return nil, nil, err
	}
	if err := checkDrawsLogP(logp, np/h.nchains); err != nil {
		return nil, nil, err
	}
	for i := range a {
		if math.IsNaN(a[i]) || math.IsInf(a[i], 1) {
			return nil, nil, fmt.Errorf("gbs: the proposal returned log q = %v at a posterior draw", a[i])
		}
		a[i] -= logp[i]
	}
	return a, logp, nil
}

// posteriorTau is the integrated autocorrelation time of log q/p at the
// posterior draws. Autocorrelated p-draws carry the information of
// n_p/tau independent ones: the bridge weighs them so, and the adaptive
// rule starts from that many proposal draws rather than n_p. tau is that
// of the quantity the bridge averages, known before any proposal draw;
// below 1 (antithetic chains) it is taken as 1.
func (e *estimation) posteriorTau(a []float64, nchains int) float64 {
	if e.s.Kind != IndependentDraws {
		if t, _ := integratedTime(a, nchains); t > 1 {
			return t
		}
	}
	return 1
}

// solvePass draws from q (nq draws; 0: the adaptive rule from a first
// batch) and solves the bridge equation with in's posterior side; in ends
// with the proposal side used. The adaptive rule's notes go to fs.
func (e *estimation) solvePass(pd *proposalDraws, in *bridgeInput, np, nq int, costShare float64, fs *[]Finding) (bridgeEstimate, error) {
	d := e.s.Dim
	nq0 := nq
	if nq0 == 0 {
		nq0 = startNQ(np, in.tauP)
	}
	if err := pd.extend(nq0, d); err != nil {
		return bridgeEstimate{}, err
	}
	in.logPoverQ = pd.logw
	est, err := solveBridge(in)
	if err != nil {
		return est, fmt.Errorf("gbs: %w", err)
	}
	e.logf("n_q = %d: ln Z = %.6f, RE2 p = %.3g, q = %.3g", nq0, est.logZ, est.re2P, est.re2Q)
	if nq != 0 {
		return est, nil
	}
	n, capped := e.adaptiveNQ(nq0, est, np, costShare)
	if capped {
		*fs = append(*fs, note(CheckNQCapped, "n_q capped at %d by the memory available; the error bar includes the proposal's larger share", n))
	}
	if n <= nq0 {
		return est, nil
	}
	if err := pd.extend(n, d); err != nil {
		return est, err
	}
	in.logPoverQ = pd.logw
	if est, err = solveBridge(in); err != nil {
		return est, fmt.Errorf("gbs: %w", err)
	}
	e.logf("n_q = %d: ln Z = %.6f, RE2 p = %.3g, q = %.3g", n, est.logZ, est.re2P, est.re2Q)
	return est, nil
}

// passTrace is ln Z on the prefixes traceDivisors give of the proposal
// draws logw, then the final estimate est.
func passTrace(in *bridgeInput, logw []float64, est bridgeEstimate) []TracePoint {
	nq := len(logw)
	var trace []TracePoint
	for _, k := range traceDivisors {
		pre := *in
		pre.logPoverQ = logw[:max(nq/k, 1)]
		p, err := solveBridge(&pre)
		if err != nil {
			p = bridgeEstimate{logZ: math.NaN(), re2P: math.NaN()}
		}
		trace = append(trace, TracePoint{NQ: len(pre.logPoverQ), LogZ: p.logZ, LogZErr: math.Sqrt(p.re2P + p.re2Q)})
	}
	return append(trace, TracePoint{NQ: nq, LogZ: est.logZ, LogZErr: math.Sqrt(est.re2P + est.re2Q)})
}

// minStartNQ is the least number of proposal draws the adaptive rule
// starts from (unless n_p is smaller): the rule grows n_q from the
// variance of the q-side term measured on them, which a thousand draws
// give to a few per cent.
const minStartNQ = 1000

// startNQ is the adaptive rule's first n_q: the effective number n_p/tau
// of the p-draws, at least minStartNQ and at most n_p.
func startNQ(np int, tau float64) int {
	n := int(math.Ceil(float64(np) / tau))
	return min(np, max(n, minStartNQ))
}

// shortChains is the finding for chains of m draws too short for their
// autocorrelation time tau.
func shortChains(tau float64, m int) Finding {
	return finding(CheckShortChains, 0, WhereNone, tau, float64(m)/shortChainFactor,
		"chains are too short for a reliable autocorrelation time (tau = %.3g, %d draws per chain): "+
			"tau, and so the error bar of ln Z, is likely underestimated (from chains a few tau long the estimate "+
			"is biased low, and the walkers of an ensemble sampler move together); run chains of at least 50 tau "+
			"(%.0f draws per chain here) after burn-in", tau, m, math.Ceil(shortChainFactor*tau))
}

// adaptiveNQ is the rule of Jia & Seljak (2019, appendix): draw enough from
// q that its term is the fraction FErr of the squared error, but spend at
// most the fraction FEva of all log-density evaluations on q.
// capped says that the memory bound set it.
func (e *estimation) adaptiveNQ(nq0 int, est bridgeEstimate, np int, costShare float64) (n int, capped bool) {
	ferr, feva := e.cfg.FErr, e.cfg.FEva
	ncallP := float64(e.s.NCall)
	if ncallP == 0 {
		ncallP = drawCostUnknown * float64(len(e.s.Chains)*e.s.Draws())
	}
	byError := float64(nq0) * (1 - ferr) * est.re2Q / (ferr * est.re2P)
	if est.re2P == 0 {
		byError = math.Inf(1)
	}
	byCost := costShare * feva / (1 - feva) * ncallP
	nf := math.Max(float64(nq0), math.Min(byError, byCost))
	maxNQ := math.Max(float64(nq0), float64(min(maxProposalValues/e.s.Dim, memoryNQ(e.s.Dim))))
	if nf > maxNQ {
		return int(maxNQ), true
	}
	return int(nf), false
}

// maxProposalValues bounds the memory held by the proposal draws of one
// batch of the adaptive rule (2^27 float64 values, 1 GiB).
const maxProposalValues = 1 << 27

// importance runs importance sampling with q fitted on all the draws.
func (e *estimation) importance() error {
	d := e.s.Dim
	x, _ := allDraws(e.s)
	q, err := e.fitProposal(x, streamFit)
	if err != nil {
		return err
	}
	e.keepProposal(q)
	nq := e.cfg.NQ
	if nq == 0 {
		nq = len(x) / d
	}
	pd := &proposalDraws{q: q, rng: seed.New(e.cfg.Seed, streamDraws), tgt: &target{ev: e.ev}}
	if err := pd.extend(nq, d); err != nil {
		return err
	}
	for _, k := range []int{nq / 4, nq / 2, nq} {
		if k >= 2 {
			lz, re2, err := meanWeight(pd.logw[:k], 1)
			if err != nil && k == nq {
				return err
			}
			if err == nil {
				e.res.Trace = append(e.res.Trace, TracePoint{NQ: k, LogZ: lz, LogZErr: math.Sqrt(re2)})
			}
		}
	}
	last := e.res.Trace[len(e.res.Trace)-1]
	e.res.LogZ, e.res.LogZErr = last.LogZ, last.LogZErr
	e.res.RE2Q = last.LogZErr * last.LogZErr
	e.res.NP, e.res.NQ = 0, nq
	e.passes = append(e.passes, passData{b: pd.logw, logZ: last.LogZ, logZErr: last.LogZErr, iid: true})
	return nil
}

// harmonic runs reciprocal importance sampling: 1/Z = E_p[q/p], with q
// fitted on the other half of the draws.
func (e *estimation) harmonic() error {
	d := e.s.Dim
	h, err := splitHalves(e.s)
	if err != nil {
		return err
	}
	h = e.sym.relabelHalves(h, seed.New(e.cfg.Seed, streamRelabel))
	q, err := e.fitProposal(h.fitQ(), streamFit)
	if err != nil {
		return err
	}
	e.keepProposal(q)
	np := len(h.use) / d
	a := make([]float64, np)
	if h.useLogP != nil {
		copy(a, h.useLogP)
	} else if err := e.ev.eval(a, h.use); err != nil {
		return err
	}
	if err := checkDrawsLogP(a, np/h.nchains); err != nil {
		return err
	}
	lq := make([]float64, np)
	q.LogProb(lq, h.use)
	for i := range a {
		a[i] = lq[i] - a[i]
	}
	tau := 1.0
	if e.s.Kind != IndependentDraws {
		var short bool
		if tau, short = weightTime(a, h.nchains); short {
			e.found(shortChains(tau, np/h.nchains))
		}
	}
	lz, re2, err := meanWeight(a, tau)
	if err != nil {
		return err
	}
	e.res.LogZ, e.res.LogZErr = -lz, math.Sqrt(re2)
	e.res.RE2P, e.res.Tau, e.res.NP = re2, tau, np
	e.passes = append(e.passes, passData{a: a, logZ: e.res.LogZ, logZErr: e.res.LogZErr, nchains: h.nchains, iid: e.s.Kind == IndependentDraws})
	return nil
}

// meanWeight returns log mean(exp(logw)) and the squared relative error
// tau Var(w) / (n mean(w)^2) of the mean.
func meanWeight(logw []float64, tau float64) (logMean, re2 float64, err error) {
	m := maxOf(logw)
	if math.IsInf(m, -1) {
		return 0, 0, fmt.Errorf("gbs: %w", errNoOverlap)
	}
	w := make([]float64, len(logw))
	for i, v := range logw {
		w[i] = math.Exp(v - m)
	}
	mean, v := mcmc.MeanVar(w)
	return m + math.Log(mean), tau * v / (float64(len(w)) * mean * mean), nil
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}
