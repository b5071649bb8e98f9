// Command reference evaluates the problems of package problems for
// another implementation to be compared with: Python's gbs.problems is a
// numpy re-implementation (it needs no compiled library), and
// tests/python/test_problems_go.py holds it to this one, point by point.
//
// It reads one JSON request per line from stdin,
//
//	{"name": "banana-8", "x": [[x11, ..., x1d], ...]}
//
// and writes one JSON line per request: the problem's dim, exact logz,
// prior box (lower, upper; null when unbounded), whether it has an exact
// sampler, log p and its gradient at each point, and the random
// parameters another implementation needs to build the same density (the
// banana's rotation, the correlated Gaussian's mean and covariance).
// Non-finite numbers are written as -Infinity, Infinity and NaN, which
// Python's json module reads.
//
//	go run ./problems/internal/reference < requests.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/gbs-evidence/gbs/problems"
)

type request struct {
	Name string      `json:"name"`
	X    [][]float64 `json:"x"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<30)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			fmt.Fprintln(os.Stderr, "reference:", err)
			os.Exit(2)
		}
		line, err := answer(r)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reference:", err)
			os.Exit(1)
		}
		fmt.Fprintln(out, line)
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "reference:", err)
		os.Exit(2)
	}
}

func answer(r request) (string, error) {
	p, err := problems.ByName(r.Name)
	if err != nil {
		return "", err
	}
	d := p.Dim
	logp := make([]float64, len(r.X))
	grad := make([][]float64, len(r.X))
	for i, x := range r.X {
		if len(x) != d {
			return "", fmt.Errorf("%s: point %d has %d coordinates, want %d", r.Name, i, len(x), d)
		}
		grad[i] = make([]float64, d)
		logp[i] = p.LogProbGrad(grad[i], x)
		if lp := p.LogProb(x); lp != logp[i] && !(math.IsNaN(lp) && math.IsNaN(logp[i])) {
			return "", fmt.Errorf("%s: LogProb %v and LogProbGrad %v differ at point %d", r.Name, lp, logp[i], i)
		}
	}
	fields := []string{
		kv("name", strconv.Quote(p.Name)),
		kv("dim", strconv.Itoa(d)),
		kv("logz", num(p.LogZ)),
		kv("lower", vec(p.Lower)),
		kv("upper", vec(p.Upper)),
		kv("has_sampler", strconv.FormatBool(p.Sample != nil)),
		kv("logp", vec(logp)),
		kv("grad", mat(grad)),
	}
	lower := strings.ToLower(strings.TrimSpace(r.Name))
	switch {
	case lower == "banana" || (strings.HasPrefix(lower, "banana-") && !strings.HasSuffix(lower, "-identity")):
		fields = append(fields, kv("rotation", vec(problems.BananaRotation(d, problems.BananaSeed))))
	case strings.HasPrefix(lower, "correlated-gaussian-"):
		mu, cov := problems.CorrelatedGaussianParams(d, problems.CorrelatedSeed)
		fields = append(fields, kv("mean", vec(mu)), kv("cov", vec(cov)))
	}
	return "{" + strings.Join(fields, ", ") + "}", nil
}

func kv(k, v string) string { return strconv.Quote(k) + ": " + v }

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func vec(v []float64) string {
	if v == nil {
		return "null"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = num(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func mat(m [][]float64) string {
	s := make([]string, len(m))
	for i, r := range m {
		s[i] = vec(r)
	}
	return "[" + strings.Join(s, ", ") + "]"
}
