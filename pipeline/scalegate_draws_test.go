package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/problems"
)

// TestScaleGateDraws writes the point sets the pipeline fits its flows on,
// for flow's TestScaleGateMeasure (the scale layer's gate), not run by
// default:
//
//	GBS_GATE_DRAWS=dir go test ./pipeline -run TestScaleGateDraws -v -timeout 3h
//	FLOW_MEASURE_GATE=1 FLOW_GATE_DRAWS=dir go test ./flow -run TestScaleGateMeasure -v
//
// For GBS_GATE_SEEDS seeds (default 64, from GBS_GATE_SEED, default 930000)
// it runs the pipeline on each of GBS_GATE_PROBLEMS (default funnel) at the
// benchmark's budget (8 chains, 500 warm-up and 2000 kept iterations, as
// cmd/gbs-bench) and writes the pooled draws of every fit of the global
// moves' flow (<problem>-global-<k>, k counting the fits of the run, a
// retry's included) and the two halves the evidence's passes fit their
// flows on (<problem>-evidence-<pass>).
func TestScaleGateDraws(t *testing.T) {
	dir := os.Getenv("GBS_GATE_DRAWS")
	if dir == "" {
		t.Skip("set GBS_GATE_DRAWS=dir to write the pipeline's funnel draws")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	seeds, first := 64, uint64(930000)
	if v := os.Getenv("GBS_GATE_SEEDS"); v != "" {
		seeds, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("GBS_GATE_SEED"); v != "" {
		first, _ = strconv.ParseUint(v, 10, 64)
	}
	names := []string{"funnel"}
	if v := os.Getenv("GBS_GATE_PROBLEMS"); v != "" {
		names = strings.Split(v, ",")
	}
	for _, name := range names {
		p, err := problems.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		gateDraws(t, p, dir, first, seeds)
	}
}

// gateDraws writes the point sets of seeds runs of the pipeline on p.
func gateDraws(t *testing.T, p *problems.Problem, dir string, first uint64, seeds int) {
	grad := func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }
	for r := 0; r < seeds; r++ {
		seed := first + uint64(r)
		set := nuts.Settings{Chains: 8, Warmup: 500, Draws: 2000, Lower: p.Lower, Upper: p.Upper, Seed: seed}
		s, _, err := WithGlobalMoves(set, GlobalSettings{}, p.Dim)
		if err != nil {
			t.Fatal(err)
		}
		fits := 0
		fit := s.Global.Fit
		s.Global.Fit = func(stage int, x, lp [][]float64) (nuts.GlobalMove, error) {
			var pooled []float64
			for _, c := range x {
				pooled = append(pooled, c...)
			}
			fits++
			writeF64(t, filepath.Join(dir, fmt.Sprintf("%s-global-%d-%d.f64", p.Name, fits, seed)), pooled, p.Dim)
			return fit(stage, x, lp)
		}
		pr, err := NUTS(context.Background(), grad, p.Dim, &Settings{Sampler: s})
		if err != nil {
			t.Fatal(err)
		}
		// The evidence's halves: the first half of the chains, then the
		// rest (gbs splits several chains so).
		var first, use []float64
		k := len(pr.Sampling.Draws) / 2
		for c, ch := range pr.Sampling.Draws {
			if c < k {
				first = append(first, ch...)
			} else {
				use = append(use, ch...)
			}
		}
		writeF64(t, filepath.Join(dir, fmt.Sprintf("%s-evidence-1-%d.f64", p.Name, seed)), first, p.Dim)
		writeF64(t, filepath.Join(dir, fmt.Sprintf("%s-evidence-2-%d.f64", p.Name, seed)), use, p.Dim)
		t.Logf("seed %d: %d global fits, ln Z %.4f ± %.4f (exact %.4f), retried %v", seed, fits, pr.Evidence.LogZ, pr.Evidence.LogZErr, p.LogZ, pr.Retried)
	}
}

// writeF64 writes a point set: d as a little-endian int64, then the points.
func writeF64(t *testing.T, name string, x []float64, d int) {
	b := make([]byte, 8+8*len(x))
	binary.LittleEndian.PutUint64(b, uint64(d))
	for i, v := range x {
		binary.LittleEndian.PutUint64(b[8+8*i:], math.Float64bits(v))
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
