package gbs_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/problems"
)

// unchangedCase is one evidence call on a paper problem whose ln Z, for a
// fixed seed, was recorded before the diagnostics existed: the checks read
// the draws and draw their own random numbers (spot-check) from a stream of
// their own, so they must not move the estimate.
type unchangedCase struct {
	name   string
	p      *problems.Problem
	chains int  // draws split into this many chains, with their log p given
	iid    bool // Samples.Independent
	want   float64
}

// The recorded values: main at 0d92627, which has no diagnostics (the
// estimator changes on main since f8b3b75 moved them; record again from
// main with GBS_PRINT_UNCHANGED=1 when the estimator itself changes). The
// funnel's were recorded again when the flow's scale layer became the
// default (the other problems' flows do not keep it): -63.4514 to
// -63.5007 and -63.4522 to -63.5000 (exact -63.4988).
var unchangedCases = []unchangedCase{
	{"funnel", problems.Funnel(), 1, true, -63.500713163274774},
	{"banana", problems.Banana(), 1, true, -127.22272174404482},
	{"cauchy", problems.Cauchy(), 1, true, -254.69678268110698},
	{"funnel-8chains-logp", problems.Funnel(), 8, false, -63.499993106465169},
}

// The NUTS pipeline on the ring (short chains): log p comes from the
// sampler, so the spot-check evaluates it again. Recorded again when
// covariance shrinkage came (flow/shrink.go): 4 chains of 600 draws leave
// each fit 960 training points in 64 dimensions, d²/(4n) = 1.07 nats, so
// shrinkage is tried, and the held-out points chose it; ln Z moved from
// -114.6126 to -114.5481 (exact -114.4918). The other cases (1600
// training points) keep the sample covariance and their values. Recorded
// again when the bridge's posterior-side tau became the larger of the
// chains' averaged tau and the chain-mean series' (issue 23): the error
// of the posterior side, and with it the adaptive n_q, grew, -114.5481 to
// -114.5421 (by 0.006; exact -114.4918).
const ringPipelineWant = -114.54206192959764

func TestEstimateUnchangedByDiagnostics(t *testing.T) {
	if testing.Short() {
		t.Skip("evidence on the paper's problems")
	}
	for _, tc := range unchangedCases {
		p := tc.p
		const n = 4000
		x := make([]float64, n*p.Dim)
		p.Sample(x, rand.New(rand.NewPCG(7, 0)))
		s := &gbs.Samples{Dim: p.Dim, Independent: tc.iid}
		m := n / tc.chains
		for c := 0; c < tc.chains; c++ {
			s.Chains = append(s.Chains, x[c*m*p.Dim:(c+1)*m*p.Dim])
			if tc.chains > 1 {
				lp := make([]float64, m)
				p.LogProbBatch(lp, s.Chains[c])
				s.LogP = append(s.LogP, lp)
			}
		}
		res, err := gbs.Evidence(context.Background(), p.LogProbBatch, s, &gbs.Settings{Seed: 11, Lower: p.Lower, Upper: p.Upper})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if os.Getenv("GBS_PRINT_UNCHANGED") != "" {
			t.Logf("%s: %.17g", tc.name, res.LogZ)
			continue
		}
		checkUnchanged(t, tc.name, res.LogZ, res.LogZErr, tc.want)
		// Exact draws of the reference problems: no false alarm.
		if len(res.Warnings) != 0 {
			t.Errorf("%s: warnings on exact draws: %q", tc.name, res.Warnings)
		}
	}
	p := problems.Ring()
	pr, err := gbs.Pipeline(context.Background(), func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }, p.Dim, &gbs.PipelineSettings{
		Sampler:  nuts.Settings{Chains: 4, Warmup: 300, Draws: 600, Seed: 5, Lower: p.Lower, Upper: p.Upper},
		Evidence: gbs.Settings{Seed: 5},
	})
	if err != nil {
		t.Fatalf("ring pipeline: %v", err)
	}
	if os.Getenv("GBS_PRINT_UNCHANGED") != "" {
		t.Logf("ring pipeline: %.17g", pr.Evidence.LogZ)
		return
	}
	// A drift of 7e-10 between runs was once seen here; it did not recur
	// (the same bits at GOMAXPROCS 1, 2 and 5 on a machine at load 30),
	// and it is within the root finder's tolerance that checkUnchanged
	// allows.
	checkUnchanged(t, "ring pipeline", pr.Evidence.LogZ, pr.Evidence.LogZErr, ringPipelineWant)
	t.Logf("ring pipeline (4 short chains): warnings %q", pr.Evidence.Warnings)
}

func checkUnchanged(t *testing.T, name string, got, sigma, want float64) {
	t.Helper()
	if fusesMultiplyAdd() {
		// The values were recorded where x*y + z rounds twice. Where the
		// compiler fuses it (arm64, amd64 at GOAMD64=v3) every flow fit
		// and NUTS trajectory rounds differently, and iterated fits and
		// chaotic trajectories carry that to other draws: only the
		// estimate's accuracy can be compared.
		if !(math.Abs(got-want) < 4*sigma) {
			t.Errorf("%s: ln Z = %.17g ± %.3g, recorded %.17g (fused multiply-add: compared within 4 sigma)", name, got, sigma, want)
		}
		return
	}
	// The same operations in the same order give the same bits (the
	// parallel sums are cut in parts fixed by the data, not by
	// GOMAXPROCS: TestEvidenceReproducible). Allowed: twice the bridge
	// root finder's stopping tolerance, 1e-11 relative (bridge.go root),
	// by which an input changed in its last bits can move the root it
	// returns. A change of draws or streams moves ln Z by about its error
	// bar, >= 1e-3: far above this.
	if d := math.Abs(got - want); !(d <= 2e-11*math.Max(1, math.Abs(want))) {
		t.Errorf("%s: ln Z = %.17g, recorded %.17g before the diagnostics (differs by %.3g)", name, got, want, d)
	}
}

// fusesMultiplyAdd reports whether this build computes x*y + z with one
// rounding: 1 - 2^-60 is x*y exactly, which rounds to 1 alone.
func fusesMultiplyAdd() bool {
	return mulAdd(1+0x1p-30, 1-0x1p-30, -1) != 0
}

//go:noinline
func mulAdd(x, y, z float64) float64 { return x*y + z }
