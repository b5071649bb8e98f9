package nuts

import (
	"context"
	"errors"
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
