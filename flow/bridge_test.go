package flow

import (
	"math"
	"math/rand/v2"
)

// bridgeLogZ solves the optimal bridge sampling equation (Meng & Wong
// 1996) in log space for ln Z of p given log p - log q on p-draws (lrp)
// and on q-draws (lrq), and returns the estimate with the relative-error
// estimate of Frühwirth-Schnatter (2004) for independent draws.
func bridgeLogZ(lrp, lrq []float64) (logZ, sigma float64) {
	np, nq := float64(len(lrp)), float64(len(lrq))
	sp, sq := np/(np+nq), nq/(np+nq)
	logZ = 0
	for it := 0; it < 1000; it++ {
		// Z = [1/nq Σ_q l/(sp l/Z + sq)] / [1/np Σ_p 1/(sp l/Z + sq)]
		num := logMeanExp(lrq, func(v float64) float64 { return v - logAddExp(math.Log(sp)+v-logZ, math.Log(sq)) })
		den := logMeanExp(lrp, func(v float64) float64 { return -logAddExp(math.Log(sp)+v-logZ, math.Log(sq)) })
		next := num - den
		if math.Abs(next-logZ) < 1e-12 {
			logZ = next
			break
		}
		logZ = next
	}
	// f1 = p'/(sp p' + sq q) on q-draws, f2 = q/(sp p' + sq q) on p-draws.
	f1 := make([]float64, len(lrq))
	for j, v := range lrq {
		f1[j] = math.Exp(v - logZ - logAddExp(math.Log(sp)+v-logZ, math.Log(sq)))
	}
	f2 := make([]float64, len(lrp))
	for i, v := range lrp {
		f2[i] = math.Exp(-logAddExp(math.Log(sp)+v-logZ, math.Log(sq)))
	}
	m1, v1 := meanVar(f1)
	m2, v2 := meanVar(f2)
	re2 := v1/(nq*m1*m1) + v2/(np*m2*m2)
	return logZ, math.Sqrt(re2)
}

func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

func logMeanExp(v []float64, f func(float64) float64) float64 {
	mx := math.Inf(-1)
	t := make([]float64, len(v))
	for i, x := range v {
		t[i] = f(x)
		mx = max(mx, t[i])
	}
	var s float64
	for _, x := range t {
		s += math.Exp(x - mx)
	}
	return mx + math.Log(s/float64(len(v)))
}

func meanVar(v []float64) (m, s float64) {
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, s / float64(len(v)-1)
}

// gbsRun fits a flow on nfit exact draws of tg, then bridges nb fresh
// p-draws with nb q-draws; it returns ln Z and its estimated error.
func gbsRun(tg target, f *Flow, nb int, rng *rand.Rand) (float64, float64) {
	d := tg.d
	xp := tg.sample(rng, nb)
	lqp := make([]float64, nb)
	f.LogProb(lqp, xp)
	lrp := make([]float64, nb)
	for i := range lrp {
		lrp[i] = tg.logProb(xp[i*d:(i+1)*d]) - lqp[i]
	}
	xq := make([]float64, nb*d)
	lqq := make([]float64, nb)
	f.Sample(xq, lqq, rng)
	lrq := make([]float64, nb)
	for j := range lrq {
		lrq[j] = tg.logProb(xq[j*d:(j+1)*d]) - lqq[j]
	}
	return bridgeLogZ(lrp, lrq)
}
