package nuts

import (
	"errors"
	"fmt"

	"github.com/gbs-evidence/gbs/internal/mcmc"
)

// ESS returns the effective sample size of a scalar quantity observed along
// several chains (one series per chain, all of the same length), as Stan
// and ArviZ compute it (internal/mcmc): autocovariances, combined across chains with the
// between-chain variance (so chains stuck in different places lower the
// ESS), summed in pairs up to Geyer's initial positive sequence and made
// monotone (Geyer's initial monotone sequence estimator). The chains are
// taken as they are, neither split nor rank-normalized.
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

	if allEqual(chains) {
		return 0, errors.New("nuts: ESS of a constant quantity is undefined")
	}
	return mcmc.ESS(chains), nil
}
