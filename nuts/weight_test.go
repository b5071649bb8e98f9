package nuts

import (
	"math"
	"math/rand/v2"
	"testing"
)

// logSumExp is the reference: the log-space sum Stan keeps.
func logSumExp(ws []float64) float64 {
	m := math.Inf(-1)
	for _, w := range ws {
		m = math.Max(m, w)
	}
	var s float64
	for _, w := range ws {
		s += math.Exp(w - m)
	}
	return m + math.Log(s)
}

// Merging subtree weights as e^m·f agrees with the log-space sums: the
// total of a tree of states and the probability that its final half wins,
// for log weights H0 - H from far below zero to far above the point where
// e^w overflows.
func TestWeightMatchesLogSpace(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	scales := []float64{1, 30, 700, 5000}
	for trial := 0; trial < 2000; trial++ {
		n := 1 << (1 + rng.IntN(6))
		ws := make([]float64, n)
		scale := scales[trial%len(scales)]
		for i := range ws {
			ws[i] = scale * (2*rng.Float64() - 1)
			if ws[i] < -700 {
				ws[i] = -700 // below, e^w loses precision (see the next test)
			}
		}
		var build func(ws []float64) weight
		build = func(ws []float64) weight {
			if len(ws) == 1 {
				w, _ := stateWeight(ws[0])
				return w
			}
			h := len(ws) / 2
			init, fin, m := align(build(ws[:h]), build(ws[h:]))
			sum := init + fin
			want := math.Exp(logSumExp(ws[h:]) - logSumExp(ws))
			if got := fin / sum; math.Abs(got-want) > 1e-12 {
				t.Fatalf("trial %d: P(final half) = %v, want %v", trial, got, want)
			}
			return weight{m: m, f: sum}
		}
		w := build(ws)
		if got, want := w.m+math.Log(w.f), logSumExp(ws); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Fatalf("trial %d: log weight %v, want %v", trial, got, want)
		}
	}
}

// The acceptance statistic is min(1, e^w) exactly, and weights too small
// for a float64 are zero without turning a selection into NaN.
func TestStateWeightEdges(t *testing.T) {
	for _, w := range []float64{-800, -745.2, -30, -1e-9, 0, 1e-9, 3, 599, 601, 1e4} {
		_, accept := stateWeight(w)
		if want := math.Min(1, math.Exp(w)); accept != want {
			t.Errorf("acceptance at w = %v: %v, want %v", w, accept, want)
		}
	}
	a, _ := stateWeight(-800)
	b, _ := stateWeight(-900)
	init, fin, _ := align(a, b)
	if sum := init + fin; sum != 0 || 0.5*sum < fin {
		t.Errorf("two underflowing weights sum to %v, want 0 and no selection", sum)
	}
	// A subtree with an overflowing weight dominates one without.
	big, _ := stateWeight(1e4)
	small, _ := stateWeight(5)
	init, fin, m := align(small, big)
	if m != 1e4 || fin != 1 || !(init < 1e-300) {
		t.Errorf("align(e^5, e^1e4) = %v, %v at m = %v", init, fin, m)
	}
}
