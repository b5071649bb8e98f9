package flow

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// Benchmarks on exact draws of docs/problems.md-style targets. Run with
//
//	go test -bench . -run '^$' ./flow/ -benchtime=3x

func benchFit(b *testing.B, tg target, n int) {
	x := tg.sample(rand.New(rand.NewPCG(1, 2)), n)
	b.ResetTimer()
	var f *Flow
	for i := 0; i < b.N; i++ {
		var err error
		if f, err = Fit(x, tg.d, nil, &Settings{Seed: 3}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(f.Layers()), "layers")
}

// BenchmarkFit16 fits the 16-d funnel on 10⁴ points.
func BenchmarkFit16(b *testing.B) { benchFit(b, funnelTarget(16), 10000) }

// BenchmarkFit16Locked is BenchmarkFit16 called from a goroutine locked to
// its OS thread, as every call from C or Python is: it should cost the same.
func BenchmarkFit16Locked(b *testing.B) {
	x := funnelTarget(16).sample(rand.New(rand.NewPCG(1, 2)), 10000)
	b.ResetTimer()
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := 0; i < b.N && err == nil; i++ {
			_, err = Fit(x, 16, nil, &Settings{Seed: 3})
		}
	}()
	<-done
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFit64 fits a 64-d banana (32 rotated banana pairs) on 1.6·10⁴
// points.
func BenchmarkFit64(b *testing.B) { benchFit(b, bananaTarget(64, 1), 16000) }

// BenchmarkLogProb64 evaluates log q of a 64-d flow at 10⁴ points per op.
func BenchmarkLogProb64(b *testing.B) {
	tg := bananaTarget(64, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	f, err := Fit(tg.sample(rng, 16000), 64, nil, &Settings{Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	const n = 10000
	x := tg.sample(rng, n)
	dst := make([]float64, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.LogProb(dst, x)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(float64(f.Layers()), "layers")
}

// BenchmarkRadix compares the radix sort of the direction search with the
// standard library's sort.
func BenchmarkRadix(b *testing.B) {
	for _, m := range []int{1024, 2048, 4096, 8000} {
		keys := make([]uint64, m)
		buf := make([]uint64, m)
		src := make([]uint64, m)
		for i := range src {
			src[i] = rankKey(float32(rand.NormFloat64()), i)
		}
		b.Run(fmt.Sprintf("radix_%d", m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				copy(keys, src)
				radixSortRanks(keys, buf)
			}
		})
		b.Run(fmt.Sprintf("pdq_%d", m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				copy(keys, src)
				slices.Sort(keys)
			}
		})
	}
}

// BenchmarkSplineEval times one spline evaluation on repeated inputs.
func BenchmarkSplineEval(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	v := make([]float64, 12800)
	for i := range v {
		v[i] = rng.NormFloat64() + 0.3*rng.NormFloat64()*rng.NormFloat64()
	}
	md := newMarginalData(v, nil)
	sp := md.fit(marginalOptions{knots: 113, damping: 0.9, bandwidth: 1, tailPoints: 5})
	q := make([]float64, 256)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	b.ResetTimer()
	var s float64
	for i := 0; i < b.N; i++ {
		y, dy := sp.eval(q[i&255])
		s += y + dy
	}
	_ = s
	b.ReportMetric(float64(len(sp.x)), "knots")
}

// BenchmarkApplySplines times the column-wise evaluation of 64 splines on
// a chunk of rows, as in LogProb.
func BenchmarkApplySplines(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	k := 64
	psi := make([]spline, k)
	for c := range psi {
		v := make([]float64, 12800)
		for i := range v {
			v[i] = rng.NormFloat64() + 0.3*rng.NormFloat64()*rng.NormFloat64()
		}
		md := newMarginalData(v, nil)
		psi[c] = md.fit(marginalOptions{knots: 113, damping: 0.9, bandwidth: 1, tailPoints: 5})
	}
	r := 256
	p := make([]float64, r*k)
	p0 := make([]float64, r*k)
	for i := range p0 {
		p0[i] = rng.NormFloat64()
	}
	ld := make([]float64, r)
	s := newScratch(64, k)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(p, p0)
		applySplines(p, ld, r, k, nil, psi, false, true, s)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*r*k), "ns/eval")
}
