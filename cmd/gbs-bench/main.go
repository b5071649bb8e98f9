// Command gbs-bench reproduces the comparison of Jia & Seljak (2019) on
// the four reference problems: for each problem it runs R repeats of each
// method from different seeds and prints one JSON line per run.
//
//	go run ./cmd/gbs-bench -problems funnel,banana -methods GBS,WBS -repeats 4 > runs.jsonl
//
// Methods: GBS (NUTS, then Gaussianized bridge sampling), GBSL (half the
// chains, iterations and flow layers), GIS and GHM (the flow with
// importance sampling and the harmonic mean), WBS (warp-III bridge
// sampling), AIS and RAIS (annealed importance sampling forward and
// reverse, at about GBS's gradient-call count). GBS and GBSL are
// gbs.Pipeline as users run it (NUTS at its default acceptance target, a
// second run at a higher one after divergences, then the evidence); GIS,
// GHM and WBS of the same seed reuse GBS's draws, and their times include
// its sampling.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/gbs-evidence/gbs/internal/provenance"
)

// Run is one JSON line of output.
type Run struct {
	Problem string  `json:"problem"`
	Method  string  `json:"method"`
	Seed    uint64  `json:"seed"`
	LogZ    float64 `json:"logz"`
	LogZErr float64 `json:"logzerr"`
	Exact   float64 `json:"exact"`
	NCall   int64   `json:"ncall"`
	NGrad   int64   `json:"ngrad"`
	Seconds float64 `json:"seconds"`
	// SamplingSeconds and EvidenceSeconds split Seconds between the
	// pipeline's two stages (GBS and GBSL only).
	SamplingSeconds float64 `json:"sampling_seconds,omitempty"`
	EvidenceSeconds float64 `json:"evidence_seconds,omitempty"`
	// GlobalAccept is the acceptance rate of the sampler's global moves
	// (GBS with global moves only).
	GlobalAccept *float64 `json:"global_accept,omitempty"`
	// GlobalWarmupAccept is that of the global moves of the warm-up
	// stages (from the flow fitted after the first stage), and
	// GlobalMoveCalls the log-density calls all global moves made.
	GlobalWarmupAccept *float64 `json:"global_warmup_accept,omitempty"`
	// GlobalStopped is the warm-up stage after which the global moves
	// stopped for want of acceptance (0: they ran to the end).
	GlobalStopped   int   `json:"global_stopped,omitempty"`
	GlobalMoveCalls int64 `json:"global_move_calls,omitempty"`
	// MinorWeight is the fraction of the draws in the minor mode (two-modes
	// problems), RHatLogP the sampler's R-hat of log p across chains.
	MinorWeight *float64 `json:"minor_weight,omitempty"`
	RHatLogP    float64  `json:"rhat_logp,omitempty"`
	Error       string   `json:"error,omitempty"`
	// Warnings are the evidence result's warnings (diagnostics included).
	Warnings []string `json:"warnings,omitempty"`
	// Diagnostics is the evidence result's one-line diagnostics summary.
	Diagnostics string `json:"diagnostics,omitempty"`
	// Info are the evidence result's notes that are not warnings (a NUTS
	// retry that worked, draws piled against an undeclared boundary).
	Info []string `json:"info,omitempty"`
	// Commit and Date say which code made the run and when
	// (internal/provenance): bench/report.py prints them with its tables.
	Commit string `json:"commit,omitempty"`
	Date   string `json:"date,omitempty"`
}

func main() {
	var cfg config
	probs := flag.String("problems", "funnel,banana,cauchy,ring", "comma-separated problems")
	methods := flag.String("methods", "GBS,GBSL,GIS,GHM,WBS,AIS,RAIS", "comma-separated methods")
	flag.IntVar(&cfg.repeatsGBS, "repeats-gbs", 64, "repeats of GBS and GBSL")
	flag.IntVar(&cfg.repeats, "repeats", 16, "repeats of the other methods")
	flag.Uint64Var(&cfg.seed, "seed", 1000, "seed of the first repeat; repeat r uses seed+r")
	flag.IntVar(&cfg.chains, "chains", 8, "NUTS chains for GBS")
	flag.IntVar(&cfg.iters, "iters", 2500, "NUTS iterations per chain for GBS, warm-up included")
	flag.Float64Var(&cfg.warmupFrac, "warmup", 0.2, "fraction of the iterations spent on warm-up")
	flag.IntVar(&cfg.threads, "threads", 0, "GBS: goroutines running NUTS chains (nuts.Settings.Threads; 0: the default)")
	flag.StringVar(&cfg.global, "global", "default", "global moves from the flow in GBS's sampler: default, on or off")
	flag.IntVar(&cfg.globalStageIters, "global-stage-iters", 0, "iterations per warm-up stage of global moves (0: the default)")
	flag.IntVar(&cfg.globalMoves, "global-moves", 0, "global moves per NUTS transition (0: the default)")
	flag.BoolVar(&cfg.wrongStarts, "wrong-starts", false, "two-modes problems: start all GBS chains but the last in the minor mode (the wrong proportions)")
	flag.BoolVar(&cfg.noScale, "no-scale", false, "GBS: the flows (the evidence's and the global moves') without the scale layer (flow.Settings.Scale = Off)")
	flag.Float64Var(&cfg.targetAccept, "target-accept", 0, "GBS: NUTS acceptance target of the first run (0: the pipeline's default)")
	flag.Float64Var(&cfg.ferr, "ferr", 0, "GBS: the evidence's FErr, the q-side share of the squared error the adaptive n_q aims at (0: the default)")
	out := flag.String("o", "-", "output file for the JSON lines (- for stdout)")
	cpuprof := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()

	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gbs-bench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "gbs-bench:", err)
			os.Exit(1)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}

	w := io.Writer(os.Stdout)
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gbs-bench:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	cfg.methods = map[string]bool{}
	for _, m := range strings.Split(*methods, ",") {
		m = strings.ToUpper(strings.TrimSpace(m))
		if !knownMethods[m] {
			fmt.Fprintf(os.Stderr, "gbs-bench: unknown method %q\n", m)
			os.Exit(2)
		}
		cfg.methods[m] = true
	}
	switch cfg.global {
	case "default", "on", "off":
	default:
		fmt.Fprintf(os.Stderr, "gbs-bench: -global %q, want default, on or off\n", cfg.global)
		os.Exit(2)
	}
	// The checkout as the runs start: the commit each line records.
	commit := provenance.Commit()
	enc := json.NewEncoder(w)
	ctx := context.Background()
	for _, name := range strings.Split(*probs, ",") {
		err := runProblem(ctx, strings.TrimSpace(name), &cfg, func(r Run) {
			r.Commit, r.Date = commit, provenance.Date()
			if err := enc.Encode(r); err != nil {
				fmt.Fprintln(os.Stderr, "gbs-bench:", err)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "%-7s %-5s seed %d: ln Z = %.4f ± %.4f (exact %.4f) %6.1f s %s\n",
				r.Problem, r.Method, r.Seed, r.LogZ, r.LogZErr, r.Exact, r.Seconds, r.Error)
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "gbs-bench:", err)
			os.Exit(1)
		}
	}
}

var knownMethods = map[string]bool{"GBS": true, "GBSL": true, "GIS": true, "GHM": true, "WBS": true, "AIS": true, "RAIS": true}

type config struct {
	methods       map[string]bool
	repeatsGBS    int
	repeats       int
	seed          uint64
	chains, iters int
	warmupFrac    float64
	threads       int

	global                        string
	globalStageIters, globalMoves int
	wrongStarts                   bool

	// targetAccept is GBS's NUTS acceptance target (0: the pipeline's
	// default, with its retry), ferr the evidence's FErr (0: default).
	targetAccept, ferr float64
	// noScale removes the flows' scale layer (flow.Settings.Scale = Off).
	noScale bool
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }
