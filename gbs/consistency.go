package gbs

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// Consistency of the draws with the log density. Whatever q is, if the
// draws x come from p/Z and t = log p - log q, the distribution of t at the
// posterior draws is that at the proposal draws tilted by e^(t - ln Z):
//
//	E_p[g(t)] = E_q[e^(t - ln Z) g(t)]  for every g.
//
// Bridge sampling solves this identity for ln Z with one bounded g; other
// bounded g must then hold too, within their errors. Two such checks with
// bounded terms on both sides, at the estimated l = ln Z:
//
//	P_p(t < l) = E_q[e^(t-l) 1{t < l}]   and   P_q(t > l) = E_p[e^(l-t) 1{t > l}].
//
// Draws of another density than the one passed (a shifted or rescaled
// log density, a missing prior or Jacobian) break the identity: the
// posterior and proposal draws then give t the same distribution, or one
// untilted by e^t, whatever q is.

// consistencyZ is the |z| above which a check fails: 4 standard errors
// leave about one false alarm in 16000 checks on correct input.
const consistencyZ = 4

// hmTrim is the share of the posterior draws, those of lowest
// log p - log q, that the reciprocal importance-sampling check leaves to
// the proposal draws (hmZ).
const hmTrim = 0.01

// tiltZ returns the larger |z| of the two tilted-indicator checks for the
// pass with a = log q - log p at the p-draws (nchains chains, tau their
// autocorrelation time; 1 when independent), b = log p - log q at the
// q-draws, and the bridge estimate l with standard error sl. NaN when a
// side has too few draws.
func tiltZ(a, b []float64, l, sl float64, nchains int, iid bool) float64 {
	np, nq := len(a), len(b)
	if np < 10 || nq < 10 {
		return math.NaN()
	}
	// Check 1: indicator 1{t < l} at the p-draws against e^(t-l) 1{t < l}
	// at the q-draws.
	ip := make([]float64, np)
	for i, v := range a {
		if -v < l {
			ip[i] = 1
		}
	}
	wq := make([]float64, nq)
	for j, t := range b {
		if t < l {
			wq[j] = math.Exp(t - l)
		}
	}
	z1 := tiltCheckZ(ip, wq, sl, nchains, iid, true)
	// Check 2: indicator 1{t > l} at the q-draws against e^(l-t) 1{t > l}
	// at the p-draws.
	iq := make([]float64, nq)
	for j, t := range b {
		if t > l {
			iq[j] = 1
		}
	}
	wp := make([]float64, np)
	for i, v := range a {
		if t := -v; t > l {
			wp[i] = math.Exp(l - t)
		}
	}
	z2 := tiltCheckZ(wp, iq, sl, nchains, iid, false)
	return math.Max(math.Abs(z1), math.Abs(z2))
}

// tiltCheckZ is the z-score of mean(pSide) - mean(qSide), where pSide are
// values at the autocorrelated posterior draws and qSide at the independent
// proposal draws. The side with the factor e^(±(t-l)) moves with l at
// rate ∓its mean, so the error sl of l adds that mean times sl; tiltedQ
// says which side carries it.
func tiltCheckZ(pSide, qSide []float64, sl float64, nchains int, iid, tiltedQ bool) float64 {
	mp, vp := mcmc.MeanVar(pSide)
	mq, vq := mcmc.MeanVar(qSide)
	tau := 1.0
	if !iid && vp > 0 {
		tau, _ = integratedTime(pSide, nchains)
	}
	tilted := mp
	if tiltedQ {
		tilted = mq
	}
	v := tau*vp/float64(len(pSide)) + vq/float64(len(qSide)) + tilted*tilted*sl*sl
	d := mp - mq
	if v == 0 {
		if d == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return d / math.Sqrt(v)
}

// crossFitZ is the difference of the two cross-fitting passes' ln Z in
// units of its standard error taken as if the passes were independent.
// The part of their posterior errors that both owe to fitting q
// (crossfit.go) cancels in the difference, so this overstates the
// difference's error where that part is large: the check is conservative
// there (it may miss a disagreement, it does not raise false alarms).
func crossFitZ(la, sa, lb, sb float64) float64 {
	return (la - lb) / math.Hypot(sa, sb)
}

// isZ compares the importance-sampling estimate log mean(e^b) from the
// same proposal draws with the bridge estimate l ± sl: both estimate ln Z,
// so they must agree within their errors. Meaningful only when the ratios
// have a finite variance (Pareto k̂ of p/q below the threshold).
func isZ(b []float64, l, sl float64) float64 {
	lz, re2, err := meanWeight(b, 1)
	if err != nil {
		return math.NaN()
	}
	return (lz - l) / math.Sqrt(re2+sl*sl)
}

// hmZ compares the reciprocal importance-sampling estimate of ln Z at the
// posterior draws (a = log q - log p there) with the bridge estimate
// l ± sl.
//
// A mean of q/p over draws of p weighs only the region the draws reach:
// q's mass where p is negligible against q (t = log p - log q far below
// the draws' values) belongs in E_p[q/p] = 1/Z as rare draws of enormous
// weight that a sample of n_p draws almost never holds, so the plain mean
// comes out short of 1/Z by that mass. Two cases where q has such mass
// on correct input:
//   - a proposal that spills over a boundary of the support (draws piled
//     against an edge that no bound declares; log p = -inf there, the
//     half-normal of mistakes_test.go);
//   - a flow fitted to two well-separated modes: a flow is a continuous
//     map of its Gaussian base, so it keeps a sheet of mass between the
//     modes where p is e^-30 of q. On the two-mode target (d = 8, modes
//     at ±4·1) that sheet held 2–7 % of q's draws, the plain estimate came
//     out 0.02–0.08 above the bridge's ln Z, and 6 of 16 correct pipeline
//     runs with global moves carried "disagrees by 4.4 to 8.4 standard
//     errors" (docs/benchmarks.md, global moves).
//
// So the check is the truncated identity E_p[(q/p) 1{t ≥ c}] = q(t ≥ c)/Z:
// the posterior side drops the draws with t < c (the share hmTrim of
// lowest t, the largest weights), the proposal side is the share f of the
// proposal draws b (log p - log q) with t ≥ c, with its binomial
// variance. c is estimated, but both sides change with c at the same
// rate, e^-c f_q(c)/Z, when the draws follow p, so its noise costs
// nothing at first order. c at the draws' minimum (drop nothing) was
// biased: the lowest draw carries the largest weight (z mean -0.65 over
// 160 passes on exact draws of four targets, against -0.13 with the 1 %
// quantile). Draws that do not follow p (the check's purpose) give t
// about the same distribution at both kinds of draws, so f stays near 1
// - hmTrim and the check keeps its power.
func hmZ(a, b []float64, l, sl float64, nchains int, iid bool) float64 {
	if len(a) == 0 {
		return math.NaN()
	}
	t := make([]float64, len(a))
	for i, v := range a {
		t[i] = -v
	}
	sort.Float64s(t)
	c := mcmc.Quantile(t, hmTrim)
	// The posterior side: q/p at the draws with t ≥ c, zero at the others
	// (kept in place, so that the autocorrelation time sees the chains).
	w := make([]float64, len(a))
	for i, v := range a {
		w[i] = v
		if -v < c {
			w[i] = math.Inf(-1)
		}
	}
	inside, nq := 0, len(b)
	for _, v := range b {
		if v >= c && !math.IsInf(v, -1) {
			inside++
		}
	}
	corr, corrVar := 0.0, 0.0
	if nq > 0 && inside > 0 && inside < nq {
		f := float64(inside) / float64(nq)
		corr, corrVar = math.Log(f), (1-f)/(f*float64(nq))
	}
	tau := 1.0
	if !iid {
		tau, _ = weightTime(w, nchains)
	}
	lz, re2, err := meanWeight(w, tau)
	if err != nil {
		return math.NaN()
	}
	return (-lz + corr - l) / math.Sqrt(re2+sl*sl+corrVar)
}

// outsideShare is the share of the proposal draws b (log p - log q) where
// log p = -inf.
func outsideShare(b []float64) float64 {
	if len(b) == 0 {
		return math.NaN()
	}
	n := 0
	for _, v := range b {
		if math.IsInf(v, -1) {
			n++
		}
	}
	return float64(n) / float64(len(b))
}

// measureConsistency computes the statistics that compare the passes
// with each other and with the estimators that share their proposal
// (bridge and warp-III); IS and reciprocal IS are compared only where
// their ratios have a finite variance (measurePareto runs first): between
// k̂ = 1/2 and the threshold their estimates converge but their error
// bars are too small.
func (e *estimation) measureConsistency() {
	if e.cfg.Method != Bridge && e.cfg.Method != Warp3 {
		return
	}
	finiteQ, finiteP := e.diag.ParetoKQ < finiteVarianceK, e.diag.ParetoKP < finiteVarianceK
	tilt, isz, hmz := math.NaN(), math.NaN(), math.NaN()
	for _, p := range e.passes {
		tilt = nanMax(tilt, tiltZ(p.a, p.b, p.logZ, p.logZErr, p.nchains, p.iid))
		// q averaged over a subset of a symmetry's relabelings leaves the
		// others' copies of p to the bridge's posterior draws: importance
		// sampling sees only the share it covers.
		if finiteQ && !e.sym.partial() {
			isz = nanMaxAbs(isz, isZ(p.b, p.logZ, p.logZErr))
		}
		if finiteP {
			hmz = nanMaxAbs(hmz, hmZ(p.a, p.b, p.logZ, p.logZErr, p.nchains, p.iid))
		}
	}
	if len(e.passes) == 2 {
		a, b := e.passes[0], e.passes[1]
		e.diag.CrossFitZ = crossFitZ(a.logZ, a.logZErr, b.logZ, b.logZErr)
	}
	e.diag.TiltZ, e.diag.ISZ, e.diag.HMZ = tilt, isz, hmz
}

// diagnoseConsistency warns when the passes, the tilt test or the
// estimators sharing the proposal disagree beyond chance, naming the
// mistake a specific check found (explain) as the likely cause.
func (e *estimation) diagnoseConsistency() {
	d := e.diag
	var bad []string
	worst := 0.0
	add := func(z float64, format string, args ...any) {
		if math.Abs(z) > consistencyZ {
			bad = append(bad, fmt.Sprintf(format, args...))
			worst = math.Max(worst, math.Abs(z))
		}
	}
	if len(e.passes) == 2 {
		add(d.CrossFitZ, "the two cross-fitting passes disagree by %.1f standard errors (ln Z %.4f ± %.4f and %.4f ± %.4f)",
			math.Abs(d.CrossFitZ), e.passes[0].logZ, e.passes[0].logZErr, e.passes[1].logZ, e.passes[1].logZErr)
	}
	add(d.TiltZ, "the draws are not distributed as the log density says (log p - log q at the posterior "+
		"draws is not that at the proposal draws tilted by p/q: %.1f standard errors)", d.TiltZ)
	add(d.ISZ, "importance sampling with the same proposal disagrees with the bridge by %.1f standard errors", math.Abs(d.ISZ))
	add(d.HMZ, "reciprocal importance sampling with the same proposal disagrees with the bridge by %.1f standard errors", math.Abs(d.HMZ))
	if len(bad) == 0 {
		return
	}
	advice := causesMismatch + "; check the log density against the sampler's, then the chains' convergence"
	if e.cause != "" {
		// A specific check found a mistake that explains this one.
		advice = "likely cause: " + e.cause
	}
	e.found(finding(CheckConsistency, 0, WhereNone, worst, consistencyZ,
		"the estimate is not self-consistent: %s; ln Z and its error bar cannot be trusted; %s", strings.Join(bad, "; "), advice))
}
