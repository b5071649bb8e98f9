package nuts

import (
	"context"
	"slices"
	"testing"

	"github.com/gbs-evidence/gbs/problems"
)

// The 16-d funnel of docs/problems.md (problems.Funnel): x1 ~ N(0, 1) on
// (-4, 4) and x_i | x1 ~ N(0, sd = exp(x1)) on (-30, 30) for i ≥ 2.
var funnelProblem = problems.Funnel()

const funnelDim = 16

func funnel(grad, x []float64) (float64, error) { return funnelProblem.LogProbGrad(grad, x), nil }

func funnelLower() []float64 { return slices.Clone(funnelProblem.Lower) }

func funnelUpper() []float64 { return slices.Clone(funnelProblem.Upper) }

// BenchmarkLeapfrogOverhead measures the sampler's own cost per gradient
// call (leapfrog arithmetic, tree bookkeeping, adaptation) on a 16-d
// standard normal, whose gradient costs a few nanoseconds.
func BenchmarkLeapfrogOverhead(b *testing.B) {
	const d = 16
	var calls int64
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, err := Sample(context.Background(), stdNormal, d, &Settings{Chains: 1, Warmup: 200, Draws: 1000, Seed: uint64(i), Threads: 1})
		if err != nil {
			b.Fatal(err)
		}
		calls += r.GradCalls
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/grad")
	b.ReportMetric(float64(calls)/float64(b.N), "grads/op")
}

// BenchmarkNUTS runs one chain (500 warmup, 500 draws) on the 16-d funnel,
// in the box's unconstrained coordinates (the default) and directly in x.
// The funnel's gradient costs about as much as the transform, so this
// shows the transform's overhead at its largest.
func BenchmarkNUTS(b *testing.B) {
	for _, mode := range []BoxMode{BoxTransform, BoxStartOnly} {
		b.Run(mode.String(), func(b *testing.B) {
			var calls int64
			var div int
			for i := 0; i < b.N; i++ {
				r, err := Sample(context.Background(), funnel, funnelDim, &Settings{
					Chains: 1, Warmup: 500, Draws: 500, Seed: uint64(i), Threads: 1,
					Lower: funnelLower(), Upper: funnelUpper(), Box: mode,
				})
				if err != nil {
					b.Fatal(err)
				}
				calls += r.GradCalls
				div += r.Divergences()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/grad")
			b.ReportMetric(float64(calls)/float64(b.N), "grads/op")
			b.ReportMetric(float64(div)/float64(b.N), "divergences/op")
		})
	}
}

// BenchmarkBoxTransform is the cost of one evaluation of the transformed
// density minus nothing: x(u), the Jacobian and the chain rule around a
// 64-d standard normal, per coordinate.
func BenchmarkBoxTransform(b *testing.B) {
	const d = 64
	lo, hi := make([]float64, d), make([]float64, d)
	u := make([]float64, d)
	for j := range lo {
		lo[j], hi[j] = -5, 5
		u[j] = 0.3 * float64(j%7-3)
	}
	f, _ := newBoxMap(lo, hi, d).wrap(stdNormal, d)
	grad := make([]float64, d)
	for i := 0; i < b.N; i++ {
		if _, err := f(grad, u); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*d), "ns/coord")
}
