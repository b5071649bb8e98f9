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

// GeyerTime returns the integrated autocorrelation time of the normalized
// autocorrelation function rho (rho[0] = 1, at least 4 lags) as Stan
// computes it: lags summed in pairs while the pair sums are positive
// (Geyer's initial positive sequence), the pair sums made non-increasing
// (initial monotone sequence), and the last pair's even lag kept as a bias
// correction for antithetic chains. The result may be below 1, even
// negative for strongly antithetic series; callers bound it.
func GeyerTime(rho []float64) float64 {
	n := len(rho)
	if n < 4 {
		panic("acf: GeyerTime needs at least 4 lags")
	}
	// r holds the lags accepted into the sum; the rest stay zero.
	r := make([]float64, n)
	rhoEven, rhoOdd := 1.0, rho[1]
	r[0], r[1] = rhoEven, rhoOdd
	// Stopping at n-4 keeps the last pair as the bias correction.
	t := 1
	for t < n-4 && rhoEven+rhoOdd > 0 {
		rhoEven, rhoOdd = rho[t+1], rho[t+2]
		if rhoEven+rhoOdd >= 0 {
			r[t+1], r[t+2] = rhoEven, rhoOdd
		}
		t += 2
	}
	maxT := t
	if rhoEven > 0 {
		r[maxT+1] = rhoEven
	}
	for t := 1; t <= maxT-3; t += 2 {
		if r[t+1]+r[t+2] > r[t-1]+r[t] {
			r[t+1] = (r[t-1] + r[t]) / 2
			r[t+2] = r[t+1]
		}
	}
	tau := -1 + r[maxT+1]
	for _, v := range r[:maxT] {
		tau += 2 * v
	}
	return tau
}
