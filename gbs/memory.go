package gbs

import (
	"fmt"
	"math"

	"github.com/gbs-evidence/gbs/internal/memlimit"
)

// valuesPerDraw is the number of float64 values that Evidence holds per
// proposal draw of dimension d at once: the draw, log q, log p, the log
// weights (twice while they grow) and the bridge solver's work array;
// warp-III also holds the reflected draw and its log p.
func valuesPerDraw(d int, m Method) int {
	if m == Warp3 {
		return 2*d + 7
	}
	return d + 6
}

// checkMemory refuses, before anything is allocated, an n_q whose proposal
// draws cannot fit in memory, and samples too large to be copied into the
// halves of the split: Go cannot recover from running out of memory.
func checkMemory(s *Samples, cfg *Settings) error {
	d := s.Dim
	if cfg.NQ > 0 {
		what := fmt.Sprintf("n_q = %d proposal draws of dimension %d", cfg.NQ, d)
		if err := memlimit.Check(what, 8, cfg.NQ, valuesPerDraw(d, cfg.Method)); err != nil {
			return fmt.Errorf("gbs: %w: lower n_q (NQ), or leave it 0 for the automatic rule", err)
		}
	}
	what := fmt.Sprintf("copies of the samples (%d chains × %d draws of dimension %d)", len(s.Chains), s.Draws(), d)
	if err := memlimit.Check(what, 8, len(s.Chains), s.Draws(), d+1); err != nil {
		return fmt.Errorf("gbs: %w", err)
	}
	return nil
}

// memoryNQ is the largest n_q whose draws fit in the memory available
// (math.MaxInt if that cannot be told), for the cap of the automatic rule.
func memoryNQ(d int) int {
	avail, ok := memlimit.Available()
	if !ok {
		return math.MaxInt
	}
	return nqFitting(avail, d)
}

// nqFitting is the largest n_q whose draws of dimension d fit in
// memlimit.Fraction of avail bytes.
func nqFitting(avail uint64, d int) int {
	return int(memlimit.Fraction * float64(avail) / float64(8*valuesPerDraw(d, Bridge)))
}
