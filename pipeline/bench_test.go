package pipeline_test

import (
	"context"
	"testing"

	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/pipeline"
	"github.com/gbs-evidence/gbs/problems"
)

// BenchmarkNUTSESS reports the effective sample size of x_1 per gradient
// call of NUTS (8 chains, 500 + 2000 iterations, the pipeline's acceptance
// target) on the funnel and the ring.
func BenchmarkNUTSESS(b *testing.B) {
	for _, name := range []string{"funnel", "ring"} {
		b.Run(name, func(b *testing.B) {
			p, _ := problems.ByName(name)
			f := func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }
			for i := 0; i < b.N; i++ {
				r, err := nuts.Sample(context.Background(), f, p.Dim, &nuts.Settings{Chains: 8, Warmup: 500, Draws: 2000,
					Lower: p.Lower, Upper: p.Upper, Seed: uint64(i + 1), TargetAccept: pipeline.TargetAccept})
				if err != nil {
					b.Fatal(err)
				}
				ess, err := r.ESS(0)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(ess/float64(r.GradCalls), "ESS/grad")
				b.ReportMetric(float64(r.GradCalls), "grads")
			}
		})
	}
}
