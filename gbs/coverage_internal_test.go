package gbs

import "testing"

// The one-point rule of the coverage check's edge statistic: the ring's
// false alarm (one point held 1429 of the 1435 steps beyond the range)
// rests on one point; steps spread over several points do not.
func TestOneHeldPoint(t *testing.T) {
	const total, neff = 137199, 2000.0 // chance's mean share: 68.6 steps
	for _, c := range []struct {
		held map[int32]int
		want bool
	}{
		{map[int32]int{1: 1429, 2: 3, 3: 2, 4: 1}, true},
		{map[int32]int{1: 1000, 2: 40, 3: 20, 4: 8}, true},  // 68 others: not above the share
		{map[int32]int{1: 1000, 2: 40, 3: 20, 4: 9}, false}, // 69 others
		{map[int32]int{1: 300, 2: 300, 3: 300, 4: 300}, false},
	} {
		if got := oneHeldPoint(c.held, total, neff); got != c.want {
			t.Errorf("oneHeldPoint(%v) = %v, want %v", c.held, got, c.want)
		}
	}
}
