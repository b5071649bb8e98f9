package nuts

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// perPoint evaluates a per-point density over a batch, point by point: the
// batched form that gives each point exactly the per-point values.
func perPoint(f LogDensityGrad, d int) BatchLogDensityGrad {
	return func(lp, grad, x []float64) error {
		for i := range lp {
			v, err := f(grad[i*d:(i+1)*d], x[i*d:(i+1)*d])
			if err != nil {
				return err
			}
			lp[i] = v
		}
		return nil
	}
}

// SampleBatch must give Sample's draws, log p and statistics bit for bit:
// each chain's computation depends only on its own stream and the values
// of the density, which the batch does not change.
func TestSampleBatchEqualsSample(t *testing.T) {
	const d = 5
	prec := make([]float64, d*d)
	for i := range d {
		for j := range d {
			prec[i*d+j] = 0.3 * math.Pow(0.5, math.Abs(float64(i-j)))
		}
		prec[i*d+i] += 1 + float64(i)
	}
	corr := &gaussian{d: d, mu: []float64{1, -1, 0, 2, 0.5}, prec: prec}
	// A target on the positive orthant: the box transform wraps the
	// batched density per chain, Jacobian and all.
	pos := func(grad, x []float64) (float64, error) {
		var lp float64
		for i, v := range x {
			if v <= 0 {
				return math.Inf(-1), nil
			}
			lp += math.Log(v) - v
			grad[i] = 1/v - 1
		}
		return lp, nil
	}
	lower := make([]float64, d)
	for _, tc := range []struct {
		name string
		f    LogDensityGrad
		s    Settings
	}{
		{"diag", corr.logp, Settings{Chains: 6, Warmup: 150, Draws: 100, Seed: 3}},
		{"dense, uneven trees", corr.logp, Settings{Chains: 3, Warmup: 200, Draws: 50, Metric: DenseMetric, MaxDepth: 4, Seed: 4}},
		{"box", pos, Settings{Chains: 4, Warmup: 100, Draws: 80, Lower: lower, Seed: 5}},
		{"no warmup", corr.logp, Settings{Chains: 2, Warmup: -1, Draws: 60, StepSize: 0.3, Seed: 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := Sample(context.Background(), tc.f, d, &tc.s)
			if err != nil {
				t.Fatal(err)
			}
			var calls int
			counted := func(lp, grad, x []float64) error {
				calls++
				if len(lp) == 0 || len(lp) > tc.s.Chains || len(grad) != d*len(lp) || len(x) != d*len(lp) {
					t.Errorf("batch of %d points with %d, %d values", len(lp), len(grad), len(x))
				}
				return perPoint(tc.f, d)(lp, grad, x)
			}
			got, err := SampleBatch(context.Background(), counted, d, &tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Draws, want.Draws) || !reflect.DeepEqual(got.LogP, want.LogP) {
				t.Fatal("batched draws differ from the per-point draws")
			}
			if !reflect.DeepEqual(got.Chains, want.Chains) || got.GradCalls != want.GradCalls {
				t.Errorf("batched statistics differ: %+v\nwant %+v", got.Chains, want.Chains)
			}
			var most int64
			for _, c := range got.Chains {
				most = max(most, c.GradCalls)
			}
			if got.Batches != most || int64(calls) != most {
				t.Errorf("%d batches (%d calls counted), want the largest chain's %d gradient calls", got.Batches, calls, most)
			}
			t.Logf("%d points in %d batches", got.GradCalls, got.Batches)
		})
	}
}

// An error of the batched density aborts all chains and reaches the
// caller; cancellation returns the context's error. Neither deadlocks the
// chains waiting at the barrier.
func TestSampleBatchErrors(t *testing.T) {
	g := &gaussian{d: 2, mu: []float64{0, 0}, prec: []float64{1, 1}}
	boom := errors.New("boom")
	var calls int
	failing := func(lp, grad, x []float64) error {
		calls++
		if calls == 40 {
			return boom
		}
		return perPoint(g.logp, 2)(lp, grad, x)
	}
	_, err := SampleBatch(context.Background(), failing, 2, &Settings{Chains: 4, Seed: 1})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "batch of 4 chains") {
		t.Errorf("failing batch: %v, want boom from a batch of 4 chains", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	canceling := func(lp, grad, x []float64) error {
		calls++
		if calls == 100 {
			cancel()
		}
		return perPoint(g.logp, 2)(lp, grad, x)
	}
	if _, err := SampleBatch(ctx, canceling, 2, &Settings{Chains: 3, Seed: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	if _, err := SampleBatch(context.Background(), nil, 2, nil); err == nil {
		t.Error("nil batch density accepted")
	}
	if _, err := SampleBatch(context.Background(), perPoint(g.logp, 2), 2, &Settings{Chains: -1}); err == nil || !strings.Contains(err.Error(), "Chains") {
		t.Errorf("bad settings: %v", err)
	}
}
