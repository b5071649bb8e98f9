package mcmc

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gbs-evidence/gbs/internal/acf"
)

// The folded ranks from one sort equal those of sorting |x - median|.
func TestFoldedRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	x := make([]float64, 1001)
	for i := range x {
		x[i] = math.Round(3 * rng.NormFloat64()) // many ties
	}
	order := sortedPairs(x)
	sorted := make([]float64, len(order))
	for i, p := range order {
		sorted[i] = p.v
	}
	med := Quantile(sorted, 0.5)
	got := normalScores(foldedPairs(order, med), rankScores(len(x)))
	folded := make([]float64, len(x))
	for i, v := range x {
		folded[i] = math.Abs(v - med)
	}
	want := RankNormal(folded)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("draw %d: folded score %v, want %v", i, got[i], want[i])
		}
	}
}

// The lag-by-lag autocovariance gives the ESS and autocorrelation times
// of the full FFT, for chains that end Geyer's sequence within a few lags
// and for chains that need the transform. The two sum the same products
// in different orders: each lag is off by a few log2(size) eps of the
// lag-0 value (see internal/acf), and the times, sums of a few hundred
// such lags at most, by far less than 1e-9 relative.
func TestDirectLagsMatchFFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, phi := range []float64{0, 0.5, 0.9, 0.99} {
		for _, n := range []int{5, 60, 3000} {
			chains := make([][]float64, 4)
			for c := range chains {
				chains[c] = make([]float64, n)
				x := rng.NormFloat64()
				for i := range chains[c] {
					x = phi*x + math.Sqrt(1-phi*phi)*rng.NormFloat64()
					chains[c][i] = x + 0.01*float64(c)
				}
			}
			got, w, tauW := splitRHatESS(chains)
			// The reference: every lag by FFT.
			means := make([]float64, len(chains))
			var b float64
			for c, ch := range chains {
				means[c], _ = MeanVar(ch)
			}
			_, vm := MeanVar(means)
			b = float64(n) * vm * 4 / 3
			varPlus := float64(n-1)/float64(n)*w + b/float64(n)
			centered := make([][]float64, len(chains))
			for c, ch := range chains {
				centered[c] = make([]float64, n)
				for i, v := range ch {
					centered[c][i] = v - means[c]
				}
			}
			acov := meanAutocov(centered)
			floor := 1 / math.Log10(float64(4*n))
			tau, _ := acf.GeyerTime(autocorr(acov, w, varPlus, false), n)
			wantTauW, _ := acf.GeyerTime(autocorr(acov, w, varPlus, true), n)
			wantESS := float64(4*n) / math.Max(tau, floor)
			wantTauW = math.Max(wantTauW, floor)
			if math.Abs(got.ess-wantESS) > 1e-9*wantESS || math.Abs(tauW-wantTauW) > 1e-9*wantTauW {
				t.Errorf("phi %v n %d: ESS %v, tau %v; by FFT %v, %v", phi, n, got.ess, tauW, wantESS, wantTauW)
			}
		}
	}
}

// The FFT sums must equal the autocovariances computed lag by lag.
func TestChainAutocovDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const nc, m = 5, 37
	x := make([]float64, nc*m)
	for i := range x {
		x[i] = rng.NormFloat64() + float64(i/m) // chains with different means
	}
	got := chainAutocov(x, nc, m, true)
	var all float64
	for _, v := range x {
		all += v
	}
	all /= float64(len(x))
	for lag := 0; lag < m; lag++ {
		var rho, glob float64
		for c := 0; c < nc; c++ {
			ch := x[c*m : (c+1)*m]
			var mu, c0, ct, gt float64
			for _, v := range ch {
				mu += v
			}
			mu /= m
			for i := range ch {
				c0 += (ch[i] - mu) * (ch[i] - mu)
				if i+lag < m {
					ct += (ch[i] - mu) * (ch[i+lag] - mu)
					gt += (ch[i] - all) * (ch[i+lag] - all)
				}
			}
			rho += ct / c0
			glob += gt
		}
		if math.Abs(got.rho[lag]-rho) > 1e-9 || math.Abs(got.global[lag]-glob) > 1e-9 {
			t.Fatalf("lag %d: rho %v, global %v; want %v, %v", lag, got.rho[lag], got.global[lag], rho, glob)
		}
	}
}

// BenchmarkIntegratedTime estimates tau on 10^6 draws in 8 chains.
func BenchmarkIntegratedTime(b *testing.B) {
	const n, rho = 1000000, 0.9
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, n)
	for i := 1; i < n; i++ {
		x[i] = rho*x[i-1] + math.Sqrt(1-rho*rho)*rng.NormFloat64()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		IntegratedTime(x, 8, TimeOptions{Pooled: true})
	}
}
