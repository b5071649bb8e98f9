package flow

import (
	"fmt"

	"github.com/gbs-evidence/gbs/internal/memlimit"
)

// Values held per spline knot: x, y and the derivative, the derived bin
// width, height, slope and inverse width, the two bin lookups (four cells
// per bin, a float64 and a uint16 each) and slack for the fit's scratch.
const valuesPerKnot = 20

// checkFitMemory refuses settings whose buffers cannot fit in memory,
// before Fit allocates them: each direction's spline is built from Knots
// quantile levels, and a flow of Layers (or at most MaxLayers) layers
// keeps a d×K frame and K splines per layer, each with at most one knot
// per training point plus the tail knots.
func checkFitMemory(r *resolved, n, d int) error {
	k := r.Directions
	knots := r.knotsFor(n)
	what := fmt.Sprintf("Knots = %d knots in each of %d directions", knots, k)
	if err := memlimit.Check(what, 8, k, knots+64, valuesPerKnot); err != nil {
		return fmt.Errorf("flow: %w", err)
	}
	layers, name := r.MaxLayers, "MaxLayers"
	if r.Layers > 0 {
		layers, name = r.Layers, "Layers"
	}
	kept := min(knots, n) + 64
	what = fmt.Sprintf("%s = %d layers of %d directions (up to %d knots each, dimension %d)", name, layers, k, kept, d)
	perLayer, ok := memlimit.Bytes(8, k, d+kept*valuesPerKnot)
	if !ok {
		return fmt.Errorf("flow: %w", &memlimit.Error{What: what, Overflow: true})
	}
	if err := memlimit.Check(what, int(min(perLayer, 1<<62)), layers); err != nil {
		return fmt.Errorf("flow: %w", err)
	}
	return nil
}
