package gbs

import (
	"errors"
	"fmt"
	"math"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// bridgeInput holds the log-density ratios that optimal bridge sampling
// needs. p-draws are stored chain after chain, chainLen draws each.
type bridgeInput struct {
	logQoverP []float64 // log q - log p at the p-draws
	logPoverQ []float64 // log p - log q at the q-draws
	nchains   int       // number of chains among the p-draws
	iid       bool      // p-draws are independent: tau = 1
	// tauP, if above 1, is the autocorrelation time of the p-draws: the
	// bridge weighs the p side by its effective size n_p/tauP, not n_p.
	tauP float64
}

// effectiveNP returns the size by which the bridge weighs the p side.
func (in *bridgeInput) effectiveNP() float64 {
	np := float64(len(in.logQoverP))
	if in.tauP > 1 {
		return np / in.tauP
	}
	return np
}

// bridgeEstimate is the root of the bridge equation with its error terms.
type bridgeEstimate struct {
	logZ       float64
	re2P, re2Q float64
	tau        float64
	shortChain bool
}

var errNoOverlap = errors.New("the proposal and the target do not overlap: every proposal draw has log p = -Inf, or every posterior draw has log q = -Inf")

// solveBridge solves the optimal bridge sampling equation (Meng & Wong
// 1996) for l = ln Z,
//
//	Σ_i σ(l + a_i - r) = Σ_j σ(-l + b_j + r),
//
// with a_i = log q/p at the p-draws, b_j = log p/q at the q-draws and
// r = log(n_p/n_q). For autocorrelated p-draws the optimal bridge function
// weighs the p side by its effective size n_e = n_p/tau instead
// (Frühwirth-Schnatter 2004, §3.2): then r = log(n_e/n_q), and as the
// sums are still means over n_p and n_q draws, the equation becomes
//
//	Σ_i σ(l + a_i - r) = (n_p/n_e) Σ_j σ(-l + b_j + r).
//
// The left side increases and the right side decreases in
// l, so the root is unique; Newton steps safeguarded by a bracket find it.
func solveBridge(in *bridgeInput) (bridgeEstimate, error) {
	np, nq := len(in.logQoverP), len(in.logPoverQ)
	if np == 0 || nq == 0 {
		return bridgeEstimate{}, fmt.Errorf("bridge sampling needs draws on both sides (n_p = %d, n_q = %d)", np, nq)
	}
	ne := in.effectiveNP()
	r := math.Log(ne / float64(nq))
	s := newBridgeSums(in.logQoverP, in.logPoverQ, r)
	s.logTau = math.Log(float64(np) / ne)
	l0, ok := s.initialGuess()
	if !ok {
		return bridgeEstimate{}, errNoOverlap
	}
	l, err := s.root(l0)
	if err != nil {
		return bridgeEstimate{}, err
	}
	est := bridgeEstimate{logZ: l}
	est.re2P, est.re2Q, est.tau, est.shortChain = bridgeError(in, l)
	return est, nil
}

// bridgeSums evaluates g(l) = log Σ_i σ(l + a'_i) - log Σ_j σ(-l + b'_j)
// - log(n_p/n_e) with a' = a - r, b' = b + r. Exponentials are computed once about a
// centre c, so that each evaluation at l = c + δ costs a division per
// draw: σ(l + a') = 1/(1 + e^-δ v) with v = e^-(c + a'), and likewise for
// the q-draws. The centre moves when δ grows, which keeps e^±δ finite;
// sums that underflow fall back to exact log-space arithmetic.
type bridgeSums struct {
	a, b   []float64 // a', b'
	r      float64
	logTau float64 // log(n_p/n_e), subtracted from g
	centre float64
	v, w   []float64
}

// maxShift bounds |l - centre| before the exponentials are recomputed.
const maxShift = 30

func newBridgeSums(logQoverP, logPoverQ []float64, r float64) *bridgeSums {
	s := &bridgeSums{
		r: r,
		a: make([]float64, len(logQoverP)),
		b: make([]float64, len(logPoverQ)),
		v: make([]float64, len(logQoverP)),
		w: make([]float64, len(logPoverQ)),
	}
	for i, x := range logQoverP {
		s.a[i] = x - r
	}
	for j, x := range logPoverQ {
		s.b[j] = x + r
	}
	return s
}

// initialGuess returns the importance-sampling estimate, close to the root
// when q fits p well; false when no q-draw has positive p.
func (s *bridgeSums) initialGuess() (float64, bool) {
	if l := logMeanExp(s.b) - s.r; !math.IsInf(l, 0) {
		return l, true
	}
	return 0, false
}

func (s *bridgeSums) recentre(c float64) {
	s.centre = c
	forParts(len(s.a), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			s.v[i] = math.Exp(-(c + s.a[i]))
		}
	})
	forParts(len(s.b), func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			s.w[j] = math.Exp(c - s.b[j])
		}
	})
}

// sigmoidSums returns Σ σ and Σ σ(1-σ) over σ = 1/(1 + scale·e), e in v.
func sigmoidSums(v []float64, scale float64) (sum, deriv float64) {
	var ps, pd [parts]float64
	forParts(len(v), func(p, lo, hi int) {
		var s, d float64
		for _, e := range v[lo:hi] {
			sig := 1 / (1 + scale*e)
			s += sig
			d += sig - sig*sig
		}
		ps[p], pd[p] = s, d
	})
	for p := range ps {
		sum += ps[p]
		deriv += pd[p]
	}
	return sum, deriv
}

// eval returns g(l) and g'(l).
func (s *bridgeSums) eval(l float64) (g, dg float64) {
	if math.Abs(l-s.centre) > maxShift {
		s.recentre(l)
	}
	d := l - s.centre
	s1, d1 := sigmoidSums(s.v, math.Exp(-d))
	s2, d2 := sigmoidSums(s.w, math.Exp(d))
	if s1 > 0 && s2 > 0 && d1 > 0 && d2 > 0 {
		return math.Log(s1) - math.Log(s2) - s.logTau, d1/s1 + d2/s2
	}
	return s.evalLog(l)
}

// evalLog is eval in log space throughout, for sums too small for float64.
func (s *bridgeSums) evalLog(l float64) (g, dg float64) {
	ls1, ld1 := logSigmoidSums(s.a, l, 1)
	ls2, ld2 := logSigmoidSums(s.b, l, -1)
	return ls1 - ls2 - s.logTau, math.Exp(ld1-ls1) + math.Exp(ld2-ls2)
}

// logSigmoidSums returns log Σ σ(sign l + x) and log Σ σ(1-σ) over x.
func logSigmoidSums(x []float64, l, sign float64) (logSum, logDeriv float64) {
	ls := make([]float64, len(x))
	ld := make([]float64, len(x))
	for i, v := range x {
		u := sign*l + v
		ls[i] = logSigmoid(u)
		ld[i] = ls[i] + logSigmoid(-u)
	}
	return logSumExp(ls), logSumExp(ld)
}

// logSigmoid returns log(1/(1+e^-u)) without overflow.
func logSigmoid(u float64) float64 {
	if u >= 0 {
		return -math.Log1p(math.Exp(-u))
	}
	return u - math.Log1p(math.Exp(u))
}

// root finds g(l) = 0 from l0 by Newton steps kept inside a bracket that
// tightens as signs are seen; a step leaving the bracket is replaced by
// bisection, or by an expanding search while one side is still open.
func (s *bridgeSums) root(l0 float64) (float64, error) {
	const (
		tol     = 1e-11
		maxIter = 500
		maxStep = 8 // largest Newton step, in nats, while unbracketed
	)
	s.recentre(l0)
	lo, hi := math.Inf(-1), math.Inf(1)
	l := l0
	for iter := 0; iter < maxIter; iter++ {
		g, dg := s.eval(l)
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return 0, errNoOverlap
		}
		if g == 0 {
			return l, nil
		}
		if g < 0 {
			lo = l
		} else {
			hi = l
		}
		step := -g / dg
		if math.IsNaN(step) || math.IsInf(step, 0) {
			step = -math.Copysign(1, g)
		}
		if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			step = math.Max(-maxStep, math.Min(maxStep, step))
		}
		next := l + step
		if !(next > lo && next < hi) {
			switch {
			case math.IsInf(lo, -1):
				next = hi - maxStep
			case math.IsInf(hi, 1):
				next = lo + maxStep
			default:
				next = 0.5 * (lo + hi)
			}
		}
		if math.Abs(next-l) <= tol*math.Max(1, math.Abs(l)) || (hi-lo) <= tol*math.Max(1, math.Abs(l)) {
			return next, nil
		}
		l = next
	}
	return 0, fmt.Errorf("bridge equation did not converge in %d iterations (bracket [%g, %g])", maxIter, lo, hi)
}

// bridgeError returns the two terms of the squared relative error of the
// optimal bridge estimate at l (Frühwirth-Schnatter 2004), the
// autocorrelation time of the p-side term, and whether the chains were too
// short to estimate it well.
func bridgeError(in *bridgeInput, l float64) (re2P, re2Q, tau float64, short bool) {
	np, nq := float64(len(in.logQoverP)), float64(len(in.logPoverQ))
	// The weights of the bridge function; the error formula holds for
	// any weights.
	ne := in.effectiveNP()
	sp, sq := ne/(ne+nq), nq/(ne+nq)
	f1 := make([]float64, len(in.logPoverQ))
	forParts(len(f1), func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			f1[j] = 1 / (sp + sq*math.Exp(l-in.logPoverQ[j]))
		}
	})
	f2 := make([]float64, len(in.logQoverP))
	forParts(len(f2), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			f2[i] = 1 / (sp*math.Exp(-l-in.logQoverP[i]) + sq)
		}
	})
	m1, v1 := mcmc.MeanVar(f1)
	m2, v2 := mcmc.MeanVar(f2)
	tau = 1
	if !in.iid {
		tau, short = meanTime(f2, in.nchains)
	}
	return tau * v2 / (np * m2 * m2), v1 / (nq * m1 * m1), tau, short
}
