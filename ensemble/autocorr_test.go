package ensemble

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// ar1 returns chains of a stationary AR(1) process x_t = ρ x_{t−1} + ε_t,
// whose integrated autocorrelation time is (1+ρ)/(1−ρ).
func ar1(rng *rand.Rand, chains, n int, rho float64) [][]float64 {
	out := make([][]float64, chains)
	for c := range out {
		x := make([]float64, n)
		x[0] = rng.NormFloat64()
		for t := 1; t < n; t++ {
			x[t] = rho*x[t-1] + math.Sqrt(1-rho*rho)*rng.NormFloat64()
		}
		out[c] = x
	}
	return out
}

func TestIntegratedTimeAR1(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range []struct {
		rho    float64
		chains int
		n      int
	}{
		{0.9, 32, 20000},
		{0.9, 1, 400000},
		{0.5, 8, 20000},
		{0, 8, 20000},
	} {
		tau, err := IntegratedTime(ar1(rng, c.chains, c.n, c.rho), 0)
		if err != nil {
			t.Fatal(err)
		}
		want := (1 + c.rho) / (1 - c.rho)
		t.Logf("rho %.1f, %d×%d: tau %.3f, want %.3f", c.rho, c.chains, c.n, tau, want)
		if math.Abs(tau-want) > 0.1*want {
			t.Errorf("rho %.1f, %d chains of %d: tau = %.3f, want %.3f within 10%%", c.rho, c.chains, c.n, tau, want)
		}
	}
}

func TestIntegratedTimeEdgeCases(t *testing.T) {
	// Constant chains carry no information and are skipped.
	rng := rand.New(rand.NewPCG(1, 1))
	x := ar1(rng, 4, 5000, 0.5)
	x = append(x, make([]float64, 5000), []float64(nil))
	x[5] = make([]float64, 5000)
	for i := range x[5] {
		x[5][i] = 0.1
	}
	with, err := IntegratedTime(x, 5)
	if err != nil {
		t.Fatal(err)
	}
	without, _ := IntegratedTime(x[:4], 5)
	if with != without {
		t.Errorf("constant chains changed tau from %v to %v", without, with)
	}
	if tau, err := IntegratedTime(x[4:], 5); err != nil || !math.IsInf(tau, 1) {
		t.Errorf("all-constant chains: tau %v, err %v; want +Inf", tau, err)
	}
	// A chain much shorter than tau: the estimate is too small but > 1.
	short := ar1(rng, 1, 50, 0.999)
	if tau, err := IntegratedTime(short, 5); err != nil || !(tau > 1) {
		t.Errorf("short chain: tau %v, err %v", tau, err)
	}

	for _, c := range []struct {
		x    [][]float64
		c    float64
		want string
	}{
		{nil, 5, "no series"},
		{[][]float64{{1}}, 5, "length 1"},
		{[][]float64{{1, 2, 3}, {1, 2}}, 5, "series 1 has length 2"},
		{[][]float64{{1, math.NaN(), 3}}, 5, "NaN"},
		{[][]float64{{1, 2, 3}}, -1, "c = -1"},
	} {
		if _, err := IntegratedTime(c.x, c.c); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("IntegratedTime(%v, %v): error %v, want one containing %q", c.x, c.c, err, c.want)
		}
	}
}
