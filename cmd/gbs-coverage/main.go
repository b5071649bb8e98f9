// Command gbs-coverage measures the evidence's coverage check:
// its false alarms on draws that cover p, its power on draws that miss a
// region of p, and its cost in log-density calls. It prints one JSON line
// per run and a summary table on stderr.
//
//	go run ./cmd/gbs-coverage -seeds 16 > coverage.jsonl
//
// Clean cases (the check must stay silent): exact draws of the funnel,
// banana and Cauchy problems; NUTS draws of the ring (gbs.Pipeline, which
// has no exact sampler); exact draws of held-out targets (a correlated
// Gaussian, two Student-t, a Gaussian mixture). Cases with missed mass
// (the check should warn): the funnel with its neck cut away (x1 < -1.5,
// 7% of the mass) and Student-t draws with the largest radii cut away.
// Optional: "funnel-nuts", NUTS draws of the funnel at the benchmark's
// budget, which under-visit the neck by a varying amount; "cauchy-cut15",
// the Cauchy mixture without its 15 % most extreme draws (missed mass);
// and the false alarms in high dimension, "gaussian-100", "gaussian-200",
// "student-t-100", "student-t-200" (20000 exact draws as 8 chains of the
// default kind, as a user hands them over).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/internal/provenance"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/pipeline"
	"github.com/gbs-evidence/gbs/problems"
)

// Run is one JSON line of output.
type Run struct {
	Case      string  `json:"case"`
	Clean     bool    `json:"clean"`
	Seed      uint64  `json:"seed"`
	Warned    bool    `json:"warned"`
	Noted     bool    `json:"noted"` // the finding went to Info: ln Z accounts for it
	KSWarned  bool    `json:"ks_warned"`
	KS        float64 `json:"ks"`
	KSLimit   float64 `json:"ks_limit"`
	Frac      float64 `json:"frac"`
	Limit     float64 `json:"limit"`
	Where     int     `json:"where"`
	Side      int     `json:"side"`
	Calls     int64   `json:"calls"`
	NQ        int     `json:"nq"`
	NCall     int64   `json:"ncall"`
	DLogZ     float64 `json:"dlogz"`
	LogZErr   float64 `json:"logzerr"`
	OtherWarn int     `json:"other_warnings"`
	Seconds   float64 `json:"seconds"`
	Error     string  `json:"error,omitempty"`
	// Commit and Date: the code and day of the run (internal/provenance).
	Commit string `json:"commit,omitempty"`
	Date   string `json:"date,omitempty"`
}

// source makes the draws of one run.
type source struct {
	name  string
	clean bool
	p     *problems.Problem
	// draws returns exact draws (nil to use NUTS through gbs.Pipeline).
	draws func(seed uint64) []float64
	// chains gives the exact draws as MCMC chains (the default kind of
	// draws, whose effective size is estimated), not as independent.
	chains bool
}

func main() {
	seeds := flag.Int("seeds", 16, "seeds per case (1..seeds)")
	first := flag.Int("first", 1, "first seed")
	n := flag.Int("n", 16000, "exact draws per run (as 8 chains of n/8, marked independent)")
	cases := flag.String("cases", "funnel,banana,cauchy,ring,gaussian,student-t,student-t-heavy,mixture,funnel-neckless,student-t-cut15,student-t-cut5",
		"comma-separated cases; also funnel-nuts, mixture-misweighted, cauchy-cut15, gaussian-100, gaussian-200, student-t-100, student-t-200")
	flag.BoolVar(&noScale, "no-scale", false, "the evidence's flow without the scale layer (flow.Settings.Scale = Off)")
	flag.Parse()
	srcs := map[string]source{}
	for _, s := range sources(*n) {
		srcs[s.name] = s
	}
	var runs []Run
	// The checkout as the runs start: the commit each line records.
	commit := provenance.Commit()
	enc := json.NewEncoder(os.Stdout)
	for _, c := range strings.Split(*cases, ",") {
		src, ok := srcs[c]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown case %q\n", c)
			os.Exit(2)
		}
		for seed := uint64(*first); seed < uint64(*first+*seeds); seed++ {
			r := run(src, seed)
			r.Commit, r.Date = commit, provenance.Date()
			runs = append(runs, r)
			_ = enc.Encode(r)
		}
	}
	summarize(runs)
}

func exact(p *problems.Problem, n int) func(uint64) []float64 {
	return func(seed uint64) []float64 {
		x := make([]float64, n*p.Dim)
		p.Sample(x, rand.New(rand.NewPCG(seed, 0xc0)))
		return x
	}
}

func sources(n int) []source {
	funnel := problems.Funnel()
	t6 := problems.StudentT(6, 4)
	t10 := problems.StudentT(10, 2)
	mix := problems.StandardMixture(4)
	gauss := problems.CorrelatedGaussian(10, problems.CorrelatedSeed, 0)
	return []source{
		{"funnel", true, funnel, exact(funnel, n), false},
		{"banana", true, problems.Banana(), exact(problems.Banana(), n), false},
		{"cauchy", true, problems.Cauchy(), exact(problems.Cauchy(), n), false},
		{"ring", true, problems.Ring(), nil, false},
		{"funnel-nuts", true, funnel, nil, false},
		{"gaussian", true, gauss, exact(gauss, n), false},
		{"student-t", true, t6, exact(t6, n), false},
		{"student-t-heavy", true, t10, exact(t10, n), false},
		{"mixture", true, mix, exact(mix, n), false},
		{"funnel-neckless", false, funnel, func(seed uint64) []float64 {
			return keep(funnel, n, seed, func(x []float64) bool { return x[0] >= -1.5 })
		}, false},
		{"student-t-cut15", false, t6, radiusCut(t6, n, 0.15), false},
		// StandardMixture's components (weights 0.3 and 0.7, widths 0.5
		// and 1) drawn in equal proportion: the range is p's, the
		// proportion is not.
		{"mixture-misweighted", false, mix, exact(problems.GaussianMixture(4, []float64{0.5, 0.5},
			[][]float64{{-1, -1, -1, -1}, {1, 1, 1, 1}}, []float64{0.5, 1}, 0), n), false},
		{"student-t-cut5", false, t6, radiusCut(t6, n, 0.05), false},
		// The Cauchy mixture without its 15 % most extreme draws (by
		// the largest |x_i| over the coordinates; each coordinate's
		// median is 0).
		{"cauchy-cut15", false, problems.Cauchy(), extremeCut(problems.Cauchy(), n, 0.15), false},
		// High dimension: 20000 exact draws given as 8 MCMC chains of
		// 2500, as a user hands them over by default.
		highDim("gaussian-100", problems.Gaussian(make([]float64, 100), nil, 0)),
		highDim("gaussian-200", problems.Gaussian(make([]float64, 200), nil, 0)),
		highDim("student-t-100", problems.StudentT(100, 5)),
		highDim("student-t-200", problems.StudentT(200, 5)),
	}
}

// highDim is a clean case of 20000 exact draws of p in high dimension,
// given as 8 chains of 2500 of the default kind (MCMCChains).
func highDim(name string, p *problems.Problem) source {
	return source{name: name, clean: true, p: p, draws: exact(p, 20000), chains: true}
}

// keep returns n exact draws of p that pass the filter.
func keep(p *problems.Problem, n int, seed uint64, ok func(x []float64) bool) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0xc0))
	x := make([]float64, 0, n*p.Dim)
	buf := make([]float64, p.Dim)
	for len(x) < n*p.Dim {
		p.Sample(buf, rng)
		if ok(buf) {
			x = append(x, buf...)
		}
	}
	return x
}

// radiusCut draws from p without the fraction cut of its mass at the
// largest radii (the tails cut away); the radius is p's (1-cut) quantile,
// from 10^5 reference draws.
func radiusCut(p *problems.Problem, n int, cut float64) func(uint64) []float64 {
	return quantileCut(p, n, cut, func(x []float64) float64 {
		var s float64
		for _, v := range x {
			s += v * v
		}
		return s
	})
}

// extremeCut draws from p without the fraction cut of its mass at the
// largest max_i |x_i| (p's (1-cut) quantile, from 10^5 reference draws).
func extremeCut(p *problems.Problem, n int, cut float64) func(uint64) []float64 {
	return quantileCut(p, n, cut, func(x []float64) float64 {
		var m float64
		for _, v := range x {
			m = math.Max(m, math.Abs(v))
		}
		return m
	})
}

// quantileCut draws from p without the fraction cut of its mass where
// stat is largest (above its (1-cut) quantile over 10^5 reference draws).
func quantileCut(p *problems.Problem, n int, cut float64, stat func([]float64) float64) func(uint64) []float64 {
	ref := make([]float64, 100000*p.Dim)
	p.Sample(ref, rand.New(rand.NewPCG(0, 0xc1)))
	vs := make([]float64, 100000)
	for i := range vs {
		vs[i] = stat(ref[i*p.Dim : (i+1)*p.Dim])
	}
	slices.Sort(vs)
	limit := vs[int((1-cut)*float64(len(vs)))]
	return func(seed uint64) []float64 {
		return keep(p, n, seed, func(x []float64) bool { return stat(x) < limit })
	}
}

// noScale removes the scale layer from the evidence's flow.
var noScale bool

// evidenceSettings are the evidence's settings for problem p.
func evidenceSettings(p *problems.Problem, seed uint64) gbs.Settings {
	s := gbs.Settings{Seed: seed, Lower: p.Lower, Upper: p.Upper}
	if noScale {
		s.Proposal = gbs.FlowProposal(&flow.Settings{Scale: flow.Off, Lower: p.Lower, Upper: p.Upper})
	}
	return s
}

func run(src source, seed uint64) Run {
	p := src.p
	r := Run{Case: src.name, Clean: src.clean, Seed: seed}
	start := time.Now()
	var res *gbs.Result
	var err error
	ctx := context.Background()
	if src.draws != nil {
		x := src.draws(seed)
		const chains = 8
		m := len(x) / p.Dim / chains
		s := &gbs.Samples{Dim: p.Dim, Kind: gbs.IndependentDraws}
		if src.chains {
			s.Kind = gbs.MCMCChains
		}
		for c := range chains {
			s.Chains = append(s.Chains, x[c*m*p.Dim:(c+1)*m*p.Dim])
		}
		set := evidenceSettings(p, seed)
		res, err = gbs.Evidence(ctx, p.LogProbBatch, s, &set)
	} else {
		// The benchmark's budget: 8 chains of 2500 iterations, a fifth
		// warm-up.
		set := &pipeline.Settings{Sampler: nuts.Settings{Chains: 8, Warmup: 500, Draws: 2000, Lower: p.Lower, Upper: p.Upper, Seed: seed}}
		if noScale {
			set.Evidence = evidenceSettings(p, seed)
		}
		var pr *pipeline.Result
		grad := func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }
		if pr, err = pipeline.NUTS(ctx, grad, p.Dim, set); err == nil {
			res = pr.Evidence
		}
	}
	r.Seconds = time.Since(start).Seconds()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	dg := res.Diagnostics
	r.Frac, r.Limit, r.Where, r.Side, r.Calls = dg.CoverageFrac, dg.CoverageLimit, dg.CoverageWhere, dg.CoverageSide, int64(dg.CoverageCalls)
	// JSON has no NaN: a test that did not run (too few effective
	// draws) is written as -1.
	r.KS, r.KSLimit = nanTo(dg.CoverageKS, -1), nanTo(dg.CoverageKSLimit, -1)
	r.NQ, r.NCall, r.DLogZ, r.LogZErr = res.NQ, res.NCall, res.LogZ-p.LogZ, res.LogZErr
	for _, f := range res.Findings {
		switch {
		case f.Check == gbs.CheckCoverage && !f.IsWarning():
			r.Noted = true
		case f.Check == gbs.CheckCoverage:
			r.Warned = true
		case f.Check == gbs.CheckCoverageKS:
			r.KSWarned = true
		case f.IsWarning():
			r.OtherWarn++
		}
	}
	return r
}

func summarize(runs []Run) {
	type agg struct {
		clean                  bool
		n, warned, errs, other int
		ksWarned               int
		ratios, ks, cost, dz   []float64
	}
	byCase := map[string]*agg{}
	var order []string
	for _, r := range runs {
		a := byCase[r.Case]
		if a == nil {
			a = &agg{clean: r.Clean}
			byCase[r.Case] = a
			order = append(order, r.Case)
		}
		a.n++
		if r.Error != "" {
			a.errs++
			continue
		}
		if r.Warned {
			a.warned++
		}
		if r.KSWarned {
			a.ksWarned++
		}
		if r.KSLimit > 0 { // the test ran
			a.ks = append(a.ks, r.KS/r.KSLimit)
		}
		if r.OtherWarn > 0 {
			a.other++
		}
		a.ratios = append(a.ratios, r.Frac/r.Limit)
		a.cost = append(a.cost, float64(r.Calls)/float64(r.NQ))
		a.dz = append(a.dz, r.DLogZ/r.LogZErr)
	}
	w := tabwriter.NewWriter(os.Stderr, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "case\tclean\truns\tedge warnings\tfrac/limit median\tmax\tKS warnings\tKS/limit median\tmax\tcalls/n_q\tmedian dlnZ/σ\tother warnings\terrors")
	for _, c := range order {
		a := byCase[c]
		fmt.Fprintf(w, "%s\t%v\t%d\t%d\t%.2g\t%.2g\t%d\t%.2g\t%.2g\t%.3f\t%+.1f\t%d\t%d\n", c, a.clean, a.n, a.warned,
			median(a.ratios), maxOf(a.ratios), a.ksWarned, median(a.ks), maxOf(a.ks), median(a.cost), median(a.dz), a.other, a.errs)
	}
	w.Flush()
}

func nanTo(v, alt float64) float64 {
	if math.IsNaN(v) {
		return alt
	}
	return v
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	return s[len(s)/2]
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}
