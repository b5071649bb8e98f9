package nuts

import (
	"errors"
	"fmt"
	"math"

	"github.com/gbs-evidence/gbs/internal/acf"
)

// ESS returns the effective sample size of a scalar quantity observed along
// several chains (one series per chain, all of the same length), as Stan
// computes it: autocovariances by FFT, combined across chains with the
// between-chain variance (so chains stuck in different places lower the
// ESS), summed in pairs up to Geyer's initial positive sequence and made
// monotone (Geyer's initial monotone sequence estimator).
//
// The Monte Carlo standard error of the mean of the quantity is
// sd/sqrt(ESS). ESS may exceed the number of draws for antithetic chains,
// as NUTS often produces; it is capped at n log10(n) for n draws in total.
func ESS(chains [][]float64) (float64, error) {
	m := len(chains)
	if m == 0 {
		return 0, errors.New("nuts: ESS of no chains")
	}
	n := len(chains[0])
	if n < 4 {
		return 0, fmt.Errorf("nuts: ESS needs at least 4 draws per chain, have %d", n)
	}
	for c, x := range chains {
		if len(x) != n {
			return 0, fmt.Errorf("nuts: ESS: chain %d has %d draws, chain 0 has %d", c, len(x), n)
		}
		for i, v := range x {
			if !isFinite(v) {
				return 0, fmt.Errorf("nuts: ESS: chain %d draw %d is %v", c, i, v)
			}
		}
	}

	// Σ_c acov_c(t), acov_c(t) = (1/n) Σ_i (x_i - x̄_c)(x_{i+t} - x̄_c).
	sums := acf.NewSums(n, n)
	chainMean := make([]float64, m)
	for c, x := range chains {
		for _, v := range x {
			chainMean[c] += v
		}
		chainMean[c] /= float64(n)
		sums.Add(x, chainMean[c], 1/float64(n), 0)
	}
	acovSum, _ := sums.Lags()
	meanVar := acovSum[0] * float64(n) / float64(n-1) / float64(m)
	varPlus := meanVar * float64(n-1) / float64(n)
	if m > 1 {
		varPlus += variance(chainMean)
	}
	if !(varPlus > 0) {
		return 0, errors.New("nuts: ESS of a constant quantity is undefined")
	}

	// rho(t) = 1 - (W - mean_c acov_c(t)) / var⁺ combines within- and
	// between-chain variation (Gelman et al., BDA3 eq. 11.7).
	rho := make([]float64, n)
	for t := range rho {
		rho[t] = 1 - (meanVar-acovSum[t]/float64(m))/varPlus
	}
	rho[0] = 1
	total := float64(m * n)
	tau := math.Max(acf.GeyerTime(rho), 1/math.Log10(total))
	return total / tau, nil
}

// variance is the unbiased sample variance.
func variance(x []float64) float64 {
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - mean) * (v - mean)
	}
	return s / float64(len(x)-1)
}
