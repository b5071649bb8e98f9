package nuts

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

func funnelSettings(threads int) *Settings {
	return &Settings{Chains: 4, Warmup: 300, Draws: 300, Seed: 77, Threads: threads, Lower: funnelLower(), Upper: funnelUpper()}
}

// The same seed gives bit-identical draws whatever Threads and GOMAXPROCS.
func TestDeterministicAcrossThreads(t *testing.T) {
	run := func(threads, procs int) *Result {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		r, err := Sample(context.Background(), funnel, funnelDim, funnelSettings(threads))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ref := run(1, 1)
	for _, tc := range []struct{ threads, procs int }{{2, 1}, {1, 2}, {2, 2}, {0, 2}, {4, 2}} {
		r := run(tc.threads, tc.procs)
		if r.GradCalls != ref.GradCalls {
			t.Errorf("Threads=%d GOMAXPROCS=%d: %d gradient calls, want %d", tc.threads, tc.procs, r.GradCalls, ref.GradCalls)
		}
		for c := range ref.Draws {
			for i, v := range ref.Draws[c] {
				if r.Draws[c][i] != v {
					t.Fatalf("Threads=%d GOMAXPROCS=%d: chain %d differs at %d", tc.threads, tc.procs, c, i)
				}
			}
		}
	}
	// A different seed must give different draws.
	s := funnelSettings(2)
	s.Seed++
	r, err := Sample(context.Background(), funnel, funnelDim, s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Draws[0][0] == ref.Draws[0][0] {
		t.Error("different seeds gave the same first draw")
	}
	// Chains must differ from each other.
	if ref.Draws[0][5] == ref.Draws[1][5] {
		t.Error("chains 0 and 1 coincide")
	}
}

func stdNormal(grad, x []float64) (float64, error) {
	var lp float64
	for i, v := range x {
		grad[i] = -v
		lp -= 0.5 * v * v
	}
	return lp, nil
}

var errBoom = errors.New("boom")

// An error from the density aborts sampling and comes back wrapped with
// the chain index.
func TestCallbackError(t *testing.T) {
	var calls atomic.Int64
	f := func(grad, x []float64) (float64, error) {
		if calls.Add(1) == 500 {
			return 0, errBoom
		}
		return stdNormal(grad, x)
	}
	for _, threads := range []int{1, 2} {
		calls.Store(0)
		r, err := Sample(context.Background(), f, 3, &Settings{Seed: 1, Threads: threads})
		if r != nil || !errors.Is(err, errBoom) {
			t.Fatalf("Threads=%d: got (%v, %v), want errBoom", threads, r, err)
		}
		if !strings.Contains(err.Error(), "chain ") {
			t.Errorf("error %q does not name the chain", err)
		}
		// The other chains stop promptly instead of running to the end
		// (4 chains × 2000 iterations would be tens of thousands of calls).
		if n := calls.Load(); n > 5000 {
			t.Errorf("Threads=%d: %d calls after the error", threads, n)
		}
	}
}

// Cancelling the context stops every chain within a few leapfrog steps and
// Sample returns ctx.Err().
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls, after atomic.Int64
	const cancelAt = 3000
	f := func(grad, x []float64) (float64, error) {
		n := calls.Add(1)
		if n == cancelAt {
			cancel()
		}
		if n > cancelAt {
			after.Add(1)
		}
		return stdNormal(grad, x)
	}
	r, err := Sample(ctx, f, 5, &Settings{Seed: 1, Threads: 2, Chains: 4})
	if r != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got (%v, %v), want context.Canceled", r, err)
	}
	// Each running goroutine may finish its current batch of steps.
	if n := after.Load(); n > 2*(cancelCheckEvery+2) {
		t.Errorf("%d gradient calls after cancellation", n)
	}

	// An already cancelled context returns at once.
	calls.Store(0)
	if _, err := Sample(ctx, f, 5, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("pre-cancelled: %v", err)
	}
	if calls.Load() != 0 {
		t.Errorf("pre-cancelled context still evaluated the density")
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	negInf := func(grad, x []float64) (float64, error) { return math.Inf(-1), nil }
	for _, tc := range []struct {
		name string
		f    LogDensityGrad
		d    int
		s    *Settings
		want string
	}{
		{"d=0", stdNormal, 0, nil, "d = 0"},
		{"d<0", stdNormal, -3, nil, "d = -3"},
		{"nil f", nil, 2, nil, "nil log density"},
		{"Init length", stdNormal, 2, &Settings{Chains: 2, Init: [][]float64{{0, 0}, {0}}}, "Init[1] has length 1"},
		{"Init count", stdNormal, 2, &Settings{Chains: 2, Init: [][]float64{{0, 0}}}, "1 starting points in Init for 2 chains"},
		{"Init NaN", stdNormal, 2, &Settings{Chains: 1, Init: [][]float64{{0, math.NaN()}}}, "not finite"},
		{"all -Inf", negInf, 2, &Settings{Chains: 2}, "no starting point with finite log p"},
		{"Init at -Inf", negInf, 2, &Settings{Chains: 1, Init: [][]float64{{1, 1}}}, "at the given starting point"},
		{"TargetAccept", stdNormal, 2, &Settings{TargetAccept: 1}, "TargetAccept"},
		{"MaxDepth", stdNormal, 2, &Settings{MaxDepth: 31}, "MaxDepth"},
		{"StepSize", stdNormal, 2, &Settings{StepSize: math.NaN()}, "StepSize"},
		{"Metric", stdNormal, 2, &Settings{Metric: Metric(9)}, "unknown metric"},
		{"Lower length", stdNormal, 2, &Settings{Lower: []float64{0}}, "Lower has length 1"},
		{"empty box", stdNormal, 2, &Settings{Lower: []float64{0, 1}, Upper: []float64{1, 1}}, "empty box along coordinate 1"},
		{"Chains<0", stdNormal, 2, &Settings{Chains: -1}, "Chains"},
	} {
		r, err := Sample(ctx, tc.f, tc.d, tc.s)
		if err == nil || r != nil {
			t.Errorf("%s: got (%v, %v), want an error", tc.name, r, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

// An improper target (log p increasing without bound) makes the step-size
// heuristic fail with a clear error instead of looping or returning junk.
func TestImproperTarget(t *testing.T) {
	f := func(grad, x []float64) (float64, error) {
		for i := range grad {
			grad[i] = 1
		}
		return x[0] + x[1], nil
	}
	_, err := Sample(context.Background(), f, 2, &Settings{Chains: 1})
	if err == nil || !strings.Contains(err.Error(), "improper") {
		t.Errorf("got %v, want an improper-target error", err)
	}
}

// Without warmup a given step size is used unchanged, the metric stays the
// identity, and Init is honoured.
func TestNoWarmup(t *testing.T) {
	init := [][]float64{{3, 3}}
	r, err := Sample(context.Background(), stdNormal, 2, &Settings{Chains: 1, Warmup: -1, Draws: 10, StepSize: 0.25, Init: init, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	st := r.Chains[0]
	if st.StepSize != 0.25 || st.InvMetric[0] != 1 || st.InvMetric[1] != 1 {
		t.Errorf("step size %v, inverse metric %v", st.StepSize, st.InvMetric)
	}
	if init[0][0] != 3 {
		t.Error("Init was modified")
	}
}
