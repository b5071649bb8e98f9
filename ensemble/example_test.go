package ensemble_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/gbs-evidence/gbs/ensemble"
)

// A correlated 2-d Gaussian with mean (1, -2), standard deviations (1, 3)
// and correlation 0.9, sampled without a gradient.
func Example() {
	const rho = 0.9
	var batches []int
	logp := func(dst, x []float64) error {
		// One call evaluates a whole half-ensemble: a costly density
		// would spread this loop over goroutines.
		batches = append(batches, len(dst))
		for i := range dst {
			u, v := x[2*i]-1, (x[2*i+1]+2)/3
			dst[i] = -(u*u - 2*rho*u*v + v*v) / (2 * (1 - rho*rho))
		}
		return nil
	}
	r, err := ensemble.Sample(context.Background(), logp, 2, &ensemble.Settings{
		Walkers:    32,
		Steps:      4000,
		InitCenter: []float64{0, 0},
		Seed:       1,
	})
	if err != nil {
		log.Fatal(err)
	}

	var n, m1, m2, s1, s2 float64
	for _, ch := range r.Chain {
		for i := 0; i < len(ch); i += 2 {
			n++
			m1 += ch[i]
			m2 += ch[i+1]
			s1 += ch[i] * ch[i]
			s2 += ch[i+1] * ch[i+1]
		}
	}
	m1, m2 = m1/n, m2/n
	fmt.Printf("batch size %d, %d calls\n", batches[0], len(batches))
	fmt.Printf("mean (%.0f, %.0f)\n", m1, m2)
	fmt.Printf("sd (%.0f, %.0f)\n", math.Sqrt(s1/n-m1*m1), math.Sqrt(s2/n-m2*m2))
	fmt.Println("enough steps:", len(r.Warnings) == 0)
	// Output:
	// batch size 16, 8002 calls
	// mean (1, -2)
	// sd (1, 3)
	// enough steps: true
}
