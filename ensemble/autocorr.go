package ensemble

import (
	"errors"
	"fmt"
	"math"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// IntegratedTime returns the integrated autocorrelation time
//
//	τ = 1 + 2 Σ_{k≥1} ρ(k)
//
// of a scalar quantity observed in one or more chains of equal length,
// series[w] being the values in chain w, with the estimator of emcee
// (Foreman-Mackey et al. 2013, after Goodman & Weare and Sokal;
// internal/mcmc holds it for gbs too):
//
//   - the normalized autocorrelation function ρ̂_w of each chain is
//     computed by FFT (zero-padded, so it is the usual biased estimator
//     with denominator n) and ρ̂ is the average over chains;
//   - τ̂(M) = 1 + 2 Σ_{k=1..M} ρ̂(k) is truncated at the smallest window
//     M ≥ c τ̂(M) (Sokal's automatic windowing; c = 0 selects 5).
//
// Averaging ρ̂ rather than τ̂ over chains lets short chains of an ensemble
// pool their information. Constant chains carry no information on ρ and
// are skipped; if all chains are constant the result is +Inf. If no window
// satisfies M ≥ c τ̂(M) the chains are too short and the estimate at the
// largest lag is returned; it then underestimates τ (emcee returns τ̂(0) = 1
// in this case, which is worse). The estimate is reliable only when the
// chains are at least about 50 τ long.
func IntegratedTime(series [][]float64, c float64) (float64, error) {
	if len(series) == 0 {
		return 0, errors.New("ensemble: IntegratedTime of no series")
	}
	n := len(series[0])
	if n < 2 {
		return 0, fmt.Errorf("ensemble: IntegratedTime of series of length %d, need at least 2", n)
	}
	if c == 0 {
		c = tauWindow
	}
	if !(c > 0) || math.IsInf(c, 1) {
		return 0, fmt.Errorf("ensemble: IntegratedTime window constant c = %v, need a finite c > 0", c)
	}
	for w, x := range series {
		if len(x) != n {
			return 0, fmt.Errorf("ensemble: IntegratedTime series %d has length %d, series 0 has %d", w, len(x), n)
		}
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("ensemble: IntegratedTime series %d holds %v", w, v)
			}
		}
	}
	x := make([]float64, 0, len(series)*n)
	for _, v := range series {
		x = append(x, v...)
	}
	tau, _ := mcmc.IntegratedTime(x, len(series), mcmc.TimeOptions{Window: c})
	return tau, nil
}

// coordinateTimes returns the autocorrelation time of each of the d
// coordinates of the walkers in chain (chain[w] row-major steps×d) over
// steps [start, end).
func coordinateTimes(chain [][]float64, d, start, end int, c float64) []float64 {
	n := end - start
	tau := make([]float64, d)
	if n < 2 {
		for i := range tau {
			tau[i] = math.Inf(1)
		}
		return tau
	}
	x := make([]float64, n*len(chain))
	for i := range d {
		for w, ch := range chain {
			for s := range n {
				x[w*n+s] = ch[(start+s)*d+i]
			}
		}
		tau[i], _ = mcmc.IntegratedTime(x, len(chain), mcmc.TimeOptions{Window: c})
	}
	return tau
}
