package gbs

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gbs-evidence/gbs/internal/memlimit"
)

// An n_q whose draws cannot fit is refused before anything is allocated,
// with an error that names n_q: 10^12 draws of dimension 3 need 72 TB,
// more than any machine this runs on; 2^62 overflows the size product.
func TestEvidenceHugeNQ(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	g := newGaussTarget(3, 0, rng)
	s := iidSamples(g.draws(200, rng), 3)
	for _, nq := range []int{1e12, 1 << 62, 1<<63 - 1} {
		for _, m := range []Method{Bridge, IS, Warp3} {
			calls := 0
			logp := func(dst, x []float64) error { calls++; return g.logp(dst, x) }
			_, err := Evidence(context.Background(), logp, s, &Settings{NQ: nq, Method: m})
			var me *memlimit.Error
			_, known := memlimit.Available()
			overflow := nq >= 1<<62 // 8 × n_q × (d + 6) overflows
			if (known || overflow) && !errors.As(err, &me) {
				t.Errorf("n_q = %d, %v: got %v, want a memory error", nq, m, err)
			}
			if err != nil && !strings.Contains(err.Error(), "n_q = ") {
				t.Errorf("n_q = %d, %v: error %v does not name n_q", nq, m, err)
			}
			if calls != 0 {
				t.Errorf("n_q = %d, %v: log p called %d times before the error", nq, m, calls)
			}
		}
	}
}

// The automatic rule's cap is the largest n_q that fits in the share of
// the available memory one allocation may take. The arithmetic is checked
// for fixed amounts: the memory available changes between two readings
// (19.7 GB needed against 0.8 × 24.7 GB failed once when another process
// freed memory in between).
func TestMemoryNQ(t *testing.T) {
	for _, avail := range []uint64{1 << 30, 24_700_000_000, 1 << 40} {
		for _, d := range []int{1, 6, 1000} {
			n := nqFitting(avail, d)
			per := float64(8 * valuesPerDraw(d, Bridge))
			limit := memlimit.Fraction * float64(avail)
			if n <= 0 || float64(n)*per > limit || float64(n+1)*per <= limit {
				t.Errorf("avail %d, d = %d: n_q cap %d; %d bytes per draw, limit %.0f bytes", avail, d, n, int(per), limit)
			}
		}
	}
	if _, ok := memlimit.Available(); ok && memoryNQ(6) <= 0 {
		t.Errorf("memoryNQ(6) = %d", memoryNQ(6))
	}
}
