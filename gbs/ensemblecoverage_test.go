package gbs_test

import (
	"context"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gbs-evidence/gbs/ensemble"
	"github.com/gbs-evidence/gbs/gbs"
)

// TestMeasureEnsembleBanana is issue 23's emcee study with this module's
// stretch-move ensemble (the algorithm of emcee, other random streams):
// the banana x ~ N(0, 3²), y | x ~ N(x², 1) (ln Z = ln 6π), 32 walkers
// from a ball of radius 0.01 at the mode, runs of the longest of
// GBS_STEPS steps (default 20000,60000) seeded 0, 1, ...; for each length
// S its first S steps, discard S/5, every GBS_THIN-th step (default 10),
// marked as an ensemble like an emcee sampler. It logs each run's z-score,
// error bar, summands' tau and warnings, and per length the sd of z and
// the largest |z| with and without the walkers' warning. Skipped unless
// GBS_MEASURE is set; GBS_REPS sets the runs (default 32). GBS_DIM=3
// adds a third coordinate w ~ N(0, 1) independent of the banana (ln Z
// = ln 6π + ½ ln 2π), bench/emcee_coverage.py's banana3; GBS_CHAINS=1
// also reads each run's draws as MCMC chains, whose error bar is the
// ensemble's without its walkers' term (ensembleerror.go), and logs
// that z too:
//
//	GBS_MEASURE=1 GBS_REPS=32 go test -run TestMeasureEnsembleBanana -v -timeout 2h ./gbs/
//	GBS_MEASURE=1 GBS_REPS=12 GBS_DIM=3 GBS_STEPS=80000 GBS_CHAINS=1 go test -run TestMeasureEnsembleBanana -v -timeout 2h ./gbs/
func TestMeasureEnsembleBanana(t *testing.T) {
	skipUnlessMeasuring(t)
	runs, thin := envInt("GBS_REPS", 32), envInt("GBS_THIN", 10)
	steps := []int{20000, 60000}
	if v := os.Getenv("GBS_STEPS"); v != "" {
		steps = steps[:0]
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			steps = append(steps, n)
		}
	}
	longest := steps[len(steps)-1]
	exact := math.Log(6 * math.Pi)
	d, logp := 2, bananaLogP
	if envInt("GBS_DIM", 2) == 3 {
		d, logp = 3, banana3LogP
		exact += 0.5 * math.Log(2*math.Pi)
	}
	chains := os.Getenv("GBS_CHAINS") != ""
	type row struct {
		z, tau float64
		warned bool
	}
	rows := map[int][]row{}
	for r := range runs {
		res, err := ensemble.Sample(context.Background(), logp, d, &ensemble.Settings{Walkers: 32, Steps: longest,
			Burn: 1, Thin: 1, InitCenter: make([]float64, d), InitScale: 0.01, Seed: uint64(r)})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range steps {
			// res.Chain holds steps 1, 2, ... (Burn 1 drops the start).
			s := &gbs.Samples{Dim: d, Kind: gbs.EnsembleWalkers}
			for w := range res.Chain {
				var ch, lp []float64
				for i := n/5 - 1; i < n-1; i += thin {
					ch = append(ch, res.Chain[w][d*i:d*i+d]...)
					lp = append(lp, res.LogP[w][i])
				}
				s.Chains, s.LogP = append(s.Chains, ch), append(s.LogP, lp)
			}
			ev, err := gbs.Evidence(context.Background(), logp, s, &gbs.Settings{Seed: uint64(r)})
			if err != nil {
				t.Fatal(err)
			}
			warned := ev.Warns(gbs.CheckShortChains) || ev.Warns(gbs.CheckEnsembleWalkers)
			z := (ev.LogZ - exact) / ev.LogZErr
			rows[n] = append(rows[n], row{z, ev.Tau, warned})
			t.Logf("run %d steps %d: z %+.2f sigma %.4f tau %.1f warnings %q", r, n, z, ev.LogZErr, ev.Tau, ev.Warnings())
			if chains {
				s.Kind = gbs.MCMCChains
				ch, err := gbs.Evidence(context.Background(), logp, s, &gbs.Settings{Seed: uint64(r)})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("run %d steps %d as chains: z %+.2f sigma %.4f", r, n, (ch.LogZ-exact)/ch.LogZErr, ch.LogZErr)
			}
		}
	}
	for _, n := range steps {
		var zs, taus []float64
		maxW, maxU, nw := 0.0, 0.0, 0
		for _, r := range rows[n] {
			zs, taus = append(zs, r.z), append(taus, r.tau)
			if r.warned {
				nw++
				maxW = math.Max(maxW, math.Abs(r.z))
			} else {
				maxU = math.Max(maxU, math.Abs(r.z))
			}
		}
		var m, v float64
		for _, z := range zs {
			m += z / float64(len(zs))
		}
		in1, in2 := 0, 0
		for _, z := range zs {
			v += (z - m) * (z - m) / float64(len(zs)-1)
			if math.Abs(z) < 1 {
				in1++
			}
			if math.Abs(z) < 2 {
				in2++
			}
		}
		sort.Float64s(taus)
		t.Logf("| %d | %d | %.2f | %+.2f | %d %% | %d %% | %.1f | %.1f | %d | %.0f (%.0f-%.0f) |", n, len(zs), math.Sqrt(v), m,
			100*in1/len(zs), 100*in2/len(zs), maxU, maxW, nw, taus[len(taus)/2], taus[0], taus[len(taus)-1])
	}
}

func banana3LogP(dst, x []float64) error {
	for i := range dst {
		a, b, w := x[3*i], x[3*i+1], x[3*i+2]
		dst[i] = -a*a/18 - 0.5*(b-a*a)*(b-a*a) - 0.5*w*w
	}
	return nil
}

func bananaLogP(dst, x []float64) error {
	for i := range dst {
		a, b := x[2*i], x[2*i+1]
		dst[i] = -a*a/18 - 0.5*(b-a*a)*(b-a*a)
	}
	return nil
}

// skipUnlessMeasuring skips a measurement study (minutes to hours of CPU,
// numbers for docs/benchmarks.md, no assertion) unless GBS_MEASURE is set.
func skipUnlessMeasuring(t *testing.T) {
	t.Helper()
	if os.Getenv("GBS_MEASURE") == "" {
		t.Skip("set GBS_MEASURE=1 to run")
	}
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n > 0 {
		return n
	}
	return def
}
