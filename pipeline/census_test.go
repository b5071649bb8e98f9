package pipeline_test

import (
	"context"
	"math"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/pipeline"
	"github.com/gbs-evidence/gbs/problems"
)

// A mode no chain visited: every chain starts in the (5, 5, 5) mode of
// two equal unit Gaussians at ±(5, 5, 5) in the box (-10, 10)^3. The
// evidence's census finds the other; the pipeline starts chains there
// and its global moves set the weights, so ln Z is right. Exact ln Z is
// 3 ln Φ(5), the mass each component keeps in the box (the Φ(-15) side
// is below 10^-50).
func TestPipelineFindsMissedMode(t *testing.T) {
	if testing.Short() {
		t.Skip("two NUTS runs")
	}
	const d = 3
	mix := problems.GaussianMixture(d, []float64{0.5, 0.5},
		[][]float64{{5, 5, 5}, {-5, -5, -5}}, []float64{1, 1}, 0)
	grad := func(g, x []float64) (float64, error) {
		for _, v := range x {
			if !(v > -10 && v < 10) {
				clear(g)
				return math.Inf(-1), nil
			}
		}
		return mix.LogProbGrad(g, x), nil
	}
	logZ := 3 * math.Log(0.5*math.Erfc(-5/math.Sqrt2))
	lo, hi := []float64{-10, -10, -10}, []float64{10, 10, 10}
	init := make([][]float64, 8)
	for c := range init {
		init[c] = []float64{5, 5, 5}
	}
	res, err := pipeline.NUTS(context.Background(), grad, d, &pipeline.Settings{
		Sampler: nuts.Settings{Chains: 8, Lower: lo, Upper: hi, Seed: 3900, Init: init}})
	if err != nil {
		t.Fatal(err)
	}
	ev := res.Evidence
	z := (ev.LogZ - logZ) / ev.LogZErr
	t.Logf("ln Z = %.4f ± %.4f, exact %.6f (%+.2f σ), restarted %v, findings %v", ev.LogZ, ev.LogZErr, logZ, z, res.Restarted, ev.Findings)
	if !res.Restarted || len(ev.Found(gbs.CheckRerun)) == 0 {
		t.Errorf("no restart from the missed mode")
	}
	if !(math.Abs(z) < 3 && ev.LogZErr < 0.05) {
		t.Errorf("ln Z = %.4f ± %.4f, exact %.6f", ev.LogZ, ev.LogZErr, logZ)
	}
	if len(ev.Found(gbs.CheckMissedMode)) > 0 || len(ev.Warnings()) > 0 {
		t.Errorf("warnings after the restart: %v", ev.Findings)
	}
}
