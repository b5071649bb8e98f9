package ensemble

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gbs-evidence/gbs/internal/memlimit"
)

// Walkers × Steps that cannot fit are refused before the first step.
func TestSampleHugeSteps(t *testing.T) {
	calls := 0
	f := func(dst, x []float64) error { calls++; return nil }
	_, known := memlimit.Available()
	for _, steps := range []int{1e12, 1 << 62} {
		_, err := Sample(context.Background(), f, 2, &Settings{Steps: steps, Seed: 1})
		var me *memlimit.Error
		if (known || steps == 1<<62) && !errors.As(err, &me) {
			t.Errorf("Steps = %d: got %v, want a memory error", steps, err)
		}
		if err != nil && !strings.Contains(err.Error(), "Walkers × Steps = 32 × ") {
			t.Errorf("Steps = %d: %v does not name Walkers × Steps", steps, err)
		}
	}
	if calls != 0 {
		t.Errorf("log density called %d times", calls)
	}
}
