package flow

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gbs-evidence/gbs/internal/memlimit"
)

// Layers, MaxLayers and Knots whose buffers cannot fit are refused before
// the fit allocates them; the largest int overflows the size product.
func TestFitHugeSettings(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, 300*2)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	_, known := memlimit.Available()
	for _, tc := range []struct {
		s    Settings
		name string
	}{
		{Settings{Layers: 1e12}, "Layers = 1000000000000 layers"},
		{Settings{MaxLayers: 1e12}, "MaxLayers = 1000000000000 layers"},
		{Settings{Knots: 1e12}, "Knots = 1000000000000 knots"},
		{Settings{Layers: math.MaxInt}, "Layers = 9223372036854775807 layers"},
		{Settings{Knots: math.MaxInt}, "Knots = 9223372036854775807 knots"},
	} {
		_, err := Fit(x, 2, nil, &tc.s)
		var me *memlimit.Error
		if known && !errors.As(err, &me) {
			t.Errorf("%+v: got %v, want a memory error", tc.s, err)
		}
		if err != nil && !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%+v: %v does not contain %q", tc.s, err, tc.name)
		}
	}
}
