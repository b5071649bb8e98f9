package nuts

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// The integrator's inner loops. A transition spends almost all of its
// own time here, at every leapfrog step, so each loop does in one pass
// what the metric, the kinetic energy and the tree's bookkeeping need: for
// the diagonal metrics, which are the default, the velocity M⁻¹p is formed
// element by element inside the kick and drift instead of in a separate
// pass. Every value is computed with the same operations in the same order
// as the separate passes would, so the fusion changes no result.

// edge is the momentum p and the sharp momentum p♯ = M⁻¹p at one end of a
// subtree, all that the generalized no-U-turn criterion needs from it.
type edge struct {
	p, s []float64
}

func newEdge(d int) *edge {
	return &edge{p: make([]float64, d), s: make([]float64, d)}
}

// cancelCheckEvery is how many leapfrog steps may pass between two looks at
// the cancellation channel: rare enough to cost nothing, frequent enough
// that even a maximal tree (1023 steps) notices a cancellation quickly.
const cancelCheckEvery = 16

// leapfrog advances the state a by one kick-drift-kick step of size eps
// (negative to go backward in time) and writes the result into b, which
// may be a itself: each coordinate of a is read before the same coordinate
// of b is written. It stores the new momentum and p♯ in e and returns the
// kinetic energy pᵀM⁻¹p (twice the usual ½pᵀM⁻¹p) at b.
func (s *sampler) leapfrog(b, a *point, e *edge, eps float64) (float64, error) {
	s.steps++
	if s.steps >= cancelCheckEvery {
		s.steps = 0
		select {
		case <-s.done:
			return 0, errCanceled
		default:
		}
	}
	half := 0.5 * eps
	n := s.d
	ap, aq, ag := a.p[:n], a.q[:n], a.grad[:n]
	bp, bq := b.p[:n], b.q[:n]
	if diag := s.metric.diagonal(); diag != nil {
		diag = diag[:n]
		for i, m := range diag {
			p := ap[i] + half*ag[i]
			bp[i] = p
			bq[i] = aq[i] + eps*(m*p)
		}
	} else {
		for i, g := range ag {
			bp[i] = ap[i] + half*g
		}
		s.metric.velocity(s.v, bp)
		for i, v := range s.v[:n] {
			bq[i] = aq[i] + eps*v
		}
	}
	if err := s.eval(b); err != nil {
		return 0, err
	}
	bg := b.grad[:n]
	ep, es := e.p[:n], e.s[:n]
	if diag := s.metric.diagonal(); diag != nil {
		diag = diag[:n]
		var kin float64
		for i, m := range diag {
			p := bp[i] + half*bg[i]
			bp[i] = p
			ep[i] = p
			v := m * p
			es[i] = v
			kin += p * v
		}
		return kin, nil
	}
	for i, g := range bg {
		p := bp[i] + half*g
		bp[i] = p
		ep[i] = p
	}
	s.metric.velocity(es, ep)
	return floats.Dot(ep, es), nil
}

// drawMomentum draws p ~ N(0, M) into p, writes p♯ = M⁻¹p into sharp and
// returns pᵀM⁻¹p.
func (s *sampler) drawMomentum(p, sharp []float64) float64 {
	n := s.d
	p, sharp = p[:n], sharp[:n]
	if diag := s.metric.diagonal(); diag != nil {
		diag, sqrtInv := diag[:n], s.metric.sqrtInv[:n]
		var kin float64
		for i, m := range diag {
			v := sqrtInv[i] * s.rng.NormFloat64()
			p[i] = v
			w := m * v
			sharp[i] = w
			kin += v * w
		}
		return kin
	}
	s.metric.sampleMomentum(p, s.rng)
	s.metric.velocity(sharp, p)
	return floats.Dot(p, sharp)
}

// hamiltonian returns H = -log p + ½ pᵀM⁻¹p from log p and pᵀM⁻¹p. A
// state whose log density is not finite (outside the support, NaN, +Inf)
// or whose gradient spoiled the momentum gets H = +Inf: it is then a
// divergence with zero weight, so the sampler rejects it instead of
// propagating NaNs.
func hamiltonian(lp, kin float64) float64 {
	if math.IsInf(lp, 0) || math.IsNaN(lp) {
		return math.Inf(1)
	}
	h := -lp + 0.5*kin
	if math.IsNaN(h) {
		return math.Inf(1)
	}
	return h
}
