package gbs

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// arWalkers returns nc walkers of m draws of a d-dimensional standard
// Gaussian, coordinate k an AR(1) series with coefficient phi[k] (τ =
// (1+φ)/(1-φ)), with the exact log p.
func arWalkers(nc, m int, phi []float64, seed uint64) *Samples {
	d := len(phi)
	rng := rand.New(rand.NewPCG(seed, 7))
	s := &Samples{Dim: d, Chains: make([][]float64, nc), LogP: make([][]float64, nc)}
	for c := range nc {
		x := make([]float64, d)
		for k := range x {
			x[k] = rng.NormFloat64()
		}
		ch, lp := make([]float64, 0, m*d), make([]float64, 0, m)
		for range m {
			l := -float64(d) / 2 * math.Log(2*math.Pi)
			for k, f := range phi {
				x[k] = f*x[k] + math.Sqrt(1-f*f)*rng.NormFloat64()
				l -= x[k] * x[k] / 2
			}
			ch = append(ch, x...)
			lp = append(lp, l)
		}
		s.Chains[c], s.LogP[c] = ch, lp
	}
	return s
}

// walkerTime finds the slowest coordinate and its τ: coordinate 1 with
// φ = 0.9 has τ = 19, coordinate 0 with φ = 0.5 has τ = 3.
func TestWalkerTime(t *testing.T) {
	s := arWalkers(32, 2000, []float64{0.5, 0.9}, 1)
	tau, k := walkerTime(s)
	if k != 1 || math.Abs(tau-19) > 0.15*19 {
		t.Errorf("walkerTime = %.2f at coordinate %d, want about 19 at coordinate 1", tau, k)
	}
	if !walkersShort(40*19, 19) || walkersShort(60*19, 19) {
		t.Errorf("walkersShort: emcee's rule is 50 tau per walker")
	}
}

// Walkers of an ensemble shorter than 50 τ get the walkers' warning (an
// ensemble never gets the passes' one on the summands' τ); long enough
// ones, or the same short chains not marked as an ensemble, do not.
func TestEnsembleShortWalkers(t *testing.T) {
	phi := []float64{0.9, 0.9}
	for _, c := range []struct {
		m        int
		ensemble bool
		want     bool
	}{{300, true, true}, {300, false, false}, {2000, true, false}} {
		s := arWalkers(32, c.m, phi, 2)
		if c.ensemble {
			s.Kind = EnsembleWalkers
		}
		res, err := Evidence(context.Background(), gaussianLogP2, s, &Settings{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		got, passShort := res.Warns(CheckEnsembleWalkers), res.Warns(CheckShortChains)
		if got != c.want || (c.ensemble && passShort) {
			t.Errorf("m = %d, ensemble %v: walkers' warning %v (want %v), passes' warning %v; warnings %q", c.m, c.ensemble, got, c.want, passShort, res.Warnings())
		}
		if math.Abs(res.LogZ) > 4*res.LogZErr {
			t.Errorf("m = %d: ln Z = %.4f ± %.4f, exact 0", c.m, res.LogZ, res.LogZErr)
		}
	}
}

func gaussianLogP2(dst, x []float64) error {
	for i := range dst {
		a, b := x[2*i], x[2*i+1]
		dst[i] = -(a*a+b*b)/2 - math.Log(2*math.Pi)
	}
	return nil
}
