// Command gbs-scale measures how the evidence call scales with the
// dimension d and the number of draws n: for each (d, n) it
// draws n exact, independent draws of a correlated Gaussian whose ln Z is
// known, runs gbs.Evidence with the default settings (flow proposal,
// cross-fitting bridge, adaptive n_q) and a batched log density, and
// prints wall time, CPU time, peak resident memory, the error in units of
// the reported σ, and where the time went (flow fits, proposal
// evaluation, log density, bridge).
//
//	go run ./cmd/gbs-scale -table                 # the issue's table
//	go run ./cmd/gbs-scale -d 64,128,256 -n 20000 -repeats 3
//	go run ./cmd/gbs-scale -fit < table.md        # exponents of n and d
//
// Every run is a child process of its own, so that its peak RSS and CPU
// time are its own (getrusage of the child). The breakdown of the time
// comes from a proposal fitter of this command's, with which the library
// runs the two cross-fitting passes one after the other; -timers=false
// measures the default proposal, passes at once, as users call it.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gbs-evidence/gbs/gbs"
)

// Run is one measurement, one JSON line with -json.
type Run struct {
	D, N        int
	Seed        uint64
	LogZ        float64
	LogZErr     float64
	Exact       float64
	Sigmas      float64 // (LogZ - Exact) / LogZErr
	NQ          int
	NCall       int64
	Layers      []int     // layers of each fitted flow
	CondLayers  []int     // of which conditional
	Draw        float64   // seconds drawing the exact draws (not in Wall)
	Evidence    float64   // seconds in gbs.Evidence
	Fit         float64   // seconds fitting flows
	Proposal    float64   // seconds in log q and sampling from q
	LogP        float64   // seconds in the log density
	Bridge      float64   // Evidence minus the above: bridge equation, τ, bookkeeping
	CPU         float64   // user+system seconds of the child (draws included)
	EvidenceCPU float64   // user+system seconds of the child in gbs.Evidence
	MaxRSSMiB   float64   // peak resident memory of the child
	Load        float64   // 1-minute load average at the end
	Shrunk      []bool    // whether each fitted flow's covariance is shrunk
	KLPQ        []float64 // KL(p‖q) of each fitted flow on fresh exact draws (-kl)
	KLQP        []float64 // KL(q‖p) on draws of q (-kl)
	ParetoKQ    float64
	ParetoKP    float64
	AnnealSteps int      // rungs of the annealed bridge (0: not used)
	AnnealCalls int64    // its log-density calls (in NCall)
	Warnings    []string `json:",omitempty"`
	Info        []string `json:",omitempty"`
	Error       string   `json:",omitempty"`
}

// Options passed on to the child processes.
var (
	noShrink   bool
	klDraws    int
	timers     bool
	annealMode gbs.Switch
	annealFlag *string
)

// issueTable is the (d, n) list of the scaling table, plus its
// d = 1000 target.
var issueTable = [][2]int{
	{16, 20000}, {16, 100000}, {16, 1000000},
	{64, 100000},
	{128, 20000},
	{256, 20000}, {256, 100000},
	{1000, 20000},
}

func main() {
	ds := flag.String("d", "16,64,256", "comma-separated dimensions")
	ns := flag.String("n", "20000", "comma-separated numbers of draws")
	repeats := flag.Int("repeats", 1, "runs per (d, n), seeds seed, seed+1, ...")
	seed := flag.Uint64("seed", 1, "seed of the first repeat (draws and evidence)")
	table := flag.Bool("table", false, "run issue 17's (d, n) table instead of -d × -n")
	jsonOut := flag.Bool("json", false, "print one JSON line per run instead of a table row")
	child := flag.String("child", "", "internal: run one measurement d,n,seed in this process")
	cpuprof := flag.String("cpuprofile", "", "with -child: write a CPU profile of gbs.Evidence")
	memprof := flag.String("memprofile", "", "with -child: write a heap profile after gbs.Evidence")
	flag.BoolVar(&noShrink, "noshrink", false, "fit the flows without covariance shrinkage (flow.Settings.Shrinkage = Off)")
	flag.IntVar(&klDraws, "kl", 0, "after each evidence call, estimate KL(p‖q) and KL(q‖p) of its flows on this many fresh draws")
	flag.BoolVar(&timers, "timers", true, "time the flow fits and q's methods through a proposal fitter of this command's (the library then runs the cross-fitting passes one after the other); -timers=false measures the default proposal as users call it")
	annealFlag = flag.String("anneal", "auto", "annealed bridge: auto, off or on (gbs.Settings.Anneal)")
	fit := flag.Bool("fit", false, "read a table printed by gbs-scale on stdin and fit CPU time and peak RSS as c n^a d^b")
	flag.Parse()

	switch *annealFlag {
	case "auto":
		annealMode = gbs.Auto
	case "off":
		annealMode = gbs.Off
	case "on":
		annealMode = gbs.On
	default:
		fail(fmt.Errorf("-anneal %q: want auto, off or on", *annealFlag))
	}
	if *fit {
		if err := fitExponents(os.Stdin, os.Stdout); err != nil {
			fail(err)
		}
		return
	}

	if *child != "" {
		var d, n int
		var s uint64
		if _, err := fmt.Sscanf(*child, "%d,%d,%d", &d, &n, &s); err != nil {
			fail(fmt.Errorf("-child %q: %v", *child, err))
		}
		var prof *os.File
		if *cpuprof != "" {
			f, err := os.Create(*cpuprof)
			if err != nil {
				fail(err)
			}
			prof = f
			// A profile of a run cut short (timeout -s INT) is still useful.
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, os.Interrupt)
			go func() {
				<-sig
				pprof.StopCPUProfile()
				f.Close()
				os.Exit(3)
			}()
		}
		r := measure(d, n, s, prof)
		if *memprof != "" {
			f, err := os.Create(*memprof)
			if err != nil {
				fail(err)
			}
			if err := pprof.WriteHeapProfile(f); err != nil {
				fail(err)
			}
			f.Close()
		}
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			fail(err)
		}
		return
	}

	var cases [][2]int
	if *table {
		cases = issueTable
	} else {
		dl, err := ints(*ds)
		if err != nil {
			fail(fmt.Errorf("-d: %v", err))
		}
		nl, err := ints(*ns)
		if err != nil {
			fail(fmt.Errorf("-n: %v", err))
		}
		for _, d := range dl {
			for _, n := range nl {
				cases = append(cases, [2]int{d, n})
			}
		}
	}
	if !*jsonOut {
		fmt.Println("| d | n | wall | CPU in Evidence (whole run) | peak RSS | ln Z − exact | σ | error/σ | n_q | layers (cond.) | fit | log q, q draws | log p | bridge | exact draws | load |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	}
	failed := false
	for _, c := range cases {
		for r := 0; r < *repeats; r++ {
			run, err := spawn(c[0], c[1], *seed+uint64(r))
			if err != nil {
				run = Run{D: c[0], N: c[1], Seed: *seed + uint64(r), Error: err.Error()}
				failed = true
			}
			if *jsonOut {
				json.NewEncoder(os.Stdout).Encode(run)
			} else {
				printRow(run)
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

// spawn runs one measurement in a child process and adds its CPU time
// and peak RSS.
func spawn(d, n int, seed uint64) (Run, error) {
	exe, err := os.Executable()
	if err != nil {
		return Run{}, err
	}
	cmd := exec.Command(exe, "-child", fmt.Sprintf("%d,%d,%d", d, n, seed), fmt.Sprintf("-noshrink=%t", noShrink), fmt.Sprintf("-kl=%d", klDraws), "-anneal="+*annealFlag, fmt.Sprintf("-timers=%t", timers))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return Run{}, fmt.Errorf("%v: %s", err, strings.TrimSpace(errb.String()))
	}
	var r Run
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return Run{}, fmt.Errorf("child output: %v", err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.CPU = tv(ru.Utime) + tv(ru.Stime)
		r.MaxRSSMiB = float64(ru.Maxrss) / 1024 // Linux: kilobytes
	}
	return r, nil
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func printRow(r Run) {
	if r.Error != "" {
		fmt.Printf("| %d | %s | failed: %s |\n", r.D, count(r.N), r.Error)
		return
	}
	var ls []string
	for i, l := range r.Layers {
		ls = append(ls, fmt.Sprintf("%d (%d)", l, r.CondLayers[i]))
	}
	fmt.Printf("| %d | %s | %.1f s | %.1f s (%.1f s) | %.0f MiB | %+.4f | %.4f | %+.2f | %d | %s | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %.1f |\n",
		r.D, count(r.N), r.Evidence, r.EvidenceCPU, r.CPU, r.MaxRSSMiB, r.LogZ-r.Exact, r.LogZErr, r.Sigmas, r.NQ,
		strings.Join(ls, ", "), r.Fit, r.Proposal, r.LogP, r.Bridge, r.Draw, r.Load)
}

// count writes n as 2·10^4 and the like.
func count(n int) string {
	e := 0
	m := n
	for m >= 10 && m%10 == 0 {
		m /= 10
		e++
	}
	switch {
	case e < 3:
		return strconv.Itoa(n)
	case m == 1:
		return fmt.Sprintf("10^%d", e)
	}
	return fmt.Sprintf("%d·10^%d", m, e)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if v < 1 {
			return nil, fmt.Errorf("%d is not positive", v)
		}
		out = append(out, v)
	}
	return out, nil
}

func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscanf(string(b), "%g", &l)
	return l
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gbs-scale:", err)
	os.Exit(1)
}
