package pipeline_test

import (
	"context"
	"os"
	"testing"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/internal/numtest"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/pipeline"
	"github.com/gbs-evidence/gbs/problems"
)

// The NUTS pipeline on the ring (short chains), for a fixed seed: log p
// comes from the sampler, so the spot-check evaluates it again; the checks
// must not move the estimate. When the estimator itself changes, record
// the value again with GBS_PRINT_UNCHANGED=1.
const ringPipelineWant = -114.49268340237168

func TestRingPipelineUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("the pipeline on the ring")
	}
	p := problems.Ring()
	pr, err := pipeline.NUTS(context.Background(), func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }, p.Dim, &pipeline.Settings{
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
	numtest.CheckUnchanged(t, "ring pipeline", pr.Evidence.LogZ, pr.Evidence.LogZErr, ringPipelineWant)
	t.Logf("ring pipeline (4 short chains): warnings %q", pr.Evidence.Warnings())
}
