package nuts

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// ESS of AR(1) chains x_t = φ x_{t-1} + ε_t is n(1-φ)/(1+φ); of
// independent draws, n; of antithetic AR(1) (φ < 0), more than n.
func TestESSAR1(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const m, n = 4, 50000
	for _, phi := range []float64{0, 0.5, 0.9, -0.3} {
		chains := make([][]float64, m)
		for c := range chains {
			x := rng.NormFloat64() / math.Sqrt(1-phi*phi)
			chains[c] = make([]float64, n)
			for i := range chains[c] {
				x = phi*x + rng.NormFloat64()
				chains[c][i] = x
			}
		}
		got, err := ESS(chains)
		if err != nil {
			t.Fatal(err)
		}
		want := m * n * (1 - phi) / (1 + phi)
		if math.Abs(got/want-1) > 0.1 {
			t.Errorf("φ = %v: ESS %.0f, want %.0f", phi, got, want)
		}
	}
}

// Chains stuck at different levels must have a small ESS even if each
// chain alone mixes well: the between-chain variance counts.
func TestESSDisagreeingChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	chains := make([][]float64, 4)
	for c := range chains {
		chains[c] = make([]float64, 1000)
		for i := range chains[c] {
			chains[c][i] = 10*float64(c) + rng.NormFloat64()
		}
	}
	got, err := ESS(chains)
	if err != nil {
		t.Fatal(err)
	}
	if got > 100 {
		t.Errorf("ESS %.0f for chains at different levels, want small", got)
	}
}

func TestESSErrors(t *testing.T) {
	for _, tc := range []struct {
		x    [][]float64
		want string
	}{
		{nil, "no chains"},
		{[][]float64{{1, 2, 3}}, "at least 4"},
		{[][]float64{{1, 2, 3, 4}, {1, 2, 3}}, "chain 1 has 3 draws"},
		{[][]float64{{1, 2, math.NaN(), 4}}, "chain 0 draw 2"},
		{[][]float64{{1, 1, 1, 1, 1}}, "constant"},
	} {
		if _, err := ESS(tc.x); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ESS(%v): %v, want an error mentioning %q", tc.x, err, tc.want)
		}
	}
}
