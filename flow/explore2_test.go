package flow

import (
	"math/rand/v2"
	"os"
	"testing"
)

func TestExploreSW(t *testing.T) {
	for _, tg := range []target{cauchyTarget(48), bananaTarget(32, 1), funnelTarget(16)} {
		exploreSW(t, objSliced, tg)
	}
}

func exploreSW(t *testing.T, obj objective, tg target) {
	if os.Getenv("FLOW_EXPLORE") == "" {
		t.Skip()
	}
	t.Logf("objective %d %s", obj, tg.name)
	d := tg.d
	rng := rand.New(rand.NewPCG(1, 2))
	m := 2048
	x := tg.sample(rng, m)
	wt, _ := fitWhitening(x, m, d, nil, WhitenCholesky, 2)
	whitenAll(wt, x, m, d, 2)
	s := &swSearch{x: x, m: m, d: d, k: d, z: gaussianAtoms(m), threads: 2, obj: obj, spacing: 45, idxBits: 12}
	id := identity(d)
	fr := s.newFrame(id)
	s.evaluate(fr, true)
	t.Logf("F(identity) = %.4f", fr.f)
	for _, it := range []int{0, 10, 25, 50, 100, 200, 1000} {
		a := maxSlicedDirections(x, m, d, randomFrame(d, d, rand.New(rand.NewPCG(5, 5))), d, it, 2, obj)
		fr := s.newFrame(a)
		s.evaluate(fr, true)
		// alignment: mean over columns of max |a_jc|
		var al float64
		for c := 0; c < d; c++ {
			mx := 0.0
			for j := 0; j < d; j++ {
				mx = max(mx, a[j*d+c]*a[j*d+c])
			}
			al += mx / float64(d)
		}
		t.Logf("iters %4d F = %.4f  alignment %.3f", it, fr.f, al)
	}
	a := maxSlicedDirections(x, m, d, identity(d), d, 200, 2, obj)
	fr = s.newFrame(a)
	s.evaluate(fr, true)
	t.Logf("from identity: F = %.4f", fr.f)
}
