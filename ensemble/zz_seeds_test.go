package ensemble

import (
	"fmt"
	"testing"
)

func TestZZSeeds(t *testing.T) {
	for seed := uint64(100); seed < 120; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			checkGaussian(t, Stretch, 20000, seed)
			checkGaussian(t, DifferentialEvolution, 10000, seed)
			checkBanana(t, seed)
		})
	}
}
