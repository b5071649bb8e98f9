package nuts

import (
	"context"
	"math"
	"testing"
)

// The 16-d funnel of PROBLEMS.md: x1 ~ N(0, 1) on (-4, 4) and x_i | x1 ~
// N(0, sd = exp(x1)) on (-30, 30) for i ≥ 2 (unnormalized box prior).
const funnelDim = 16

func funnel(grad, x []float64) (float64, error) {
	x1 := x[0]
	if x1 <= -4 || x1 >= 4 {
		return math.Inf(-1), nil
	}
	inv := math.Exp(-2 * x1)
	lp := -0.5 * x1 * x1
	g1 := -x1
	for i := 1; i < len(x); i++ {
		v := x[i]
		if v <= -30 || v >= 30 {
			return math.Inf(-1), nil
		}
		lp -= 0.5*v*v*inv + x1
		g1 += v*v*inv - 1
		grad[i] = -v * inv
	}
	grad[0] = g1
	return lp, nil
}

func funnelLower() []float64 {
	l := make([]float64, funnelDim)
	for i := range l {
		l[i] = -30
	}
	l[0] = -4
	return l
}

func funnelUpper() []float64 {
	u := make([]float64, funnelDim)
	for i := range u {
		u[i] = 30
	}
	u[0] = 4
	return u
}

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

// BenchmarkNUTS runs one chain (500 warmup, 500 draws) on the 16-d funnel.
func BenchmarkNUTS(b *testing.B) {
	var calls int64
	var div int
	for i := 0; i < b.N; i++ {
		r, err := Sample(context.Background(), funnel, funnelDim, &Settings{
			Chains: 1, Warmup: 500, Draws: 500, Seed: uint64(i), Threads: 1,
			Lower: funnelLower(), Upper: funnelUpper(),
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
}
