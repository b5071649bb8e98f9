package gbs

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/problems"
)

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDiagnosticsCost measures the share of an evidence call that the
// diagnostics (spot-check and diagnose) take, on NUTS draws of the funnel
// and the ring at the paper's budget (8 chains, 500 + 2000 iterations;
// sampling is outside the timer). Metrics: the CPU time of the
// diagnostics over that of the whole call, in per cent (diag-cpu-%), and
// the same in wall time (diag-wall-%).
//
//	go test ./gbs -run '^$' -bench DiagnosticsCost -benchtime 3x
func BenchmarkDiagnosticsCost(b *testing.B) {
	for _, p := range []*problems.Problem{problems.Funnel(), problems.Ring()} {
		draws, err := nuts.Sample(context.Background(), func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }, p.Dim,
			&nuts.Settings{Chains: 8, Warmup: 500, Draws: 2000, Seed: 1, Lower: p.Lower, Upper: p.Upper, TargetAccept: 0.9})
		if err != nil {
			b.Fatal(err)
		}
		s := &Samples{Dim: p.Dim, Chains: draws.Draws, LogP: draws.LogP, NCall: draws.GradCalls}
		b.Run(p.Name, func(b *testing.B) {
			var diagCPU, allCPU, diagWall, allWall time.Duration
			for i := 0; i < b.N; i++ {
				c0, w0 := cpuTime(), time.Now()
				e, err := newEstimation(context.Background(), p.LogProbBatch, s, &Settings{Seed: uint64(i + 1), Lower: p.Lower, Upper: p.Upper})
				if err != nil {
					b.Fatal(err)
				}
				c1, w1 := cpuTime(), time.Now()
				if err := e.spotCheck(); err != nil {
					b.Fatal(err)
				}
				c2, w2 := cpuTime(), time.Now()
				if err := e.estimate(); err != nil {
					b.Fatal(err)
				}
				c3, w3 := cpuTime(), time.Now()
				e.diagnose()
				c4, w4 := cpuTime(), time.Now()
				diagCPU += (c2 - c1) + (c4 - c3)
				diagWall += w2.Sub(w1) + w4.Sub(w3)
				allCPU += c4 - c0
				allWall += w4.Sub(w0)
			}
			b.ReportMetric(100*float64(diagCPU)/float64(allCPU), "diag-cpu-%")
			b.ReportMetric(100*float64(diagWall)/float64(allWall), "diag-wall-%")
			b.ReportMetric(diagCPU.Seconds()/float64(b.N), "diag-cpu-s/op")
		})
	}
}
