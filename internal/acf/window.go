package acf

// SokalTime returns the integrated autocorrelation time
// τ(M) = 1 + 2 Σ_{t=1..M} ρ(t) of the normalized autocorrelation function
// rho (rho[0] = 1) at Sokal's automatic window: the smallest M with
// M >= c τ(M) (Sokal 1989; emcee uses c = 5). ok is false when no lag in
// rho satisfies that; τ is then the sum over all of rho, an underestimate.
func SokalTime(rho []float64, c float64) (tau float64, ok bool) {
	tau = 1
	for t := 1; t < len(rho); t++ {
		tau += 2 * rho[t]
		if float64(t) >= c*tau {
			return tau, true
		}
	}
	return tau, false
}

// GeyerTime returns the integrated autocorrelation time of a series of n
// draws from the first lags of its normalized autocorrelation function
// rho (rho[0] = 1, 2 <= len(rho) <= n), as ArviZ computes it for the
// effective sample size (Vehtari et al. 2021; Geyer 1992): lags summed in
// pairs while the pair sums are positive (Geyer's initial positive
// sequence), the pair sums made non-increasing (initial monotone
// sequence), and the even lag of the first negative pair added when it is
// positive (a bias correction for antithetic chains).
//
// done is false when the sequence needs lags beyond len(rho): the caller
// computes more lags and calls again. With len(rho) = n it is always true.
// The result may be below 1, even negative for strongly antithetic
// series; callers bound it.
func GeyerTime(rho []float64, n int) (tau float64, done bool) {
	if len(rho) < 2 || len(rho) > n {
		panic("acf: GeyerTime needs 2 <= len(rho) <= n")
	}
	// r holds the lags accepted into the sum; the rest stay zero.
	r := make([]float64, len(rho))
	even, odd := 1.0, rho[1]
	r[0], r[1] = even, odd
	t := 1
	for t < n-3 && even+odd > 0 {
		if t+2 >= len(rho) {
			return 0, false
		}
		even, odd = rho[t+1], rho[t+2]
		if even+odd >= 0 {
			r[t+1], r[t+2] = even, odd
		}
		t += 2
	}
	maxT := t - 2
	if even > 0 {
		r[maxT+1] = even
	}
	for t := 1; t <= maxT-2; t += 2 {
		if r[t+1]+r[t+2] > r[t-1]+r[t] {
			r[t+1] = (r[t-1] + r[t]) / 2
			r[t+2] = r[t+1]
		}
	}
	tau = -1 + r[maxT+1]
	for _, v := range r[:maxT+1] {
		tau += 2 * v
	}
	return tau, true
}
