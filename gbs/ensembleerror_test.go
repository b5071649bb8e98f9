package gbs

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// commonWalkers returns nc walkers of m draws of the 2-d standard
// Gaussian that move together: each coordinate of walker c is
// √ρ g_t + √(1-ρ) e_{c,t}, with g (shared by all walkers) and e (its own)
// AR(1) series of coefficient phi and unit variance, so that every walker
// holds exact draws of p and the walkers' common excursions make up the
// share ρ of each draw's variance. ρ = 0 gives independent walkers.
func commonWalkers(nc, m int, rho, phi float64, seed uint64) *Samples {
	const d = 2
	rng := rand.New(rand.NewPCG(seed, 11))
	ar := func(x float64) float64 { return phi*x + math.Sqrt(1-phi*phi)*rng.NormFloat64() }
	g := make([]float64, m*d)
	var gt [d]float64
	for k := range gt {
		gt[k] = rng.NormFloat64()
	}
	for t := range m {
		for k := range gt {
			gt[k] = ar(gt[k])
			g[t*d+k] = gt[k]
		}
	}
	s := &Samples{Dim: d, Kind: EnsembleWalkers, Chains: make([][]float64, nc), LogP: make([][]float64, nc)}
	for c := range nc {
		var et [d]float64
		for k := range et {
			et[k] = rng.NormFloat64()
		}
		ch, lp := make([]float64, m*d), make([]float64, m)
		for t := range m {
			lp[t] = -math.Log(2 * math.Pi)
			for k := range et {
				et[k] = ar(et[k])
				x := math.Sqrt(rho)*g[t*d+k] + math.Sqrt(1-rho)*et[k]
				ch[t*d+k] = x
				lp[t] -= x * x / 2
			}
		}
		s.Chains[c], s.LogP[c] = ch, lp
	}
	return s
}

// shiftedGaussian is p moved by half a standard deviation: log q/p is
// linear in the draws, so the bridge function follows the walkers'
// common excursions and the posterior term is not the fit's alone.
func shiftedGaussian([]float64, int, []float64, uint64) (Proposal, []string, error) {
	g, err := NewGaussian([]float64{0.5, 0}, []float64{1, 0, 0, 1})
	return g, nil, err
}

// The error bar of an ensemble's walkers counts the excursions the two
// cross-fitting halves share: walkers that move together get a wider
// error bar than the same draws read as independent MCMC chains (over 40
// seeds, TestMeasureEnsembleTerm, 1.27 times on average, where the spread
// of ln Z is 1.4 times the chains' error bar), while independent walkers
// keep the chains' error bar, and MCMC chains never get the ensemble's
// term.
func TestEnsembleTermCoupledWalkers(t *testing.T) {
	if testing.Short() {
		t.Skip("fits two bridges per case on 64 000 draws")
	}
	for _, c := range []struct {
		rho      float64
		min, max float64 // bounds on σ(ensemble)/σ(chains)
	}{{0.6, 1.15, 1.8}, {0, 0.97, 1.05}} {
		s := commonWalkers(32, 2000, c.rho, 0.97, 4)
		set := &Settings{Seed: 5, Proposal: shiftedGaussian, NQ: 20000}
		ens, err := Evidence(context.Background(), gaussianLogP2, s, set)
		if err != nil {
			t.Fatal(err)
		}
		s.Kind = MCMCChains
		chains, err := Evidence(context.Background(), gaussianLogP2, s, set)
		if err != nil {
			t.Fatal(err)
		}
		if ens.LogZ != chains.LogZ {
			t.Errorf("rho %.1f: ln Z %.6f as an ensemble, %.6f as chains: the kind of draws should change the error bar only", c.rho, ens.LogZ, chains.LogZ)
		}
		ratio := ens.LogZErr / chains.LogZErr
		if ratio < c.min || ratio > c.max {
			t.Errorf("rho %.1f: error bar %.5f as an ensemble, %.5f as chains (ratio %.2f), want a ratio in [%.2f, %.2f]",
				c.rho, ens.LogZErr, chains.LogZErr, ratio, c.min, c.max)
		}
		if math.Abs(ens.LogZ) > 4*ens.LogZErr {
			t.Errorf("rho %.1f: ln Z = %.5f ± %.5f, exact 0", c.rho, ens.LogZ, ens.LogZErr)
		}
		if last := ens.Trace[len(ens.Trace)-1]; math.Abs(last.LogZErr-ens.LogZErr) > 1e-12*ens.LogZErr {
			t.Errorf("rho %.1f: the trace ends at ± %.6g, the result is ± %.6g", c.rho, last.LogZErr, ens.LogZErr)
		}
	}
}

// batchMeansVar estimates the variance of the mean of an AR(1) series,
// τ σ²/n with τ = (1+φ)/(1-φ), from windows much longer than τ.
func TestBatchMeansVar(t *testing.T) {
	const n, phi = 400000, 0.8
	rng := rand.New(rand.NewPCG(6, 1))
	x := make([]float64, n)
	v := rng.NormFloat64()
	for i := range x {
		v = phi*v + math.Sqrt(1-phi*phi)*rng.NormFloat64()
		x[i] = v
	}
	want := (1 + phi) / (1 - phi) / n
	// 64 windows: the estimate's relative standard deviation is √(2/63) ≈ 0.18.
	if got := batchMeansVar(x, 64); math.Abs(got/want-1) > 0.55 {
		t.Errorf("batchMeansVar = %.3g, want %.3g (within 55 %%)", got, want)
	}
	if got := batchMeansVar(x[:1], 16); got != 0 {
		t.Errorf("batchMeansVar of one draw in 16 windows = %g, want 0", got)
	}
}

// TestMeasureEnsembleTerm is the calibration behind
// TestEnsembleTermCoupledWalkers: over GBS_REPS seeds (default 40) of
// coupled walkers (ρ = 0.6) and of independent ones (ρ = 0), the spread
// of ln Z against the mean error bar read as an ensemble and as chains.
// Skipped unless GBS_MEASURE is set:
//
//	GBS_MEASURE=1 go test -run TestMeasureEnsembleTerm -v ./gbs/
func TestMeasureEnsembleTerm(t *testing.T) {
	reps := measureReps(t, 40)
	for _, rho := range []float64{0.6, 0} {
		var lz, errE, errC, zE, zC []float64
		for r := range reps {
			s := commonWalkers(32, 2000, rho, 0.97, uint64(100+r))
			set := &Settings{Seed: uint64(r), Proposal: shiftedGaussian, NQ: 20000}
			ens, err := Evidence(context.Background(), gaussianLogP2, s, set)
			if err != nil {
				t.Fatal(err)
			}
			s.Kind = MCMCChains
			ch, err := Evidence(context.Background(), gaussianLogP2, s, set)
			if err != nil {
				t.Fatal(err)
			}
			lz, errE, errC = append(lz, ens.LogZ), append(errE, ens.LogZErr), append(errC, ch.LogZErr)
			zE, zC = append(zE, ens.LogZ/ens.LogZErr), append(zC, ch.LogZ/ch.LogZErr)
		}
		sd := func(x []float64) float64 {
			var m, v float64
			for _, a := range x {
				m += a / float64(len(x))
			}
			for _, a := range x {
				v += (a - m) * (a - m) / float64(len(x)-1)
			}
			return math.Sqrt(v)
		}
		mean := func(x []float64) float64 {
			m := 0.0
			for _, a := range x {
				m += a / float64(len(x))
			}
			return m
		}
		t.Logf("rho %.1f, %d seeds: sd(ln Z) %.5f; mean error bar as an ensemble %.5f (sd z %.2f), as chains %.5f (sd z %.2f)",
			rho, reps, sd(lz), mean(errE), sd(zE), mean(errC), sd(zC))
	}
}
