package main

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/gbs"
	"github.com/gbs-evidence/gbs/nuts"
	"github.com/gbs-evidence/gbs/pipeline"
	"github.com/gbs-evidence/gbs/problems"
)

// runProblem runs every selected method's repeats on one problem.
func runProblem(ctx context.Context, name string, cfg *config, emit func(Run)) error {
	p, err := problems.ByName(name)
	if err != nil {
		return err
	}
	grad := func(g, x []float64) (float64, error) { return p.LogProbGrad(g, x), nil }
	n := max(cfg.repeatsGBS, cfg.repeats)
	for r := 0; r < n; r++ {
		seed := cfg.seed + uint64(r)
		base := Run{Problem: p.Name, Seed: seed, Exact: p.LogZ}
		fail := func(method string, err error) {
			run := base
			run.Method, run.Error = method, err.Error()
			run.LogZ, run.LogZErr = math.NaN(), math.NaN()
			emit(run)
		}
		wantFull := (cfg.methods["GBS"] && r < cfg.repeatsGBS) ||
			(r < cfg.repeats && (cfg.methods["GIS"] || cfg.methods["GHM"] || cfg.methods["WBS"] || cfg.methods["AIS"] || cfg.methods["RAIS"]))
		if !wantFull && !(cfg.methods["GBSL"] && r < cfg.repeatsGBS) {
			continue
		}
		// GBS is the pipeline as users run it (a second NUTS run at a
		// higher acceptance target after divergences); GIS, GHM, WBS and
		// the annealing budget reuse its draws.
		var pr *pipeline.Result
		if wantFull {
			set := nutsSettings(p, cfg.chains, cfg.iters, cfg.warmupFrac, seed)
			if cfg.wrongStarts && strings.HasPrefix(p.Name, "two-modes") {
				set.Init = problems.TwoModesWrongStarts(cfg.chains, p.Dim)
			}
			set.TargetAccept = cfg.targetAccept
			set.Threads = cfg.threads
			ev, gl := gbs.Settings{FErr: cfg.ferr}, cfg.globalSettings()
			if cfg.noScale {
				ev.Proposal = gbs.FlowProposal(&flow.Settings{Scale: flow.Off, Lower: p.Lower, Upper: p.Upper})
				gl.Flow = &flow.Settings{Scale: flow.Off}
			}
			pr, err = pipeline.NUTS(ctx, grad, p.Dim, &pipeline.Settings{Sampler: *set, Global: gl, Evidence: ev})
			if err != nil {
				fail("GBS", err)
				continue
			}
			if cfg.methods["GBS"] && r < cfg.repeatsGBS {
				run := pipelineRun(base, "GBS", pr)
				if strings.HasPrefix(p.Name, "two-modes") {
					w := problems.TwoModesMinorFraction(pr.Sampling.Draws, pr.Sampling.Dim)
					run.MinorWeight = &w
				}
				emit(run)
			}
		}
		evidence := func(method string, set gbs.Settings) {
			t0 := time.Now()
			set.Seed, set.Lower, set.Upper = seed, p.Lower, p.Upper
			draws := pr.Sampling
			s := &gbs.Samples{Dim: p.Dim, Chains: draws.Draws, LogP: draws.LogP, NCall: pr.GradCalls}
			res, err := gbs.Evidence(ctx, p.LogProbBatch, s, &set)
			if err != nil {
				fail(method, err)
				return
			}
			run := base
			run.Method, run.LogZ, run.LogZErr = method, res.LogZ, res.LogZErr
			run.Warnings, run.Info = res.Warnings(), res.Info()
			run.NCall, run.NGrad = res.NCall, pr.GradCalls
			run.Seconds = pr.SamplingTime.Seconds() + since(t0)
			emit(run)
		}
		if r < cfg.repeats {
			if cfg.methods["GIS"] {
				evidence("GIS", gbs.Settings{Method: gbs.IS})
			}
			if cfg.methods["GHM"] {
				evidence("GHM", gbs.Settings{Method: gbs.HM})
			}
			if cfg.methods["WBS"] {
				evidence("WBS", gbs.Settings{Method: gbs.Warp3})
			}
			if cfg.methods["AIS"] || cfg.methods["RAIS"] {
				runAnnealing(ctx, p, cfg, pr.Sampling, pr.GradCalls, seed, base, emit, fail)
			}
		}
		if cfg.methods["GBSL"] && r < cfg.repeatsGBS {
			light, err := pipeline.NUTS(ctx, grad, p.Dim, &pipeline.Settings{
				Sampler:  *nutsSettings(p, cfg.chains/2, cfg.iters/2, cfg.warmupFrac, seed),
				Global:   cfg.globalSettings(),
				Evidence: gbs.Settings{Proposal: gbs.FlowProposal(&flow.Settings{MaxLayers: lightLayers, Lower: p.Lower, Upper: p.Upper})},
			})
			if err != nil {
				fail("GBSL", err)
				continue
			}
			emit(pipelineRun(base, "GBSL", light))
		}
	}
	return nil
}

// pipelineRun is the output line of a pipeline run.
func pipelineRun(base Run, method string, pr *pipeline.Result) Run {
	run := base
	run.Method, run.LogZ, run.LogZErr = method, pr.Evidence.LogZ, pr.Evidence.LogZErr
	run.Warnings, run.Info = pr.Evidence.Warnings(), pr.Evidence.Info()
	run.Diagnostics = pr.Evidence.Diagnostics.String()
	run.NCall, run.NGrad = pr.LogDensityCalls, pr.GradCalls
	run.Seconds = (pr.SamplingTime + pr.EvidenceTime).Seconds()
	run.SamplingSeconds, run.EvidenceSeconds = pr.SamplingTime.Seconds(), pr.EvidenceTime.Seconds()
	if pr.Global {
		if a := pr.GlobalAcceptRate; !math.IsNaN(a) {
			run.GlobalAccept = &a
		}
		run.GlobalStopped = pr.Sampling.GlobalStopped
		var prop, acc int64
		for _, c := range pr.Sampling.Chains {
			prop += c.Global.WarmupProposed
			acc += c.Global.WarmupAccepted
			run.GlobalMoveCalls += c.Global.Calls
		}
		if prop > 0 {
			w := float64(acc) / float64(prop)
			run.GlobalWarmupAccept = &w
		}
	}
	run.RHatLogP = pr.Sampling.RHatLogP
	return run
}

// globalSettings is the pipeline's global-move setting from the flags.
func (cfg *config) globalSettings() pipeline.GlobalSettings {
	g := pipeline.GlobalSettings{StageIters: cfg.globalStageIters, Moves: cfg.globalMoves}
	switch cfg.global {
	case "on":
		g.Mode = gbs.On
	case "off":
		g.Mode = gbs.Off
	}
	return g
}

func nutsSettings(p *problems.Problem, chains, iters int, warmupFrac float64, seed uint64) *nuts.Settings {
	warm := int(math.Round(warmupFrac * float64(iters)))
	return &nuts.Settings{Chains: chains, Warmup: warm, Draws: iters - warm, Lower: p.Lower, Upper: p.Upper, Seed: seed}
}

// runAnnealing runs AIS and RAIS with about as many gradient calls as the
// NUTS sampling of the same seed (budget), from the flat prior box of the
// problem.
func runAnnealing(ctx context.Context, p *problems.Problem, cfg *config, draws *nuts.Result, budget int64, seed uint64, base Run, emit func(Run), fail func(string, error)) {
	if p.Lower == nil {
		return
	}
	logPriorValue := 0.0
	for k := range p.Lower {
		logPriorValue -= math.Log(p.Upper[k] - p.Lower[k])
	}
	inside := func(x []float64) bool {
		for k, v := range x {
			if !(v > p.Lower[k] && v < p.Upper[k]) {
				return false
			}
		}
		return true
	}
	logPrior := func(g, x []float64) (float64, error) {
		clear(g)
		if !inside(x) {
			return math.Inf(-1), nil
		}
		return logPriorValue, nil
	}
	logLike := func(g, x []float64) (float64, error) {
		v := p.LogProbGrad(g, x)
		return v - logPriorValue, nil
	}
	samplePrior := func(dst []float64, rng *rand.Rand) {
		for k := range dst {
			dst[k] = p.Lower[k] + (p.Upper[k]-p.Lower[k])*rng.Float64()
		}
	}
	// Leapfrog steps per NUTS transition in the posterior run set the
	// schedule length that matches its gradient budget.
	var leap float64
	var kept int
	for _, c := range draws.Chains {
		leap += float64(c.Leapfrogs)
	}
	for _, d := range draws.Draws {
		kept += len(d) / p.Dim
	}
	perTransition := math.Max(1, leap/float64(kept))
	const runs = 16
	steps := max(10, int(float64(budget)/(runs*perTransition)))
	var invMetric []float64
	for _, c := range draws.Chains {
		if invMetric == nil {
			invMetric = make([]float64, len(c.InvMetric))
		}
		for k, v := range c.InvMetric {
			invMetric[k] += v / float64(len(draws.Chains))
		}
	}
	set := &nuts.AISSettings{Steps: steps, Chains: runs, InvMetric: invMetric, Seed: seed}
	for _, m := range []string{"AIS", "RAIS"} {
		if !cfg.methods[m] {
			continue
		}
		t0 := time.Now()
		var res *nuts.AISResult
		var err error
		if m == "AIS" {
			res, err = nuts.AIS(ctx, logPrior, logLike, samplePrior, p.Dim, set)
		} else {
			starts := make([][]float64, runs)
			for i := range starts {
				c := i % len(draws.Draws)
				t := (i / len(draws.Draws)) * 97 % (len(draws.Draws[c]) / p.Dim)
				starts[i] = draws.Draw(c, t)
			}
			res, err = nuts.RAIS(ctx, logPrior, logLike, starts, p.Dim, set)
		}
		if err != nil {
			fail(m, err)
			continue
		}
		run := base
		run.Method, run.LogZ, run.LogZErr = m, res.LogZ, res.LogZErr
		run.NGrad, run.Seconds = res.GradCalls, since(t0)
		emit(run)
	}
}

// lightLayers caps GBSL's flow at about half of the flow's default layer cap (10).
const lightLayers = 5
