package gbs

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// TestPlanEvaluationsCountsEvidence holds PlanEvaluations to the calls
// Evidence makes: exactly the planned number when n_q is set, and between
// the plan and plan + MaxExtra with the adaptive rule, for every method,
// with and without cross-fitting and stored log p, with an odd number of
// chains and with a single chain.
func TestPlanEvaluationsCountsEvidence(t *testing.T) {
	const d = 2
	for _, nc := range []int{1, 3, 4} {
		for _, method := range []Method{Bridge, IS, HM, Warp3} {
			for _, noCross := range []bool{false, true} {
				for _, haveLogP := range []bool{false, true} {
					for _, nq := range []int{0, 300} {
						name := fmt.Sprintf("chains=%d/%v/nocross=%v/logp=%v/nq=%d", nc, method, noCross, haveLogP, nq)
						s := normalChains(d, nc, 1200/nc, 0, 1, rand.New(rand.NewPCG(uint64(nc), 9)))
						s.Kind = IndependentDraws
						if haveLogP {
							for _, ch := range s.Chains {
								lp := make([]float64, len(ch)/d)
								normalLogP(d, 0, 1)(lp, ch)
								s.LogP = append(s.LogP, lp)
							}
						}
						set := &Settings{Method: method, CrossFit: map[bool]Switch{false: Auto, true: Off}[noCross], NQ: nq, Seed: 5}
						var calls atomic.Int64
						logp := normalLogP(d, 0, 1)
						counting := func(dst, x []float64) error {
							calls.Add(int64(len(dst)))
							return logp(dst, x)
						}
						r, err := Evidence(context.Background(), counting, s, set)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						p, err := PlanEvaluations(nc, s.Draws(), d, haveLogP, s.NCall, set)
						if err != nil {
							t.Fatalf("%s: plan: %v", name, err)
						}
						if r.NCall != calls.Load() {
							t.Fatalf("%s: Result.NCall = %d, counted %d", name, r.NCall, calls.Load())
						}
						if nq > 0 && (p.Planned != r.NCall || p.MaxExtra != 0) {
							t.Errorf("%s: plan %+v, Evidence made %d calls", name, p, r.NCall)
						}
						if nq == 0 && (r.NCall < p.Planned || r.NCall > p.Planned+p.MaxExtra) {
							t.Errorf("%s: %d calls outside the plan %+v", name, r.NCall, p)
						}
					}
				}
			}
		}
	}
}

func TestPlanEvaluationsRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		chains, draws, d int
		ncall            int64
		set              *Settings
	}{
		{0, 10, 2, 0, nil}, {2, 0, 2, 0, nil}, {2, 10, 0, 0, nil}, {2, 10, 2, -1, nil},
		{2, 10, 2, 0, &Settings{NQ: 1}}, {2, 10, 2, 0, &Settings{FEva: 2}},
	} {
		if _, err := PlanEvaluations(c.chains, c.draws, c.d, false, c.ncall, c.set); err == nil {
			t.Errorf("PlanEvaluations(%d, %d, %d, ncall %d, %+v): no error", c.chains, c.draws, c.d, c.ncall, c.set)
		}
	}
}

// TestFittedProposalIsTheEstimators: the harmonic-mean estimate uses q at
// the posterior draws of the second half and no proposal draw, so ln Z
// computed from FittedProposal's q must be Evidence's, to rounding.
func TestFittedProposalIsTheEstimators(t *testing.T) {
	const d = 3
	s := normalChains(d, 4, 500, 0.5, 2, rand.New(rand.NewPCG(1, 2)))
	s.Kind = IndependentDraws
	set := &Settings{Method: HM, Seed: 7}
	r, err := Evidence(context.Background(), normalLogP(d, 0.5, 2), s, set)
	if err != nil {
		t.Fatal(err)
	}
	q, err := FittedProposal(s, set)
	if err != nil {
		t.Fatal(err)
	}
	h, err := splitHalves(s)
	if err != nil {
		t.Fatal(err)
	}
	n := len(h.use) / d
	lq, lp := make([]float64, n), make([]float64, n)
	q.LogProb(lq, h.use)
	normalLogP(d, 0.5, 2)(lp, h.use)
	for i := range lq {
		lq[i] -= lp[i]
	}
	lz, _, err := meanWeight(lq, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(-lz-r.LogZ) > 1e-12 {
		t.Errorf("ln Z from FittedProposal %.15g, Evidence's %.15g", -lz, r.LogZ)
	}
	// warp-III's q is the Gaussian of the first half.
	g, err := FittedProposal(s, &Settings{Method: Warp3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.(*Gaussian); !ok {
		t.Errorf("warp-III's proposal is a %T, want *Gaussian", g)
	}
}
