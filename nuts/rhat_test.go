package nuts

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// R-hat of a fixed data set (odd length, ties) against ArviZ 0.23.4
// (az.rhat(x, method="rank"); bulk 1.030445019500404, folded
// 1.0758520219518022, the larger; internal/mcmc's TestArviZReference
// holds this and ten more data sets to ArviZ). ArviZ folds about the
// median of the split draws, which leaves out the middle draw of an odd
// length: a former value here, 1.0749361828342705, folded about the
// median of all draws.
func TestRHatReference(t *testing.T) {
	const m, n = 4, 101
	chains := make([][]float64, m)
	for c := range chains {
		chains[c] = make([]float64, n)
		for i := range chains[c] {
			v := math.Sin(0.37*float64(i)+float64(c))*(1+0.3*float64(c)) + 0.004*float64(i*c)
			if (i*7+c)%13 == 0 {
				v += 0.5
			}
			chains[c][i] = v
		}
	}
	got, err := RHat(chains)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1.0758520219518022; math.Abs(got-want) > 1e-12 {
		t.Errorf("R-hat %.15f, want %.15f", got, want)
	}
}

// iidChains returns m chains of n draws of draw().
func iidChains(m, n int, draw func(c int) float64) [][]float64 {
	out := make([][]float64, m)
	for c := range out {
		out[c] = make([]float64, n)
		for i := range out[c] {
			out[c][i] = draw(c)
		}
	}
	return out
}

// R-hat is near 1 for chains from one distribution, even a heavy-tailed
// one, and well above 1 when one chain is shifted, when one chain has a
// different scale (only the tail statistic sees that), or when every
// chain drifts (only the split sees that).
func TestRHatDetects(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		name     string
		chains   [][]float64
		min, max float64
	}{
		{"normal", iidChains(8, 1000, func(int) float64 { return rng.NormFloat64() }), 1, 1.01},
		{"cauchy", iidChains(8, 1000, func(int) float64 { return math.Tan(math.Pi * (rng.Float64() - 0.5)) }), 1, 1.01},
		{"shifted", iidChains(8, 1000, func(c int) float64 {
			if c == 5 {
				return 3 + rng.NormFloat64()
			}
			return rng.NormFloat64()
		}), 1.1, math.Inf(1)},
		{"scale", iidChains(4, 1000, func(c int) float64 {
			if c == 0 {
				return 3 * rng.NormFloat64()
			}
			return rng.NormFloat64()
		}), 1.05, math.Inf(1)},
	} {
		got, err := RHat(tc.chains)
		if err != nil {
			t.Fatal(err)
		}
		if !(got >= tc.min && got <= tc.max) {
			t.Errorf("%s: R-hat %.4f, want in [%g, %g]", tc.name, got, tc.min, tc.max)
		}
	}
	// A drift that every chain shares: the chain means agree, the halves
	// do not.
	drift := make([][]float64, 4)
	for c := range drift {
		drift[c] = make([]float64, 1000)
		for i := range drift[c] {
			drift[c][i] = float64(i)/250 + rng.NormFloat64()
		}
	}
	if got, _ := RHat(drift); got < 1.1 {
		t.Errorf("drifting chains: R-hat %.4f, want above 1.1", got)
	}
	// One chain alone is split in two.
	if got, _ := RHat(drift[:1]); got < 1.1 {
		t.Errorf("one drifting chain: R-hat %.4f, want above 1.1", got)
	}
}

func TestRHatErrors(t *testing.T) {
	for _, tc := range []struct {
		x    [][]float64
		want string
	}{
		{nil, "no chains"},
		{[][]float64{{1, 2, 3}}, "at least 4"},
		{[][]float64{{1, 2, 3, 4}, {1, 2, 3}}, "chain 1 has 3"},
		{[][]float64{{1, 2, math.NaN(), 4}}, "NaN"},
		{[][]float64{{1, 1, 1, 1}, {1, 1, 1, 1}}, "constant"},
	} {
		if _, err := RHat(tc.x); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.x, err, tc.want)
		}
	}
	// One constant chain among moving ones is fine (and flagged).
	if got, err := RHat([][]float64{{5, 5, 5, 5, 5, 5}, {1, 2, 3, 1, 2, 3}, {3, 1, 2, 2, 3, 1}}); err != nil || got < 1.1 {
		t.Errorf("a stuck chain: R-hat %v, %v", got, err)
	}
}

// Sample fills RHatLogP, and LowChains finds a chain started in a minor
// mode far from the main one, where it stays: a mixture of N(0, I) with
// weight 1 and N(20·1, I) with weight e^-8 in 2-d.
func TestRHatLogPAndLowChains(t *testing.T) {
	f := func(grad, x []float64) (float64, error) {
		var a, b float64
		for _, v := range x {
			a -= 0.5 * v * v
			b -= 0.5 * (v - 20) * (v - 20)
		}
		b -= 8
		m := math.Max(a, b)
		wa, wb := math.Exp(a-m), math.Exp(b-m)
		for i, v := range x {
			grad[i] = (wa*(-v) + wb*(20-v)) / (wa + wb)
		}
		return m + math.Log(wa+wb), nil
	}
	init := [][]float64{{0, 0}, {0.5, 0}, {0, -0.5}, {20, 20}}
	r, err := Sample(context.Background(), f, 2, &Settings{Init: init, Warmup: 200, Draws: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !(r.RHatLogP > 1.5) {
		t.Errorf("R-hat of log p %v with one chain in the minor mode", r.RHatLogP)
	}
	if low := r.LowChains(); len(low) != 1 || low[0] != 3 {
		t.Errorf("LowChains = %v, want [3]", low)
	}
	// All chains in the main mode: neither flag.
	init[3] = []float64{0, 0.5}
	r, err = Sample(context.Background(), f, 2, &Settings{Init: init, Warmup: 200, Draws: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !(r.RHatLogP < 1.05) || len(r.LowChains()) != 0 {
		t.Errorf("R-hat %v, low chains %v for mixed chains", r.RHatLogP, r.LowChains())
	}
	// Too few draws: NaN, not a number that looks like an answer.
	r, err = Sample(context.Background(), f, 2, &Settings{Chains: 2, Warmup: 50, Draws: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(r.RHatLogP) {
		t.Errorf("R-hat %v from 3 draws per chain, want NaN", r.RHatLogP)
	}
}
