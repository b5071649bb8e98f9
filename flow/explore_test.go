package flow

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func exploreRun(t *testing.T, name string, s Settings) {
	for _, tg := range []target{funnelTarget(16), bananaTarget(32, 1), cauchyTarget(48)} {
		if w := os.Getenv("FLOW_TARGET"); w != "" && !strings.Contains(w, tg.name) {
			continue
		}
		rng := rand.New(rand.NewPCG(1, 2))
		train := tg.sample(rng, 10000)
		test := tg.sample(rng, 10000)
		g := gaussianLogLik(train, test, tg.d)
		var ptrue float64
		for i := 0; i < 10000; i++ {
			ptrue += tg.logProb(test[i*tg.d:(i+1)*tg.d]) / 10000
		}
		start := time.Now()
		f, err := Fit(train, tg.d, nil, &s)
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(start)
		ll := flowLogLik(f, test)
		var hs []string
		for _, h := range f.heldOut {
			hs = append(hs, fmt.Sprintf("%.2f", h))
		}
		nd := 0
		for _, l := range f.layers {
			nd += l.k
		}
		var ks []string
		for _, l := range f.layers {
			ks = append(ks, fmt.Sprint(l.k))
		}
		t.Logf("active dirs per layer: %s", strings.Join(ks, " "))
		t.Logf("%s %-7s: L %2d dirs %4d time %6.2fs gauss %.2f flow %.2f KL %.3f | %s", name, tg.name, f.Layers(), nd, el.Seconds(), g, ll, ptrue-ll, strings.Join(hs, " "))
	}
}

func TestExplore(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	exploreRun(t, "maxsw ", Settings{Seed: 3})
	exploreRun(t, "maxent", Settings{Seed: 3, Rotation: MaxEntropy})
}

func TestExplore2D(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	tg := bananaTarget(2, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	train := tg.sample(rng, 10000)
	test := tg.sample(rng, 10000)
	var ptrue float64
	for i := 0; i < 10000; i++ {
		ptrue += tg.logProb(test[i*tg.d:(i+1)*tg.d]) / 10000
	}
	for _, s := range []Settings{{Seed: 3, MaxLayers: 60}, {Seed: 3, MaxLayers: 60, Damping: 1}, {Seed: 3, MaxLayers: 60, Rotation: RandomRotation}} {
		f, err := Fit(train, tg.d, nil, &s)
		if err != nil {
			t.Fatal(err)
		}
		ll := flowLogLik(f, test)
		var hs []string
		for i, h := range f.heldOut {
			if i%5 == 0 {
				hs = append(hs, fmt.Sprintf("%.2f", h))
			}
		}
		t.Logf("L %d KL %.3f true %.3f | %s", f.Layers(), ptrue-ll, ptrue, strings.Join(hs, " "))
	}
}

func TestExploreBananaD(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	for _, d := range []int{2, 4, 8, 16, 32} {
		tg := bananaTarget(d, 1)
		rng := rand.New(rand.NewPCG(1, 2))
		train := tg.sample(rng, 10000)
		test := tg.sample(rng, 10000)
		var ptrue float64
		for i := 0; i < 10000; i++ {
			ptrue += tg.logProb(test[i*tg.d:(i+1)*tg.d]) / 10000
		}
		s := Settings{Seed: 3, MaxLayers: 12}
		f, err := Fit(train, tg.d, nil, &s)
		if err != nil {
			t.Fatal(err)
		}
		ll := flowLogLik(f, test)
		var hs []string
		for _, h := range f.heldOut {
			hs = append(hs, fmt.Sprintf("%.2f", (ptrue-h)/float64(d/2)))
		}
		t.Logf("d %d L %d KL/pair %.3f | %s", d, f.Layers(), (ptrue-ll)/float64(d/2), strings.Join(hs, " "))
	}
}

func TestExploreBanana32(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	tg := bananaTarget(32, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	train := tg.sample(rng, 10000)
	test := tg.sample(rng, 10000)
	var ptrue float64
	for i := 0; i < 10000; i++ {
		ptrue += tg.logProb(test[i*tg.d:(i+1)*tg.d]) / 10000
	}
	run := func(name string, s Settings) {
		start := time.Now()
		f, err := Fit(train, tg.d, nil, &s)
		if err != nil {
			t.Fatal(err)
		}
		ll := flowLogLik(f, test)
		var hs []string
		for _, h := range f.heldOut {
			hs = append(hs, fmt.Sprintf("%.2f", (ptrue-h)/16))
		}
		t.Logf("%-12s L %d %.1fs KL/pair %.3f | %s", name, f.Layers(), time.Since(start).Seconds(), (ptrue-ll)/16, strings.Join(hs, " "))
	}
	run("default", Settings{Seed: 3})
	searchSubset = 8000
	run("sub8000", Settings{Seed: 3})
	searchSubset = 2048
	searchMaxSteps = 300
	run("steps300", Settings{Seed: 3})
	searchMaxSteps = 50
	run("K8", Settings{Seed: 3, Directions: 8, MaxLayers: 40})
	run("K16", Settings{Seed: 3, Directions: 16, MaxLayers: 30})
	run("damp1", Settings{Seed: 3, Damping: 1})
	run("damp.7", Settings{Seed: 3, Damping: 0.7})
	run("pca", Settings{Seed: 3, Whiten: WhitenPCA})
}

func TestExploreObjectives(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	for _, sub := range []int{8000} {
		searchSubset = sub
		for _, it := range []int{5} {
			searchMaxSteps = it
			coarseSubset = 1024
			warmStart = true
			exploreRun(t, fmt.Sprintf("warm sub%d it%d", sub, it), Settings{Seed: 3})
			warmStart = false
		}
		searchMaxSteps = defaultSearchMaxSteps
		coarseSubset = 0
	}
	searchSubset = defaultSearchSubset
	searchObjective = objSliced
}

func TestExploreGBS(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	if v := os.Getenv("FLOW_SUB"); v != "" {
		fmt.Sscan(v, &searchSubset)
	}
	truth := map[string]float64{"funnel": -0.0042, "banana": 0, "cauchy": 0}
	for _, tg := range []target{funnelTarget(16), bananaTarget(32, 1), cauchyTarget(48)} {
		if w := os.Getenv("FLOW_TARGET"); w != "" && !strings.Contains(w, tg.name) {
			continue
		}
		var errs []string
		var sumsq, sumsig float64
		reps := 4
		for rep := 0; rep < reps; rep++ {
			rng := rand.New(rand.NewPCG(uint64(rep), 7))
			train := tg.sample(rng, 10000)
			f, err := Fit(train, tg.d, nil, &Settings{Seed: uint64(rep)})
			if err != nil {
				t.Fatal(err)
			}
			lz, sig := gbsRun(tg, f, 10000, rng)
			e := lz - truth[tg.name]
			sumsq += e * e
			sumsig += sig
			errs = append(errs, fmt.Sprintf("%+.3f(%.3f)", e, sig))
		}
		t.Logf("%-7s rms err %.3f mean sigma %.3f | %s", tg.name, math.Sqrt(sumsq/float64(reps)), sumsig/float64(reps), strings.Join(errs, " "))
	}
}

func TestExploreTrace(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	searchTrace = func(e, a int, f float64) { t.Logf("evals %d accepted %d F %.4f", e, a, f) }
	defer func() { searchTrace = nil }()
	warmStart = true
	exploreRun(t, "trace", Settings{Seed: 3, MaxLayers: 12})
	warmStart = false
}

func TestExplorePurity(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	d := 32
	tg := bananaTarget(d, 1)
	rot := randomRotation(d, rand.New(rand.NewPCG(1, 99)))
	rng := rand.New(rand.NewPCG(1, 2))
	train := tg.sample(rng, 10000)
	for _, obj := range []objective{objSliced, objWeighted} {
		searchObjective = obj
		f, _ := Fit(train, d, nil, &Settings{Seed: 3, Layers: 1, Damping: 1})
		l := f.layers[0]
		// v = rot · whiteᵀ · a (y-space direction for each column)
		var pur []string
		var mean float64
		for c := 0; c < l.k; c++ {
			w := make([]float64, d)
			for j := 0; j < d; j++ {
				for i := 0; i < d; i++ {
					w[j] += f.wt.white[i*d+j] * l.a[i*l.k+c]
				}
			}
			v := make([]float64, d)
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					v[i] += rot[i*d+j] * w[j]
				}
			}
			var tot, best float64
			for p := 0; p < d; p += 2 {
				e := v[p]*v[p]*0.5 + v[p+1]*v[p+1]*2.5
				tot += e
				best = max(best, e)
			}
			mean += best / tot / float64(l.k)
			pur = append(pur, fmt.Sprintf("%.2f", best/tot))
		}
		t.Logf("obj %d: mean purity %.3f: %s", obj, mean, strings.Join(pur, " "))
	}
	searchObjective = objSliced
}

func TestExploreConv(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	var line []string
	searchStep = func(e int, f, ang float64) { line = append(line, fmt.Sprintf("%.4f(%.2f)", f, ang)) }
	searchTrace = func(e, a int, f float64) {
		t.Logf("%s", strings.Join(line, " "))
		line = nil
	}
	defer func() { searchTrace, searchStep = nil, nil }()
	searchSubset = 8000
	warmStart = true
	exploreRun(t, "conv", Settings{Seed: 3, MaxLayers: 4})
	warmStart = false
	searchSubset = defaultSearchSubset
}

func TestExploreBW(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	var mu sync.Mutex
	count := map[float64]int{}
	gain := map[float64]float64{}
	bwTrace = func(bw, g float64) { mu.Lock(); count[bw]++; gain[bw] += g; mu.Unlock() }
	defer func() { bwTrace = nil }()
	for _, tg := range []string{"funnel", "banana", "cauchy"} {
		os.Setenv("FLOW_TARGET", tg)
		clear(count)
		clear(gain)
		warmStart = true
		coarseSubset = 1024
		searchMaxSteps = 5
		searchSubset = 8000
		exploreRun(t, "bw", Settings{Seed: 3})
		t.Logf("%s: counts %v gains %v", tg, count, gain)
	}
	warmStart = false
	coarseSubset = 0
	searchMaxSteps = defaultSearchMaxSteps
	searchSubset = defaultSearchSubset
}

func TestExploreBWSets(t *testing.T) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	warmStart = true
	coarseSubset = 1024
	searchMaxSteps = 5
	searchSubset = 8000
	for _, set := range [][]float64{{1, 0.5, 0.25}, {1, 0.5, 0.25, 0.125}, {0.6, 0.3, 0.15}, {1, 0.35, 0.12}, {0.7, 0.25}} {
		candidateBandwidths = set
		exploreRun(t, fmt.Sprint(set), Settings{Seed: 3})
	}
	candidateBandwidths = []float64{1, 0.5, 0.25}
	warmStart = false
	coarseSubset = 0
	searchMaxSteps = defaultSearchMaxSteps
	searchSubset = defaultSearchSubset
}
