// Command gbs-hier measures the evidence of a realistic hierarchical case: the
// non-centred normal hierarchical model with many groups and the
// group-level scale fixed (problems.HierarchicalNormal), whose ln Z is
// exact. The draws come from gbs.Pipeline (NUTS, then the evidence), or
// with -exact from the model's exact posterior sampler. It prints one JSON
// line per run: ln Z, the error, σ, log-density and gradient calls, wall
// and CPU time split into sampling and evidence, peak RSS, the load and
// the warnings.
//
//	go run ./cmd/gbs-hier -groups 500 -chains 8 -draws 2500 -warmup 500
//	go run ./cmd/gbs-hier -groups 500 -exact -n 20000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/pipeline"
	"github.com/gbs-evidence/gbs/problems"
)

// Run is one measurement.
type Run struct {
	Groups, Dim      int
	Seed             uint64
	Exact            bool // exact posterior draws instead of NUTS
	NoShrinkage      bool
	Draws            int // draws given to the evidence call
	LogZ, LogZErr    float64
	LogZExact        float64
	Sigmas           float64
	LogDensityCalls  int64
	GradCalls        int64
	SamplingWall     float64
	EvidenceWall     float64
	CPU              float64 // user + system seconds of the whole process
	MaxRSSMiB        float64
	Load             float64
	Shrunk           []bool
	ParetoKQ         float64
	ParetoKP         float64
	Diagnostics      string
	AnnealSteps      int      // rungs of the annealed bridge (0: not used)
	AnnealCalls      int64    // its log-density calls
	Warnings         []string `json:",omitempty"`
	TargetAccept     float64  `json:",omitempty"`
	DivergentOrRetry bool     `json:",omitempty"`
}

func main() {
	groups := flag.Int("groups", 500, "number of groups (the dimension is groups + 1)")
	seed := flag.Uint64("seed", 1, "seed of the data, the sampler and the evidence")
	chains := flag.Int("chains", 8, "NUTS chains")
	draws := flag.Int("draws", 2500, "NUTS draws kept per chain")
	warmup := flag.Int("warmup", 500, "NUTS warm-up iterations per chain")
	exact := flag.Bool("exact", false, "use n exact posterior draws instead of NUTS")
	n := flag.Int("n", 20000, "with -exact: number of draws")
	noShrink := flag.Bool("noshrink", false, "fit the flows without covariance shrinkage")
	flag.Parse()

	p := problems.HierarchicalNormal(*groups, 1)
	r := Run{Groups: *groups, Dim: p.Dim, Seed: *seed, Exact: *exact, NoShrinkage: *noShrink, LogZExact: p.LogZ}
	var shrunk []bool
	fs := &flow.Settings{}
	if *noShrink {
		fs.Shrinkage = flow.Off
	}
	fitFlow := gbs.FlowProposal(fs)
	evSet := gbs.Settings{Seed: *seed, Proposal: func(x []float64, d int, w []float64, s uint64) (gbs.Proposal, []string, error) {
		q, warns, err := fitFlow(x, d, w, s)
		if f, ok := q.(*flow.Flow); ok && err == nil {
			shrunk = append(shrunk, f.ShrunkCovariance())
		}
		return q, warns, err
	}}
	var res *gbs.Result
	if *exact {
		x := make([]float64, *n*p.Dim)
		p.Sample(x, rand.New(rand.NewPCG(*seed, 99)))
		t0 := time.Now()
		var err error
		res, err = gbs.Evidence(context.Background(), p.LogProbBatch, &gbs.Samples{Dim: p.Dim, Chains: [][]float64{x}, Kind: gbs.IndependentDraws}, &evSet)
		if err != nil {
			fail(err)
		}
		r.EvidenceWall = time.Since(t0).Seconds()
		r.Draws = *n
		r.LogDensityCalls = res.NCall
	} else {
		grad := func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }
		pr, err := pipeline.NUTS(context.Background(), grad, p.Dim, &pipeline.Settings{
			Sampler:  nuts.Settings{Chains: *chains, Warmup: *warmup, Draws: *draws, Seed: *seed},
			Evidence: evSet,
		})
		if err != nil {
			fail(err)
		}
		res = pr.Evidence
		r.Draws = *chains * *draws
		r.LogDensityCalls, r.GradCalls = pr.LogDensityCalls, pr.GradCalls
		r.SamplingWall, r.EvidenceWall = pr.SamplingTime.Seconds(), pr.EvidenceTime.Seconds()
		r.TargetAccept, r.DivergentOrRetry = pr.TargetAccept, pr.Retried
	}
	r.LogZ, r.LogZErr = res.LogZ, res.LogZErr
	r.Sigmas = (r.LogZ - r.LogZExact) / r.LogZErr
	r.Shrunk = shrunk
	r.ParetoKQ, r.ParetoKP = res.Diagnostics.ParetoKQ, res.Diagnostics.ParetoKP
	r.Diagnostics = res.Diagnostics.String()
	r.Warnings = res.Warnings()
	r.AnnealSteps, r.AnnealCalls = res.AnnealSteps, res.AnnealCalls
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		r.CPU = tv(ru.Utime) + tv(ru.Stime)
		r.MaxRSSMiB = float64(ru.Maxrss) / 1024
	}
	r.Load = loadAverage()
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fail(err)
	}
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gbs-hier:", err)
	os.Exit(1)
}
