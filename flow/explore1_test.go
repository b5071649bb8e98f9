package flow

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

type oneD struct {
	name string
	draw func(r *rand.Rand) float64
	logp func(x float64) float64
}

func oneDTargets() []oneD {
	c := cauchyTarget(1)
	return []oneD{
		{"gauss", func(r *rand.Rand) float64 { return r.NormFloat64() }, logPhi},
		{"cauchymix", func(r *rand.Rand) float64 { return c.sample(r, 1)[0] }, func(x float64) float64 { return c.logProb([]float64{x}) }},
		{"lognormal", func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) }, func(x float64) float64 {
			if x <= 0 {
				return math.Inf(-1)
			}
			return logPhi(math.Log(x)) - math.Log(x)
		}},
		{"student3", func(r *rand.Rand) float64 {
			z := r.NormFloat64()
			var ch float64
			for i := 0; i < 3; i++ {
				g := r.NormFloat64()
				ch += g * g
			}
			return z / math.Sqrt(ch/3)
		}, func(x float64) float64 {
			nu := 3.0
			lg1, _ := math.Lgamma((nu + 1) / 2)
			lg2, _ := math.Lgamma(nu / 2)
			return lg1 - lg2 - 0.5*math.Log(nu*math.Pi) - (nu+1)/2*math.Log1p(x*x/nu)
		}},
		{"bimodal", func(r *rand.Rand) float64 {
			if r.IntN(2) == 0 {
				return -2 + 0.5*r.NormFloat64()
			}
			return 2 + 0.5*r.NormFloat64()
		}, func(x float64) float64 {
			return math.Log(0.5*math.Exp(logPhi((x+2)/0.5))/0.5 + 0.5*math.Exp(logPhi((x-2)/0.5))/0.5)
		}},
	}
}

func TestExplore1D(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	for _, tg := range oneDTargets() {
		for _, n := range []int{1000, 8000} {
			for _, bw := range []float64{1, 0.5, 0.3, 0.15} {
				var kl [3]float64
				reps := 5
				for rep := 0; rep < reps; rep++ {
					rng := rand.New(rand.NewPCG(uint64(rep), 2))
					train := make([]float64, n)
					for i := range train {
						train[i] = tg.draw(rng)
					}
					test := make([]float64, 20000)
					var ptrue float64
					for i := range test {
						test[i] = tg.draw(rng)
						ptrue += tg.logp(test[i]) / float64(len(test))
					}
					for li, L := range []int{1, 2, 4} {
						f, err := Fit(train, 1, nil, &Settings{Seed: 3, Layers: L, Damping: 1, Bandwidth: bw})
						if err != nil {
							t.Fatal(err)
						}
						kl[li] += (ptrue - flowLogLik(f, test)) / float64(reps)
					}
				}
				t.Logf("%-10s n %5d bw %.2f: KL L1 %.4f L2 %.4f L4 %.4f", tg.name, n, bw, kl[0], kl[1], kl[2])
			}
		}
	}
}
