package ensemble

import (
	"fmt"
	"math"
)

// burnThin returns the burn-in and thinning for a run of steps steps with
// per-walker log densities logp and coordinate autocorrelation times tau,
// keeping an explicit burn or thin (> 0), and warnings about the run.
//
// The automatic burn-in is s₀ + ⌈2 τmax⌉, at most steps/2, where s₀ is the
// first step at which the walker-averaged log density crosses its average
// over the second half of the run. The 2 τmax alone (emcee's rule of thumb)
// assumes a start that is already roughly in the typical set; from a small
// ball far from it the ensemble first has to travel and expand, which
// takes several τ (about 6 τ for the differential-evolution move on a
// 10-d Gaussian) and biases the second moments when left in. The crossing
// marks the end of that transient whether the start lies below the typical
// log density (far away) or above it (a tight ball at the mode), and is
// near zero for a start in equilibrium. The automatic thinning is
// max(1, ⌊τmax/2⌋): successive kept draws are then still correlated, but
// little information is discarded.
func burnThin(logp [][]float64, tau []float64, steps, burn, thin int) (int, int, []string) {
	var warn []string
	tauMax := 0.0
	finite := true
	for _, t := range tau {
		if math.IsInf(t, 0) || math.IsNaN(t) {
			finite = false
			continue
		}
		tauMax = max(tauMax, t)
	}
	if !finite {
		warn = append(warn, "autocorrelation time is undefined for a coordinate that did not move; automatic burn-in is Steps/2 and thinning 1")
	} else if float64(steps) < tauLengths*tauMax {
		warn = append(warn, fmt.Sprintf("Steps = %d is shorter than %d τ (τmax = %.3g): τ, burn-in and thinning are unreliable; run at least %d steps",
			steps, tauLengths, tauMax, int(math.Ceil(tauLengths*tauMax))))
	}

	if burn == 0 {
		s0, ok := equilibration(logp, steps)
		switch {
		case !ok:
			warn = append(warn, "the mean log density did not reach its level of the second half of the run within the first half: the run may not have converged")
			burn = steps / 2
		case !finite:
			burn = steps / 2
		default:
			burn = min(s0+int(math.Ceil(2*tauMax)), steps/2)
		}
	}
	if thin == 0 {
		thin = 1
		if finite {
			thin = max(1, int(math.Floor(tauMax/2)))
		}
	}
	return burn, min(thin, steps-burn), warn
}

// equilibration returns the first step in the first half of the run at
// which the log density averaged over walkers crosses its mean over the
// second half, and false if it does not.
func equilibration(logp [][]float64, steps int) (int, bool) {
	avg := make([]float64, steps)
	for _, lp := range logp {
		for s, v := range lp {
			avg[s] += v
		}
	}
	var level float64
	for _, v := range avg[steps/2:] {
		level += v
	}
	level /= float64(steps - steps/2)
	above := avg[0] >= level
	for s, v := range avg[:steps/2+1] {
		if (v >= level) != above {
			return s, true
		}
	}
	return 0, false
}
