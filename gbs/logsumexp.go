package gbs

import "math"

// logSumExp returns log Σ exp(v_i), exact for any finite range of v and
// -Inf when every v_i is -Inf or v is empty.
func logSumExp(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		if x > m {
			m = x
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// logMeanExp returns log((1/n) Σ exp(v_i)).
func logMeanExp(v []float64) float64 {
	return logSumExp(v) - math.Log(float64(len(v)))
}
