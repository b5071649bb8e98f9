package gbs_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/problems"
)

// plantedModes is the missed-mode case: two unit Gaussians at (5, 5, 5)
// and (-5, -5, -5) with equal weights, normalized, on the box
// (-10, 10)^3 with log p = -Inf outside. Each component keeps the mass
// (Φ(5) - Φ(-15))^3 of its Gaussian inside the box, so ln Z is
// 3 ln Φ(5) (the Φ(-15) is below 10^-50), about -8.6e-7.
func plantedModes() (logp gbs.LogDensityFunc, lower, upper []float64, logZ float64) {
	const d = 3
	mix := problems.GaussianMixture(d, []float64{0.5, 0.5},
		[][]float64{{5, 5, 5}, {-5, -5, -5}}, []float64{1, 1}, 0)
	lower, upper = []float64{-10, -10, -10}, []float64{10, 10, 10}
	logp = func(dst, x []float64) error {
		for i := range dst {
			p := x[i*d : (i+1)*d]
			dst[i] = mix.LogProb(p)
			for _, v := range p {
				if !(v > -10 && v < 10) {
					dst[i] = math.Inf(-1)
				}
			}
		}
		return nil
	}
	return logp, lower, upper, 3 * math.Log(0.5*math.Erfc(-5/math.Sqrt2))
}

// firstModeDraws are 8 chains of exact draws from the (5, 5, 5) mode
// alone, as chains all started there give.
func firstModeDraws(seed uint64) *gbs.Samples {
	rng := rand.New(rand.NewPCG(seed, 1))
	chains := make([][]float64, 8)
	for c := range chains {
		chains[c] = make([]float64, 2000*3)
		for i := range chains[c] {
			chains[c][i] = 5 + rng.NormFloat64()
		}
	}
	return &gbs.Samples{Dim: 3, Chains: chains}
}

// A mode no draw visited, with the box given: the census finds it, names
// where it is and how much ln Z misses (ln 2 here).
func TestCensusFindsMissedMode(t *testing.T) {
	logp, lo, hi, logZ := plantedModes()
	res, err := gbs.Evidence(context.Background(), logp, firstModeDraws(7), &gbs.Settings{Seed: 7, Lower: lo, Upper: hi})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diagnostics
	t.Logf("ln Z = %.4f ± %.4f (exact %.4f), census: %d calls, shortfall %.3f, modes %+v", res.LogZ, res.LogZErr, logZ, d.CensusCalls, d.CensusShortfall, d.CensusModes)
	for _, f := range res.Found(gbs.CheckMissedMode) {
		t.Log(f.Message)
	}
	if !res.Warns(gbs.CheckMissedMode) {
		t.Fatalf("no missed-mode warning; findings %v", res.Findings)
	}
	if len(d.CensusModes) != 1 {
		t.Fatalf("%d modes found, want 1", len(d.CensusModes))
	}
	m := d.CensusModes[0]
	for j, v := range m.X {
		if math.Abs(v+5) > 1e-3 {
			t.Errorf("mode coordinate %d = %g, want -5", j, v)
		}
	}
	// The missed mode holds as much as the visited one.
	if math.Abs(m.LogMass) > 0.01 {
		t.Errorf("ln(m/Z) = %g, want 0", m.LogMass)
	}
	if got := res.LogZ + d.CensusShortfall; math.Abs(got-logZ) > 0.02 {
		t.Errorf("ln Z + shortfall = %.4f, exact %.4f", got, logZ)
	}
	if d.CensusCalls <= 0 || int64(d.CensusCalls) > res.NCall {
		t.Errorf("census calls %d, NCall %d", d.CensusCalls, res.NCall)
	}
	off, err := gbs.Evidence(context.Background(), logp, firstModeDraws(7), &gbs.Settings{Seed: 7, Lower: lo, Upper: hi, ModeCensus: gbs.Off})
	if err != nil {
		t.Fatal(err)
	}
	if len(off.Found(gbs.CheckMissedMode)) > 0 || off.Diagnostics.CensusCalls != 0 || !math.IsNaN(off.Diagnostics.CensusShortfall) {
		t.Errorf("ModeCensus Off: found %v, calls %d", off.Findings, off.Diagnostics.CensusCalls)
	}
}
