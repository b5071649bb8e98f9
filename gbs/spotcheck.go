package gbs

import (
	"fmt"
	"math"
	"strings"

	"github.com/gbs-evidence/gbs/internal/seed"
)

// spotCheckDraws is the number of draws at which a spot-check evaluates
// log p again when the caller passed it (Samples.LogP).
const spotCheckDraws = 32

// spotCheckTol is the relative tolerance of the spot-check: stored and
// recomputed log p may differ by spotCheckTol (1 + |log p|), room for a
// log density computed in float32 or in another summation order, far
// below any shift or misalignment that moves ln Z.
const spotCheckTol = 1e-5

// spotCheck evaluates log p again at a few draws chosen at random (on a
// random stream of its own, so that the estimate for a seed does not
// change) and compares with the stored values. A mismatch is an error:
// log p values that belong to other draws, or are shifted, move ln Z by
// as much, and no error bar can show it.
func (e *estimation) spotCheck() error {
	s := e.s
	if s.LogP == nil {
		return nil
	}
	nc, m, d := len(s.Chains), s.Draws(), s.Dim
	total := nc * m
	k := min(spotCheckDraws, total)
	rng := seed.New(e.cfg.Seed, streamSpotCheck)
	picked := rng.Perm(total)[:k]
	x := make([]float64, k*d)
	stored := make([]float64, k)
	for i, j := range picked {
		c, t := j/m, j%m
		copy(x[i*d:(i+1)*d], s.Chains[c][t*d:(t+1)*d])
		stored[i] = s.LogP[c][t]
	}
	got := make([]float64, k)
	if err := e.ev.eval(got, x); err != nil {
		return fmt.Errorf("%w (spot-checking the stored log p)", err)
	}
	var bad []string
	nbad := 0
	for i, j := range picked {
		diff := math.Abs(got[i] - stored[i])
		e.diag.SpotMaxDiff = math.Max(e.diag.SpotMaxDiff, diff)
		if !(diff <= spotCheckTol*(1+math.Abs(got[i]))) {
			nbad++
			if len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("chain %d draw %d: stored %.6g, log p(x) = %.6g", j/m, j%m, stored[i], got[i]))
			}
		}
	}
	e.diag.SpotChecked = k
	if nbad > 0 {
		return fmt.Errorf("gbs: the stored log p at the draws does not match the log density at %d of %d draws checked (%s): "+
			"the values belong to other draws (a reshape or transpose of the (draws, chains) axes that the samples did not get), "+
			"are shifted or scaled, or come from another density than the one passed (a different prior, temperature or "+
			"parameterization); pass log p in the same layout as the samples, computed by the same function, or leave it out",
			nbad, k, strings.Join(bad, "; "))
	}
	return nil
}
