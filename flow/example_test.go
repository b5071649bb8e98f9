package flow_test

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/gbs-evidence/gbs/flow"
)

// Fit a flow to draws of a 2-d banana, evaluate it and sample from it.
func Example() {
	// y1 ~ N(0, 1), y2 | y1 ~ N(y1², 0.3²).
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 5000
	x := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		a := rng.NormFloat64()
		x[2*i], x[2*i+1] = a, a*a+0.3*rng.NormFloat64()
	}
	f, err := flow.Fit(x, 2, nil, &flow.Settings{Seed: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("dimension:", f.Dim(), "warnings:", len(f.Warnings()))

	// log q on the ridge and off it, against the true log density.
	logp := func(y1, y2 float64) float64 {
		r := (y2 - y1*y1) / 0.3
		return -0.5*y1*y1 - 0.5*r*r - math.Log(2*math.Pi*0.3)
	}
	lq := make([]float64, 2)
	f.LogProb(lq, []float64{1, 1, 0, 0.2})
	for i, pt := range [][2]float64{{1, 1}, {0, 0.2}} {
		fmt.Printf("log q - log p at %v within 0.25: %v\n", pt, math.Abs(lq[i]-logp(pt[0], pt[1])) < 0.25)
	}

	// Draws of q come with their log density; their moments match.
	const m = 100000
	s := make([]float64, 2*m)
	ls := make([]float64, m)
	f.Sample(s, ls, rand.New(rand.NewPCG(4, 5)))
	var mean2 float64
	for i := 0; i < m; i++ {
		mean2 += s[2*i+1] / m
	}
	fmt.Printf("mean of y2 over draws of q: %.1f (exact 1)\n", mean2)

	// Output:
	// dimension: 2 warnings: 0
	// log q - log p at [1 1] within 0.25: true
	// log q - log p at [0 0.2] within 0.25: true
	// mean of y2 over draws of q: 1.0 (exact 1)
}
