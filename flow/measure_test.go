package flow

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMeasure reproduces the measurements quoted in the package
// documentation: fit time, layers, KL(p‖q) on fresh exact draws, gain over
// a fitted Gaussian and, with FLOW_GBS set, the bridge-sampling error of
// ln Z (10⁴ draws of p and of q). It is skipped unless FLOW_MEASURE is
// set; FLOW_REPS, FLOW_TARGET, FLOW_RANDOM (add random rotations),
// FLOW_DEEP (add MaxLayers 16), FLOW_SLICED (add sliced layers only,
// Conditional Off) and FLOW_BOUNDS (fit with the prior boxes as bounds)
// adjust it:
//
//	FLOW_MEASURE=1 FLOW_GBS=1 FLOW_REPS=5 go test -run TestMeasure -v ./flow/
func TestMeasure(t *testing.T) {
	if os.Getenv("FLOW_MEASURE") == "" {
		t.Skip("set FLOW_MEASURE=1 to run")
	}
	// ln Z of the test densities of targets_test.go: all normalized by the
	// exact ln Z of package problems.
	truth := map[string]float64{"funnel": 0, "banana": 0, "cauchy": 0}
	type cfg struct {
		name string
		s    Settings
	}
	cfgs := []cfg{{"default", Settings{}}}
	if os.Getenv("FLOW_DEEP") != "" {
		cfgs = append(cfgs, cfg{"max16", Settings{MaxLayers: 16}})
	}
	if os.Getenv("FLOW_SLICED") != "" {
		cfgs = append(cfgs, cfg{"sliced", Settings{Conditional: Off}})
	}
	if os.Getenv("FLOW_RANDOM") != "" {
		cfgs = append(cfgs, cfg{"random30", Settings{Rotation: RandomRotation, MaxLayers: 30}})
	}
	reps := 3
	if v := os.Getenv("FLOW_REPS"); v != "" {
		fmt.Sscan(v, &reps)
	}
	gbs := os.Getenv("FLOW_GBS") != ""
	for _, c := range cfgs {
		for _, tg := range []target{funnelTarget(16), bananaTarget(32, 1), cauchyTarget(48)} {
			if w := os.Getenv("FLOW_TARGET"); w != "" && !strings.Contains(w, strings.SplitN(tg.name, "-", 2)[0]) {
				continue
			}
			var tsum, klsum, sigsum, e2sum, lsum, gsum, esum float64
			for rep := 0; rep < reps; rep++ {
				rng := rand.New(rand.NewPCG(uint64(rep), 7))
				train := tg.sample(rng, 10000)
				test := tg.sample(rng, 5000)
				s := c.s
				s.Seed = uint64(rep)
				if os.Getenv("FLOW_BOUNDS") != "" {
					s.Lower, s.Upper = tg.lower, tg.upper
				}
				start := time.Now()
				f, err := Fit(train, tg.d, nil, &s)
				tsum += time.Since(start).Seconds()
				if err != nil {
					t.Fatal(err)
				}
				var ptrue float64
				for i := 0; i < 5000; i++ {
					ptrue += tg.logProb(test[i*tg.d:(i+1)*tg.d]) / 5000
				}
				ll := flowLogLik(f, test)
				klsum += ptrue - ll
				gsum += ll - gaussianLogLik(train, test, tg.d)
				lsum += float64(f.Layers())
				if gbs {
					lz, sig := gbsRun(tg, f, 10000, rng)
					sigsum += sig
					e2sum += (lz - truth[strings.SplitN(tg.name, "-", 2)[0]]) * (lz - truth[strings.SplitN(tg.name, "-", 2)[0]])
					esum += lz - truth[strings.SplitN(tg.name, "-", 2)[0]]
				}
			}
			r := float64(reps)
			t.Logf("%-10s %-7s time %.2fs layers %4.1f KL %6.3f gain/gauss %6.2f sigma %.4f rmserr %.4f meanerr %+.4f", c.name, tg.name, tsum/r, lsum/r, klsum/r, gsum/r, sigsum/r, math.Sqrt(e2sum/r), esum/r)
		}
	}
}
