package pipeline_test

import (
	"context"
	"fmt"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/pipeline"
	"github.com/gbs-evidence/gbs/problems"
)

// Two modes with weights 0.2 and 0.8, and 7 of 8 chains started in the
// minor one: NUTS alone keeps those proportions; the flow's global moves
// set the weights right.
func ExampleNUTS_globalMoves() {
	p := problems.TwoModesN(4)
	grad := func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }
	init := make([][]float64, 8)
	for c := range init {
		init[c] = make([]float64, p.Dim)
		for j := range init[c] {
			init[c][j] = -4 // the minor mode
			if c == 7 {
				init[c][j] = 4
			}
		}
	}
	for _, mode := range []gbs.Switch{gbs.Off, gbs.On} {
		res, err := pipeline.NUTS(context.Background(), grad, p.Dim, &pipeline.Settings{
			Sampler: nuts.Settings{Chains: 8, Warmup: 200, Draws: 400, Init: init,
				Lower: p.Lower, Upper: p.Upper, Seed: 1},
			Global: pipeline.GlobalSettings{Mode: mode},
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		var minor, n int
		for c := range res.Sampling.Draws {
			for i := 0; i < len(res.Sampling.Draws[c])/p.Dim; i++ {
				if problems.TwoModesMinor(res.Sampling.Draw(c, i)) {
					minor++
				}
				n++
			}
		}
		fmt.Printf("global moves %v: minor-mode weight %.1f\n", mode, float64(minor)/float64(n))
	}
	// Output:
	// global moves off: minor-mode weight 0.9
	// global moves on: minor-mode weight 0.2
}
