// Command gbs-demo estimates ln Z of a reference problem from exact
// posterior draws and prints it against the exact value.
//
//	go run ./cmd/gbs-demo -problem funnel -method bridge -n 20000
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/problems"
)

func main() {
	name := flag.String("problem", "funnel", "reference problem: funnel, banana or cauchy (those with exact draws)")
	method := flag.String("method", "bridge", "estimator: bridge, is, hm or warp3")
	n := flag.Int("n", 20000, "number of exact posterior draws (half fit the proposal)")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := run(*name, *method, *n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gbs-demo:", err)
		os.Exit(1)
	}
}

func run(name, method string, n int, seed uint64) error {
	p, err := problems.ByName(name)
	if err != nil {
		return err
	}
	if p.Sample == nil {
		return fmt.Errorf("problem %s has no exact sampler", name)
	}
	m, err := gbs.ParseMethod(method)
	if err != nil {
		return err
	}
	x := make([]float64, n*p.Dim)
	p.Sample(x, rand.New(rand.NewPCG(seed, 0)))
	samples := &gbs.Samples{Dim: p.Dim, Chains: [][]float64{x}, Kind: gbs.IndependentDraws}

	start := time.Now()
	res, err := gbs.Evidence(context.Background(), p.LogProbBatch, samples, &gbs.Settings{Method: m, Seed: seed})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	dz := res.LogZ - p.LogZ
	fmt.Printf("problem %s (d = %d), %d exact draws, method %s\n", p.Name, p.Dim, n, res.Method)
	fmt.Printf("ln Z      = %.4f ± %.4f\n", res.LogZ, res.LogZErr)
	fmt.Printf("exact     = %.4f\n", p.LogZ)
	fmt.Printf("error     = %+.4f (%.2f σ)\n", dz, math.Abs(dz)/res.LogZErr)
	fmt.Printf("n_p = %d, n_q = %d, log-density calls = %d, %.2f s\n", res.NP, res.NQ, res.NCall, elapsed.Seconds())
	for _, w := range res.Warnings() {
		fmt.Println("warning:", w)
	}
	for _, m := range res.Info() {
		fmt.Println("info:", m)
	}
	return nil
}
