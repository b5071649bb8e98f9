package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// fitExponents reads the markdown table that gbs-scale printed and fits
// log y = c + a log n + b log d by least squares, for y the CPU time of
// the evidence call and the peak RSS, and prints a and b.
func fitExponents(r io.Reader, w io.Writer) error {
	var xs [][3]float64
	var cpu, rss []float64
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) < 7 || strings.Contains(f[1], "d") || strings.Contains(f[1], "-") {
			continue
		}
		d, err := strconv.Atoi(strings.TrimSpace(f[1]))
		if err != nil {
			continue
		}
		n, err := parseCount(strings.TrimSpace(f[2]))
		if err != nil {
			return err
		}
		var c, m float64
		if _, err := fmt.Sscanf(strings.TrimSpace(f[4]), "%g s", &c); err != nil {
			return fmt.Errorf("CPU column %q: %v", f[4], err)
		}
		if _, err := fmt.Sscanf(strings.TrimSpace(f[5]), "%g MiB", &m); err != nil {
			return fmt.Errorf("RSS column %q: %v", f[5], err)
		}
		xs = append(xs, [3]float64{1, math.Log(float64(n)), math.Log(float64(d))})
		cpu = append(cpu, math.Log(c))
		rss = append(rss, math.Log(m))
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(xs) < 4 {
		return fmt.Errorf("%d rows: need at least 4 to fit 3 coefficients", len(xs))
	}
	a := mat.NewDense(len(xs), 3, nil)
	for i, x := range xs {
		a.SetRow(i, x[:])
	}
	for _, y := range []struct {
		name string
		v    []float64
	}{{"CPU time of the evidence call", cpu}, {"peak RSS", rss}} {
		var beta mat.VecDense
		if err := beta.SolveVec(a, mat.NewVecDense(len(y.v), y.v)); err != nil {
			return err
		}
		var fitted mat.VecDense
		fitted.MulVec(a, &beta)
		var ss float64
		for i, v := range y.v {
			e := v - fitted.AtVec(i)
			ss += e * e
		}
		fmt.Fprintf(w, "%s ∝ n^%.2f d^%.2f (%d rows, rms residual %.0f %%)\n", y.name, beta.AtVec(1), beta.AtVec(2), len(y.v), 100*(math.Exp(math.Sqrt(ss/float64(len(y.v))))-1))
	}
	return nil
}

// parseCount reads n as count writes it (20000, 2·10^4, 10^5).
func parseCount(s string) (int, error) {
	m, e := 1, 0
	switch {
	case strings.Contains(s, "·10^"):
		p := strings.SplitN(s, "·10^", 2)
		var err error
		if m, err = strconv.Atoi(p[0]); err != nil {
			return 0, err
		}
		if e, err = strconv.Atoi(p[1]); err != nil {
			return 0, err
		}
	case strings.HasPrefix(s, "10^"):
		var err error
		if e, err = strconv.Atoi(s[3:]); err != nil {
			return 0, err
		}
	default:
		return strconv.Atoi(s)
	}
	for ; e > 0; e-- {
		m *= 10
	}
	return m, nil
}
