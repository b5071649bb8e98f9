package problems

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkFunnelGrad is the cost of one log density and gradient of the
// 16-d funnel, the yardstick for the sampler's per-step overhead.
func BenchmarkFunnelGrad(b *testing.B) {
	p := Funnel()
	x := make([]float64, p.Dim)
	p.Sample(x, rand.New(rand.NewPCG(1, 1)))
	g := make([]float64, p.Dim)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.LogProbGrad(g, x)
	}
}
