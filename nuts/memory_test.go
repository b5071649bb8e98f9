package nuts

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gbs-evidence/gbs/internal/memlimit"
)

// Chains × Draws that cannot fit are refused before the chains start.
func TestSampleHugeDraws(t *testing.T) {
	calls := 0
	f := func(grad, x []float64) (float64, error) { calls++; return 0, nil }
	_, known := memlimit.Available()
	for _, draws := range []int{1e12, 1 << 62} {
		_, err := Sample(context.Background(), f, 3, &Settings{Draws: draws, Seed: 1})
		var me *memlimit.Error
		if (known || draws == 1<<62) && !errors.As(err, &me) {
			t.Errorf("Draws = %d: got %v, want a memory error", draws, err)
		}
		if err != nil && !strings.Contains(err.Error(), "Chains × Draws = 4 × ") {
			t.Errorf("Draws = %d: %v does not name Chains × Draws", draws, err)
		}
	}
	if calls != 0 {
		t.Errorf("log density called %d times", calls)
	}
}

// Annealing schedules and run counts that cannot fit are refused before
// any density is evaluated.
func TestAISHugeSizes(t *testing.T) {
	calls := 0
	f := func(grad, x []float64) (float64, error) { calls++; return 0, nil }
	prior := func(dst []float64, _ *rand.Rand) { clear(dst) }
	_, known := memlimit.Available()
	for _, tc := range []struct {
		s    AISSettings
		name string
	}{
		{AISSettings{Steps: 1e12}, "Steps = 1000000000000 temperatures for 4 pilot chains"},
		{AISSettings{Steps: 1 << 62}, "Steps = 4611686018427387904 temperatures"},
		{AISSettings{Chains: 1e12}, "Chains = 1000000000000 annealing runs"},
		{AISSettings{Chains: 1 << 62}, "Chains = 4611686018427387904 annealing runs"},
	} {
		_, err := AIS(context.Background(), f, f, prior, 3, &tc.s)
		var me *memlimit.Error
		huge := tc.s.Steps == 1<<62 || tc.s.Chains == 1<<62
		if (known || huge) && !errors.As(err, &me) {
			t.Errorf("%+v: got %v, want a memory error", tc.s, err)
		}
		if err != nil && !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%+v: %v does not name %q", tc.s, err, tc.name)
		}
	}
	if calls != 0 {
		t.Errorf("densities called %d times", calls)
	}
}
